/**
 * Regular expressions as MongoDB defines them, for the embedded engine: BSON regex values (pattern and
 * PCRE option letters) in their one stored form, and query regexes compiled from MongoDB's PCRE dialect to
 * a JavaScript RegExp with the same answers (anchors, `.`, the `x` option, inline flags and named groups,
 * which JavaScript spells differently or lacks). What cannot be translated is refused with MongoDB's
 * "Regular expression is invalid" error instead of silently matching something else. No I/O here.
 */
import { BSONRegExp } from 'bson';
import { DatastoreError } from '../api/datastore.error';

/** Option letters MongoDB accepts on a query regex (`u` is accepted and has no effect: UTF-8 is always on). */
const QUERY_OPTIONS = new Set(['i', 'm', 's', 'x', 'u']);

export function isBsonRegExp(value: unknown): value is BSONRegExp {
  return value !== null && typeof value === 'object' && (value as { _bsontype?: unknown })._bsontype === 'BSONRegExp';
}

/** A regex value as a query or a document may hold it: a JavaScript RegExp or a BSON regex. */
export function isRegexValue(value: unknown): value is RegExp | BSONRegExp {
  return value instanceof RegExp || isBsonRegExp(value);
}

/**
 * The BSON form of a regex value: JavaScript's flags mapped to PCRE options (`g`, `y` and `d` have no
 * meaning in a query or a stored value and are dropped, as MongoDB's shell does).
 */
export function toBsonRegExp(value: RegExp | BSONRegExp): BSONRegExp {
  if (isBsonRegExp(value)) return value;
  const options = [...value.flags].filter((flag) => flag === 'i' || flag === 'm' || flag === 's' || flag === 'u').join('');
  return new BSONRegExp(value.source, options);
}

/** True when two regex values are the same BSON value (pattern and options). */
export function sameRegex(a: RegExp | BSONRegExp, b: RegExp | BSONRegExp): boolean {
  const x = toBsonRegExp(a);
  const y = toBsonRegExp(b);
  return x.pattern === y.pattern && x.options === y.options;
}

function invalid(reason: string, cause?: unknown): DatastoreError {
  return new DatastoreError('BadValue', `Regular expression is invalid: ${reason}`, { code: 51091, cause });
}

/**
 * A query's regex, compiled once: what a field is tested against. `pattern` and `options` are the BSON
 * value (a stored regex equal to them matches too, as in MongoDB); `equalityOnly` marks `$eq: /x/`,
 * which matches only that stored value.
 */
export class RegexCondition {
  constructor(
    readonly pattern: string,
    readonly options: string,
    readonly regex: RegExp,
    readonly equalityOnly = false,
  ) {}

  /** MongoDB's test of one value: strings (and symbols) by the pattern, a stored regex by equality. */
  matches(value: unknown): boolean {
    if (typeof value === 'string') return !this.equalityOnly && this.regex.test(value);
    if (value instanceof RegExp || isBsonRegExp(value)) {
      const stored = toBsonRegExp(value);
      return stored.pattern === this.pattern && stored.options === this.options;
    }
    if (!this.equalityOnly && value !== null && typeof value === 'object' && (value as { _bsontype?: unknown })._bsontype === 'BSONSymbol') {
      return this.regex.test(String((value as { value: unknown }).value));
    }
    return false;
  }
}

/** Validates `$options` (or a BSON regex's options) as MongoDB does. */
export function checkOptions(options: string): void {
  if (options.includes('\0')) throw new DatastoreError('BadValue', 'Regular expression options string cannot contain an embedded null byte', { code: 51110 });
  for (const flag of options) {
    if (!QUERY_OPTIONS.has(flag)) throw new DatastoreError('BadValue', `invalid flag in regex options: ${flag}`, { code: 51108 });
  }
}

/** Compiles a query regex (`pattern` and `options` as MongoDB takes them). Throws BadValue when invalid. */
export function compileRegex(pattern: string, options: string, equalityOnly = false): RegexCondition {
  checkOptions(options);
  if (pattern.includes('\0')) throw new DatastoreError('BadValue', 'Regular expression cannot contain an embedded null byte', { code: 51109 });
  return new RegexCondition(pattern, [...new Set(options)].sort().join(''), toJavaScript(pattern, options), equalityOnly);
}

/** A regex value or `{$regex, $options}` parts compiled; `options` given only with `$options`. */
export function compileRegexValue(value: RegExp | BSONRegExp | string, options: string | undefined, equalityOnly = false): RegexCondition {
  if (typeof value === 'string') return compileRegex(value, options ?? '', equalityOnly);
  const bson = toBsonRegExp(value);
  if (options !== undefined && options !== '' && bson.options !== '') {
    throw new DatastoreError('BadValue', 'options set in both $regex and $options', { code: 51075 });
  }
  return compileRegex(bson.pattern, options || bson.options, equalityOnly);
}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  x: boolean;
}

const POSIX_CLASSES: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: '\\s',
  blank: ' \\t',
  punct: '!-\\/:-@\\[-`{-~',
  xdigit: '0-9A-Fa-f',
  word: '\\w',
  cntrl: '\\x00-\\x1f\\x7f',
  print: ' -~',
  graph: '!-~',
};

/** PCRE's horizontal and vertical whitespace (`\\h`, `\\v`), as class contents. */
const HORIZONTAL = '\\t \\u00a0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000';
const VERTICAL = '\\n\\x0b\\f\\r\\x85\\u2028\\u2029';

/** Letter escapes PCRE and JavaScript read alike (anything else PCRE knows is translated or refused). */
const JS_LETTER_ESCAPES = new Set([...'dDwWsSbBnrtfcxpPku']);

/** Characters with a meaning in a JavaScript pattern outside a class (kept escaped). */
const SYNTAX = new Set([...'^$\\.*+?()[]{}|/']);

function escapeLiteral(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/**
 * Rewrites a PCRE pattern into a JavaScript one with the same matches. MongoDB's PCRE differs from
 * JavaScript in: `$` without `m` also matches before a final newline; with `m`, `^`/`$` split lines at
 * `\n` only; `.` excludes only `\n`; `\A \z \Z`, `\Q..\E`, `(?#..)`, POSIX classes, `(?P<n>..)` and
 * leading inline options exist; and `x` ignores whitespace and `#` comments. The anchors are written as
 * lookarounds, so the JavaScript regex never needs its own `m` flag.
 */
function toJavaScript(pattern: string, options: string): RegExp {
  const flags: Flags = { i: options.includes('i'), m: options.includes('m'), s: options.includes('s'), x: options.includes('x') };
  let at = 0;
  // Inline options at the very start apply to the whole pattern: `(?i)`, `(?s)`, `(?im-sx)`.
  for (let lead = /^\(\?([imsx]*)(?:-([imsx]*))?\)/.exec(pattern); lead; lead = /^\(\?([imsx]*)(?:-([imsx]*))?\)/.exec(pattern.slice(at))) {
    if (lead[0] === '(?)') break;
    for (const f of lead[1]) flags[f as keyof Flags] = true;
    for (const f of lead[2] ?? '') flags[f as keyof Flags] = false;
    at += lead[0].length;
  }
  let out = '';
  let inClass = false;
  let classStart = false;
  while (at < pattern.length) {
    const c = pattern[at];
    if (inClass) {
      if (c === '\\') {
        out += classEscape(pattern[at + 1]);
        at += 2;
      } else if (c === '[' && pattern[at + 1] === ':') {
        const end = pattern.indexOf(':]', at + 2);
        const name = end < 0 ? undefined : pattern.slice(at + 2, end);
        const posix = name === undefined ? undefined : POSIX_CLASSES[name];
        if (posix === undefined) {
          out += '\\[';
          at++;
        } else {
          out += posix;
          at = end + 2;
        }
      } else if (c === ']' && classStart) {
        out += '\\]';
        at++;
      } else {
        if (c === ']') inClass = false;
        out += c === '[' ? '\\[' : c;
        at++;
      }
      classStart = false;
      continue;
    }
    if (flags.x && /\s/.test(c)) {
      at++;
      continue;
    }
    if (flags.x && c === '#') {
      const nl = pattern.indexOf('\n', at);
      at = nl < 0 ? pattern.length : nl + 1;
      continue;
    }
    switch (c) {
      case '\\': {
        const next = pattern[at + 1];
        if (next === undefined) throw invalid('\\ at end of pattern');
        if (next === 'Q') {
          const end = pattern.indexOf('\\E', at + 2);
          out += escapeLiteral(pattern.slice(at + 2, end < 0 ? pattern.length : end));
          at = end < 0 ? pattern.length : end + 2;
          continue;
        }
        if (next === 'E') {
          at += 2;
          continue;
        }
        const hex = next === 'x' ? /^\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(at + 2)) : null;
        if (hex) {
          out += `\\u{${hex[1]}}`;
          at += 2 + hex[0].length;
          continue;
        }
        out += escape(next);
        at += 2;
        continue;
      }
      case '[':
        inClass = true;
        out += '[';
        at++;
        if (pattern[at] === '^') {
          out += '^';
          at++;
        }
        classStart = true;
        continue;
      case '.':
        out += flags.s ? '[\\s\\S]' : '[^\\n]';
        at++;
        continue;
      case '^':
        out += flags.m ? '(?<![^\\n])' : '(?<![\\s\\S])';
        at++;
        continue;
      case '$':
        out += flags.m ? '(?![^\\n])' : '(?=\\n?(?![\\s\\S]))';
        at++;
        continue;
      case '(': {
        const group = openGroup(pattern, at);
        out += group.text;
        at = group.next;
        continue;
      }
      default:
        out += c;
        at++;
    }
  }
  if (inClass) throw invalid('missing terminating ] for character class');
  const jsFlags = flags.i ? 'i' : '';
  try {
    return new RegExp(out, `${jsFlags}u`);
  } catch (unicodeError) {
    try {
      return new RegExp(out, jsFlags);
    } catch {
      const message = unicodeError instanceof Error ? unicodeError.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '') : String(unicodeError);
      throw invalid(message.charAt(0).toLowerCase() + message.slice(1), unicodeError);
    }
  }
}

/** An escape outside a class: PCRE's own sequences translated, any escaped punctuation made literal. */
function escape(next: string): string {
  switch (next) {
    case 'A':
      return '(?<![\\s\\S])';
    case 'z':
      return '(?![\\s\\S])';
    case 'Z':
      return '(?=\\n?(?![\\s\\S]))';
    case 'h':
      return `[${HORIZONTAL}]`;
    case 'H':
      return `[^${HORIZONTAL}]`;
    case 'v':
      return `[${VERTICAL}]`;
    case 'V':
      return `[^${VERTICAL}]`;
    case 'R':
      return `(?:\\r\\n|[${VERTICAL}])`;
    case 'N':
      return '[^\\n]';
    case 'e':
      return '\\x1b';
    case 'a':
      return '\\x07';
    case 'G':
    case 'K':
    case 'X':
    case 'C':
      throw invalid(`\\${next} is not supported`);
    default:
      break;
  }
  if (/[0-9]/.test(next) || JS_LETTER_ESCAPES.has(next)) return `\\${next}`;
  if (/[A-Za-z]/.test(next)) throw invalid(`unrecognized character follows \\: \\${next}`);
  if (SYNTAX.has(next)) return `\\${next}`;
  return /[\s#]/.test(next) ? literalChar(next) : next;
}

/** A character written as an escape that means the same with and without JavaScript's unicode flag. */
function literalChar(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** An escape inside a class: escaped punctuation made literal (JavaScript's unicode mode refuses most). */
function classEscape(next: string | undefined): string {
  if (next === undefined) throw invalid('\\ at end of pattern');
  if (next === 'e') return '\\x1b';
  if (next === 'a') return '\\x07';
  if (next === 'h') return HORIZONTAL;
  if (next === 'v') return VERTICAL;
  if (/[A-Za-z]/.test(next) && !JS_LETTER_ESCAPES.has(next)) throw invalid(`unrecognized character follows \\: \\${next}`);
  if (/[A-Za-z0-9]/.test(next) || next === ']' || next === '\\' || next === '-' || next === '^' || next === '[') return `\\${next}`;
  return next;
}

/** The JavaScript spelling of a group opening at `at` and the index after what it consumed. */
function openGroup(pattern: string, at: number): { text: string; next: number } {
  if (pattern[at + 1] !== '?') return { text: '(', next: at + 1 };
  const rest = pattern.slice(at + 2);
  if (rest.startsWith('#')) {
    const end = pattern.indexOf(')', at);
    if (end < 0) throw invalid('missing ) after (?# comment');
    return { text: '', next: end + 1 };
  }
  const named = /^(?:P?<([A-Za-z_]\w*)>|'([A-Za-z_]\w*)')/.exec(rest);
  if (named) return { text: `(?<${named[1] ?? named[2]}>`, next: at + 2 + named[0].length };
  const reference = /^P=([A-Za-z_]\w*)\)/.exec(rest);
  if (reference) return { text: `\\k<${reference[1]}>`, next: at + 2 + reference[0].length };
  if (/^(?::|=|!|<=|<!)/.test(rest)) return { text: '(?', next: at + 2 };
  if (/^[imsx-]*[:)]/.test(rest)) throw invalid('inline options are supported only at the start of the pattern');
  if (rest.startsWith('>')) throw invalid('atomic groups (?>...) are not supported');
  if (rest.startsWith('|')) throw invalid('branch reset groups (?|...) are not supported');
  if (/^(?:R|[+-]?\d|P>|&)/.test(rest)) throw invalid('recursion and subroutine calls are not supported');
  throw invalid(`unrecognized character after (? or (?-`);
}
