import { BSONRegExp } from 'bson';
import { compileRegex, compileRegexValue, toBsonRegExp } from './regex';

const test = (pattern: string, options: string, input: string): boolean => compileRegex(pattern, options).matches(input);

describe('query regexes in MongoDB dialect', () => {
  it('anchors ^ and $ at the whole string without m, and at each \\n-separated line with m', () => {
    expect(test('^b', '', 'a\nb')).toBe(false);
    expect(test('^b', 'm', 'a\nb')).toBe(true);
    expect(test('a$', '', 'a\nb')).toBe(false);
    expect(test('a$', 'm', 'a\nb')).toBe(true);
    // PCRE's $ also matches before a final newline; only \n splits lines.
    expect(test('a$', '', 'a\n')).toBe(true);
    expect(test('^b', 'm', 'a\rb')).toBe(false);
    expect(test('\\Aa', 'm', 'b\na')).toBe(false);
    expect(test('a\\z', '', 'a\n')).toBe(false);
    expect(test('a\\Z', '', 'a\n')).toBe(true);
  });

  it('lets . cross a newline only with s, and always a carriage return', () => {
    expect(test('a.b', '', 'a\nb')).toBe(false);
    expect(test('a.b', 's', 'a\nb')).toBe(true);
    expect(test('a.b', '', 'a\rb')).toBe(true);
  });

  it('ignores whitespace and # comments of the pattern with x, but not inside a class or escaped', () => {
    expect(test('a b # the b\n c', 'x', 'abc')).toBe(true);
    expect(test('a b', 'x', 'a b')).toBe(false);
    expect(test('a[ ]b', 'x', 'a b')).toBe(true);
    expect(test('a\\ b', 'x', 'a b')).toBe(true);
    expect(test('a\\#b', 'x', 'a#b')).toBe(true);
  });

  it('matches case-insensitively with i, including non-ASCII letters', () => {
    expect(test('^acme', 'i', 'ACME corp')).toBe(true);
    expect(test('é', 'i', 'É')).toBe(true);
    expect(test('^acme', '', 'ACME corp')).toBe(false);
  });

  it('accepts u and has it change nothing', () => {
    expect(test('^a', 'u', 'ab')).toBe(true);
  });

  it('translates PCRE-only syntax: leading inline options, (?P<name>), \\Q..\\E, (?#), POSIX classes', () => {
    expect(test('(?i)^abc', '', 'ABC')).toBe(true);
    expect(test('(?s)a.b', '', 'a\nb')).toBe(true);
    expect(test('(?x) a b c', '', 'abc')).toBe(true);
    expect(test('(?P<w>a)(?P=w)', '', 'aa')).toBe(true);
    expect(test('\\Qa.b\\E', '', 'a.b')).toBe(true);
    expect(test('\\Qa.b\\E', '', 'axb')).toBe(false);
    expect(test('a(?#comment)b', '', 'ab')).toBe(true);
    expect(test('^[[:digit:]]+$', '', '123')).toBe(true);
    expect(test('[]a]', '', ']')).toBe(true);
    expect(test('\\x{41}', '', 'A')).toBe(true);
    expect(test('a\\-b\\@', '', 'a-b@')).toBe(true);
    expect(test('a\\Nb', '', 'a\nb')).toBe(false);
    expect(test('a\\hb', '', 'a\tb')).toBe(true);
    expect(test('a[\\h]b', '', 'a b')).toBe(true);
    expect(test('a\\vb', '', 'a\rb')).toBe(true);
    expect(test('a\\Rb', '', 'a\r\nb')).toBe(true);
  });

  it('refuses escapes PCRE does not know rather than reading them as letters', () => {
    for (const pattern of ['\\y', '[\\q]', '\\i']) expect(() => compileRegex(pattern, ''), pattern).toThrow(expect.objectContaining({ code: 51091 }));
  });

  it('refuses what it cannot translate faithfully, and invalid patterns, as MongoDB error 51091', () => {
    for (const pattern of ['(', 'a)', '[a', '*a', 'a(?i)b', '(?>a)', '(?|a)', '(?R)']) {
      expect(() => compileRegex(pattern, ''), pattern).toThrow(expect.objectContaining({ codeName: 'BadValue', code: 51091 }));
    }
    expect(() => compileRegex('(', '')).toThrow(/^Regular expression is invalid/);
  });

  it('refuses unknown options and null bytes with MongoDB codes', () => {
    expect(() => compileRegex('a', 'z')).toThrow(expect.objectContaining({ code: 51108, message: 'invalid flag in regex options: z' }));
    expect(() => compileRegex('a', 'g')).toThrow(expect.objectContaining({ code: 51108 }));
    expect(() => compileRegex('a\0', '')).toThrow(expect.objectContaining({ code: 51109 }));
  });

  it('takes options from $options or from the regex value, not from both', () => {
    expect(compileRegexValue(/a/, 'i').matches('A')).toBe(true);
    expect(compileRegexValue(new BSONRegExp('a', 'i'), undefined).matches('A')).toBe(true);
    expect(() => compileRegexValue(/a/i, 'm')).toThrow(expect.objectContaining({ code: 51075 }));
  });

  it('matches a stored regex equal to the query regex, and no other non-string value', () => {
    const condition = compileRegexValue(/a.c/i, undefined);
    expect(condition.matches(new BSONRegExp('a.c', 'i'))).toBe(true);
    expect(condition.matches(new BSONRegExp('a.c', ''))).toBe(false);
    expect(condition.matches(/a.c/i)).toBe(true);
    for (const value of [1, null, true, { a: 'abc' }, new Date()]) expect(condition.matches(value)).toBe(false);
    const equality = compileRegexValue(/a/, undefined, true);
    expect(equality.matches('a')).toBe(false);
    expect(equality.matches(new BSONRegExp('a', ''))).toBe(true);
  });

  it('stores a RegExp as a BSON regex with the flags BSON has', () => {
    expect(toBsonRegExp(/a/gimsuy)).toEqual(new BSONRegExp('a', 'imsu'));
  });
});
