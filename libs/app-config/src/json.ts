// JSON helpers for configuration files: a parse that reports where it failed (line and column, never a
// stack trace) and a deterministic writer (sorted keys, 2-space indent, trailing newline).

export type JsonObject = { [key: string]: unknown };

export type ParseResult = { ok: true; value: unknown } | { ok: false; message: string };

const decoder = new TextDecoder('utf-8', { fatal: false });
const encoder = new TextEncoder();

export function bytesToText(bytes: Uint8Array): string {
  const text = decoder.decode(bytes);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export function textToBytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Parses JSON; on failure the message names the line and column of the first error. */
export function parseJson(text: string): ParseResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, message: locateJsonError(text) };
  }
}

/**
 * Scans the text with a small strict JSON grammar to find the first offending character. Used only after
 * JSON.parse failed, because V8's messages do not always carry a position.
 */
function locateJsonError(text: string): string {
  let i = 0;
  const fail = (what: string): never => {
    throw new JsonLocationError(i, what);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(`unexpected ${describe(text, i)}`);
  };
  const string = () => {
    i++; // opening quote
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            i += 1;
            fail('invalid unicode escape');
          }
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else {
          i += 1;
          fail('invalid escape sequence');
        }
      } else if (c < ' ') fail('control character in string');
      else i++;
    }
    fail('unterminated string');
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m || m[0] === '-' || m[0] === '') fail(`unexpected ${describe(text, i)}`);
    else i += m[0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a property name in double quotes but found ${describe(text, i)}`);
        string();
        ws();
        if (text[i] !== ':') fail(`expected ':' but found ${describe(text, i)}`);
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail(`expected ',' or '}' but found ${describe(text, i)}`);
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail(`expected ',' or ']' but found ${describe(text, i)}`);
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else if (c === '-' || (c >= '0' && c <= '9')) number();
    else fail(`unexpected ${describe(text, i)}`);
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected ${describe(text, i)} after the end of the document`);
    return 'invalid JSON';
  } catch (e) {
    if (e instanceof JsonLocationError) {
      const { line, column } = lineAndColumn(text, e.offset);
      return `invalid JSON at line ${line}, column ${column}: ${e.what}`;
    }
    throw e;
  }
}

class JsonLocationError {
  constructor(
    readonly offset: number,
    readonly what: string,
  ) {}
}

function describe(text: string, i: number): string {
  return i >= text.length ? 'end of input' : `'${text[i]}'`;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text[k] === '\n') {
      line++;
      start = k + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/** Deep copy with object keys sorted (arrays keep their order); `undefined` members are dropped. */
export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortKeysDeep(v)));
  if (isPlainObject(value)) {
    const out: JsonObject = {};
    for (const key of Object.keys(value).sort(compareKeys)) {
      const v = value[key];
      // defineProperty, not assignment: a "__proto__" member must stay a member.
      if (v !== undefined) Object.defineProperty(out, key, { value: sortKeysDeep(v), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

/** Code-unit order, the same everywhere (no locale). */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The canonical file form: sorted keys, 2-space indent, trailing newline. */
export function stringifyJson(value: unknown): string {
  return `${JSON.stringify(sortKeysDeep(value), null, 2)}\n`;
}

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

/** Appends a key or an index to a JSON path: `roles[0].name`, `properties["a.b"]`. */
export function jsonPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  const plain = /^[A-Za-z_$%][\w$%-]*$/.test(key);
  const part = plain ? key : `[${JSON.stringify(key)}]`;
  if (base === '') return plain ? part : part;
  return plain ? `${base}.${part}` : `${base}${part}`;
}

/** A value as text for messages and keys: strings as they are, anything else as JSON. */
export function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'undefined';
  return JSON.stringify(value) ?? typeof value;
}
