/**
 * JSON read as MongoDB's relaxed Extended JSON reads it: a number written with a fraction or an exponent is
 * a double even when it holds an integer (`1.0`, `2e3`), where `JSON.parse` gives the same 1 for `1` and
 * `1.0`. Such numbers come back as `{ "$numberDouble": ... }`, so the Extended JSON reading that follows
 * makes them a Double; every other value is what `JSON.parse` gives. A `__proto__` key is dropped.
 */

/** A number token with a fraction or an exponent: only a text holding one needs more than JSON.parse. */
const FRACTION_OR_EXPONENT = /\d[.eE]/;
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
/** Nesting deeper than this is refused (JSON.parse itself stops at V8's stack, far deeper than any request). */
const MAX_DEPTH = 1_000;

function dropProto(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value;
}

/** Parses JSON text; throws SyntaxError where JSON.parse would. */
export function parseJsonKeepingDoubles(text: string): unknown {
  if (!FRACTION_OR_EXPONENT.test(text)) return JSON.parse(text, dropProto);
  // Validates the text exactly as JSON.parse does before the reader below walks it.
  JSON.parse(text);
  return new Reader(text).document();
}

class Reader {
  private at = 0;

  constructor(private readonly text: string) {}

  document(): unknown {
    const value = this.value(0);
    this.space();
    if (this.at !== this.text.length) throw new SyntaxError(`unexpected text at position ${this.at}`);
    return value;
  }

  private space(): void {
    const { text } = this;
    while (this.at < text.length) {
      const c = text.charCodeAt(this.at);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.at++;
    }
  }

  private value(depth: number): unknown {
    if (depth > MAX_DEPTH) throw new SyntaxError(`nested deeper than ${MAX_DEPTH} levels`);
    this.space();
    switch (this.text[this.at]) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        return this.number();
    }
  }

  private object(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.at++;
    this.space();
    if (this.text[this.at] === '}') {
      this.at++;
      return out;
    }
    for (;;) {
      this.space();
      const key = this.string();
      this.space();
      this.expect(':');
      const item = this.value(depth + 1);
      // As JSON.parse with a reviver that drops it: assigning `__proto__` would set the object's prototype.
      if (key !== '__proto__') out[key] = item;
      this.space();
      if (this.text[this.at] === ',') {
        this.at++;
        continue;
      }
      this.expect('}');
      return out;
    }
  }

  private array(depth: number): unknown[] {
    const out: unknown[] = [];
    this.at++;
    this.space();
    if (this.text[this.at] === ']') {
      this.at++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      this.space();
      if (this.text[this.at] === ',') {
        this.at++;
        continue;
      }
      this.expect(']');
      return out;
    }
  }

  /** A string token, decoded by JSON.parse itself (escapes, surrogates and control characters as it reads them). */
  private string(): string {
    const { text } = this;
    if (text[this.at] !== '"') throw new SyntaxError(`expected a string at position ${this.at}`);
    let end = this.at + 1;
    while (end < text.length) {
      const c = text.charCodeAt(end);
      if (c === 0x22) break;
      end += c === 0x5c ? 2 : 1;
    }
    if (end >= text.length) throw new SyntaxError('unterminated string');
    const value = JSON.parse(text.slice(this.at, end + 1)) as string;
    this.at = end + 1;
    return value;
  }

  private number(): unknown {
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (!match) throw new SyntaxError(`unexpected character at position ${this.at}`);
    this.at = NUMBER.lastIndex;
    const value = Number(match[0]);
    if ((match[1] !== undefined || match[2] !== undefined) && Number.isInteger(value)) return { $numberDouble: Object.is(value, -0) ? '-0.0' : value.toFixed(1) };
    return value;
  }

  private literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.at)) throw new SyntaxError(`unexpected character at position ${this.at}`);
    this.at += word.length;
    return value;
  }

  private expect(char: string): void {
    if (this.text[this.at] !== char) throw new SyntaxError(`expected '${char}' at position ${this.at}`);
    this.at++;
  }
}
