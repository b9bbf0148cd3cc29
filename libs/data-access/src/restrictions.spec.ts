import { describe, expect, it } from 'vitest';
import { BSONRegExp } from 'bson';
import { assertUserQuery } from './restrictions';

describe('regexes users may send', () => {
  it.each(['abc', 'a+b*c?', '(ab)+', '(a|b)+', '^[a-z]+$', '(\\d{3})-(\\d{4})', '[(]+', '(a{2})+', '(?:ab?)+', '\\\\1', '[\\1]', 'a{2,}'])('accepts %s', (pattern) => {
    expect(() => assertUserQuery({ f: { $regex: pattern } }, 'a query')).not.toThrow();
  });

  it.each(['(a+)+', '(a*)*b', '((ab)*)+', '(a{2,})+', '(?:x+y)+', '(a+){2,5}', '(a)\\1', '(?<n>a)\\k<n>', '(?P<n>a)(?P=n)'])('refuses %s', (pattern) => {
    expect(() => assertUserQuery({ f: { $regex: pattern } }, 'a query')).toThrow(/not allowed in a query outside a system function/);
  });

  it('finds patterns in every spelling and place of a query', () => {
    expect(() => assertUserQuery({ $or: [{ a: 1 }, { f: /(a+)+$/ }] }, 'a query')).toThrow(/repeated group/);
    expect(() => assertUserQuery({ f: { $in: [new BSONRegExp('(a*)*', 'i')] } }, 'a query')).toThrow(/repeated group/);
    expect(() => assertUserQuery({ f: { $not: { $regex: '(x+)+' } } }, 'a query')).toThrow(/repeated group/);
    expect(() => assertUserQuery({ f: { $regex: 'a'.repeat(4_097) } }, 'a query')).toThrow(/longer than 4096/);
  });
});
