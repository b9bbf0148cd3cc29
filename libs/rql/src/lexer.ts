/**
 * The tokenizer of realm-core's query_flex.ll, rewritten: at each offset every rule is tried and the longest
 * match wins, the earlier rule on a tie, as flex decides. That is what makes `NOT0` a key path, `1AND` a
 * number then AND, and `-1` one number token.
 */
import { syntaxError } from './errors';

export type TokenType =
  | 'op' // + - * /
  | 'punct' // [ ] , ( ) { } .
  | '==' | '!=' | '<' | '>' | '<=' | '>='
  | 'in' | 'and' | 'or' | 'not' | 'any' | 'all' | 'none'
  | 'beginswith' | 'endswith' | 'contains' | 'text' | 'like' | 'between' | 'geowithin'
  | 'truepredicate' | 'falsepredicate' | 'sort' | 'distinct' | 'limit' | 'binary' | 'obj' | 'ascending' | 'descending'
  | 'subquery' | 'geobox' | 'geopolygon' | 'geocircle'
  | 'size' | 'max' | 'min' | 'sum' | 'avg' | 'links' | 'type' | 'keyval'
  | 'first' | 'last' | 'indexsize' | 'case' | 'true' | 'false' | 'infinity' | 'nan' | 'null'
  | 'uuid' | 'oid' | 'timestamp' | 'link' | 'typedlink' | 'natural0' | 'arg' | 'kparg' | 'number' | 'float'
  | 'base64' | 'string' | 'id' | 'end';

export interface Token {
  type: TokenType;
  text: string;
  /** Offset of the token's first character. */
  at: number;
}

const hex = '[0-9a-fA-F]';
const int = '[0-9]+';
const sint = '[+-]?[0-9]+';
const exp = '(?:[eE][+-]?[0-9]+)';
const escape = String.raw`\\["'/bfnrt0\\]`;
const unicode = String.raw`\\u[0-9a-fA-F]{4}`;
// Non-ASCII characters stand for flex's UTF-8 sequences.
const wide = '[\\u0080-\\uffff]';
const ci = (word: string) => [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('');

/** [rule, token type or null to skip], in the order of query_flex.ll: the order breaks ties. */
const RULES: [RegExp, TokenType | null][] = (
  [
    ['[ \\t\\r]+', null],
    ['\\n+', null],
    ['[+\\-*/]', 'op'],
    ['==|=', '=='],
    ['in|IN', 'in'],
    ['!=|<>', '!='],
    ['<', '<'],
    ['>', '>'],
    ['[\\[\\],(){}.]', 'punct'],
    ['<=|=<', '<='],
    ['>=|=>', '>='],
    [`&&|${ci('and')}`, 'and'],
    [`\\|\\||${ci('or')}`, 'or'],
    ['!|not|NOT', 'not'],
    ['any|ANY|some|SOME', 'any'],
    ['all|ALL', 'all'],
    ['none|NONE', 'none'],
    [ci('beginswith'), 'beginswith'],
    [ci('endswith'), 'endswith'],
    [ci('contains'), 'contains'],
    [ci('text'), 'text'],
    [ci('like'), 'like'],
    [ci('between'), 'between'],
    [ci('geowithin'), 'geowithin'],
    [ci('truepredicate'), 'truepredicate'],
    [ci('falsepredicate'), 'falsepredicate'],
    [ci('sort'), 'sort'],
    [ci('distinct'), 'distinct'],
    [ci('limit'), 'limit'],
    [`${ci('binary')}|${ci('bin')}`, 'binary'],
    [ci('obj'), 'obj'],
    [`${ci('ascending')}|${ci('asc')}`, 'ascending'],
    [`${ci('descending')}|${ci('desc')}`, 'descending'],
    [ci('subquery'), 'subquery'],
    [ci('geobox'), 'geobox'],
    [ci('geopolygon'), 'geopolygon'],
    [ci('geocircle'), 'geocircle'],
    ['@size|@count', 'size'],
    ['@max', 'max'],
    ['@min', 'min'],
    ['@sum', 'sum'],
    ['@avg', 'avg'],
    ['@links', 'links'],
    ['@type', 'type'],
    ['@keys|@values', 'keyval'],
    ['FIRST|first', 'first'],
    ['LAST|last', 'last'],
    ['SIZE|size', 'indexsize'],
    ['\\[c\\]', 'case'],
    ['true|TRUE', 'true'],
    ['false|FALSE', 'false'],
    [`[+-]?(?:${ci('infinity')}|${ci('inf')})`, 'infinity'],
    [`[+-]?${ci('nan')}`, 'nan'],
    [`${ci('null')}|${ci('nil')}`, 'null'],
    [`uuid\\(${hex}{8}-${hex}{4}-${hex}{4}-${hex}{4}-${hex}{12}\\)`, 'uuid'],
    [`oid\\(${hex}{24}\\)`, 'oid'],
    [`T${sint}:${sint}|${int}-${int}-${int}[@T]${int}:${int}:${int}(?::${int})?`, 'timestamp'],
    [`O${int}`, 'link'],
    [`L${int}:${int}`, 'typedlink'],
    [int, 'natural0'],
    [`\\$${int}`, 'arg'],
    [`\\$K${int}`, 'kparg'],
    [sint, 'number'],
    [`0[xX]${hex}+`, 'number'],
    [`${sint}${exp}?f?`, 'float'],
    [`[+-]?(?:[0-9]+\\.[0-9]*|[0-9]*\\.[0-9]+)${exp}?f?`, 'float'],
    ['B64"[a-zA-Z0-9/+=]*"', 'base64'],
    [`"(?:[^"\\\\]|${escape}|${unicode})*"`, 'string'],
    [`'(?:[^'\\\\]|${escape}|${unicode})*'`, 'string'],
    [`(?:[a-zA-Z_$]|${wide})(?:[a-zA-Z_\\-$0-9]|${wide}|\\\\[ nrt])*`, 'id'],
  ] as const
).map(([source, type]) => [new RegExp(source, 'y'), type]);

/**
 * The characters a rule's match can start with, read off its pattern (the patterns above use only character
 * classes, escapes, literal characters, `(?:...)` groups, `|` and the `?`/`*`/`+`/`{n}` quantifiers). WIDE
 * stands for every non-ASCII character.
 */
const WIDE = 'wide';

function firstChars(source: string): Set<string> {
  const result = new Set<string>();
  // Split into top-level alternatives.
  const alternatives: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) {
      alternatives.push(source.slice(start, i));
      start = i + 1;
    }
  }
  alternatives.push(source.slice(start));
  for (const alternative of alternatives) {
    let rest = alternative;
    while (rest.length > 0) {
      const { chars, length } = firstAtom(rest);
      for (const c of chars) result.add(c);
      const quantifier = rest[length];
      const optional = quantifier === '?' || quantifier === '*';
      rest = rest.slice(length + (optional || quantifier === '+' ? 1 : 0));
      if (!optional) break;
    }
  }
  return result;
}

function firstAtom(source: string): { chars: Set<string>; length: number } {
  if (source.startsWith('(?:')) {
    let depth = 0;
    for (let i = 0; i < source.length; i++) {
      if (source[i] === '\\') i++;
      else if (source[i] === '(') depth++;
      else if (source[i] === ')' && --depth === 0) return { chars: firstChars(source.slice(3, i)), length: i + 1 };
    }
  }
  if (source.startsWith('[')) {
    const chars = new Set<string>();
    let i = 1;
    const next = (): string => {
      if (source[i] === '\\') {
        const escaped = source[i + 1];
        if (escaped === 'u') {
          const code = source.slice(i + 2, i + 6);
          i += 6;
          return String.fromCharCode(Number.parseInt(code, 16));
        }
        i += 2;
        return escaped === 't' ? '\t' : escaped === 'r' ? '\r' : escaped === 'n' ? '\n' : escaped;
      }
      return source[i++];
    };
    while (source[i] !== ']') {
      const low = next();
      if (source[i] === '-' && source[i + 1] !== ']') {
        i++;
        const high = next();
        for (let code = low.charCodeAt(0); code <= Math.min(high.charCodeAt(0), 127); code++) chars.add(String.fromCharCode(code));
        if (high.charCodeAt(0) > 127) chars.add(WIDE);
      } else chars.add(low);
    }
    return { chars, length: i + 1 };
  }
  if (source[0] === '\\') {
    const escaped = source[1];
    return { chars: new Set([escaped === 't' ? '\t' : escaped === 'n' ? '\n' : escaped]), length: 2 };
  }
  return { chars: new Set([source[0]]), length: 1 };
}

/** For each ASCII code, the rules (in order) that can match there; index 128 holds those for non-ASCII. */
const RULES_BY_FIRST: (typeof RULES)[] = Array.from({ length: 129 }, () => []);
for (const rule of RULES) {
  const chars = firstChars(rule[0].source);
  for (let code = 0; code < 128; code++) if (chars.has(String.fromCharCode(code))) RULES_BY_FIRST[code].push(rule);
  if (chars.has(WIDE)) RULES_BY_FIRST[128].push(rule);
}

/** An identifier's `\ `, `\t`, `\r`, `\n` escapes, decoded as realm-core's check_escapes does. */
function decodeIdentifier(text: string): string {
  return text.replace(/\\([ nrt])/g, (_, c: string) => (c === ' ' ? ' ' : c === 't' ? '\t' : c === 'r' ? '\r' : '\n'));
}

export function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < input.length) {
    let best: { length: number; type: TokenType | null } | undefined;
    const code = input.charCodeAt(at);
    for (const [rule, type] of RULES_BY_FIRST[code < 128 ? code : 128]) {
      rule.lastIndex = at;
      const match = rule.exec(input);
      if (match && match[0].length > (best?.length ?? 0)) best = { length: match[0].length, type };
    }
    if (!best) throw syntaxError(`invalid character: ${JSON.stringify(input[at])}`, at);
    const text = input.slice(at, at + best.length);
    if (best.type) tokens.push({ type: best.type, text: best.type === 'id' ? decodeIdentifier(text) : text, at });
    at += best.length;
  }
  tokens.push({ type: 'end', text: '', at: input.length });
  return tokens;
}
