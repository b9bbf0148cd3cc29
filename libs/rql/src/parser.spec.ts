import { type Binary, Long, ObjectId } from 'bson';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type RqlQuery } from './ast';
import { RqlErrorCode, isRqlError } from './errors';
import { parseQuery } from './parser';

function compare(text: string, args: unknown[] = [1, 'x']): Extract<RqlQuery, { kind: 'compare' }> {
  const { query } = parseQuery(text, { args });
  if (query.kind !== 'compare') throw new Error(`not a comparison: ${query.kind}`);
  return query;
}

function constantOf(text: string): unknown {
  const right = compare(`v == ${text}`).right;
  if (right.kind !== 'constant') throw new Error('not a constant');
  return right.list ?? right.value;
}

function syntaxErrorOf(text: string, args?: unknown[]) {
  try {
    parseQuery(text, { args });
  } catch (error) {
    if (isRqlError(error)) return error;
    throw error;
  }
  throw new Error(`parsed: ${text}`);
}

describe('parseQuery', () => {
  // Inputs realm-core's grammar accepts (query_bison.yy, query_flex.ll), in the shapes its parser tests probe.
  it.each([
    'TRUEPREDICATE',
    '  falsepredicate ',
    'truepredicateX = falsepredicateY',
    "'' = \"\"",
    String.raw`'a\'b\\c\/d\n\t' == "x\"y\u00e9"`,
    'größe = 5',
    '-7 = 42',
    '0 = 007',
    '0x1F = 0XaBc',
    '3. = -.5',
    '1.5e3 = 2E-2f',
    'true = false',
    String.raw`with\ space = 1`,
    'wasnull = nil',
    '_x = y',
    'k-9.z_ = __-__.Q-1',
    '$a = b',
    'a$b = c',
    '$ = $',
    '0 =[c] 0',
    '1 <> 2',
    '1 => 2',
    '1 =< 2',
    'x BETWEEN {1, 9}',
    'sort > 0',
    'limit > 0 && distinct < 1',
    'a CONTAINS[c] b',
    "'a'ENDSWITH[c]b",
    'x BeGiNsWiTh y',
    "in in 'in'",
    "like like 'l*'",
    '((a = 1))',
    '!a = 1',
    'NOT(a = 1)',
    'not (a = 1)',
    'NOT0 = 0',
    'not-1 = 1',
    'a == 1 and b == 2 OR c == 3',
    'a = 1AND NOTb = 2',
    'a = b SORT(p ASCENDING)',
    'TRUEPREDICATE SORT(a ASC, b DESC) DISTINCT(c, d.e) LIMIT(10)',
    'a IN {}',
    "a IN {'one', 2, -3.0, null}",
    'a == ANY {1, 2}',
    'ALL a IN {1, 2}',
    'NONE tags == "x"',
    'SOME tags == "x"',
    'tags.@count > 2',
    'tags.@size == 0',
    'tags[SIZE] == 0',
    'dict.@keys == "k"',
    'dict.@values > 2',
    "dict['key'] == 1",
    'list[FIRST] == 1 && list[LAST] == 2 && list[3] == 4 && list[*] == 5',
    'prices.@max > 2',
    'items.@sum.price > 10',
    'SUBQUERY(items, $x, $x.name == "a").@count > 0',
    'p.@links.Class.prop.@count > 2',
    '(a + 1) * 2 > b - 3 / c',
    'd > 2021-01-02@03:04:05 && d < 2021-01-02T03:04:05:123 && d != T12:34',
    'o == oid(507f1f77bcf86cd799439011) && u == uuid(3b241101-e2bb-4255-8caf-4136c566a962)',
    's == B64"aGVsbG8=" && b == bin("raw") && c == binary(B64"AAE=")',
    'x == inf || x == -infinity || x == NaN',
    'link == O12 || link == L1:2 || link == obj("Dog", 5)',
    '$0 == $1',
  ])('accepts %s', (text) => {
    expect(() => parseQuery(text, { args: [1, 2] })).not.toThrow();
  });

  it.each([
    'predicate',
    String.raw`'\a' = ''`,
    String.raw`'\u0' = ''`,
    `"' = ''`,
    'stone#age = 5',
    '03a = 1',
    '1..0 = 1',
    '1.0. = 1',
    '1-0 = 1',
    '0x = 1',
    '- = a',
    'a..b = a',
    '0===>0',
    'a between {1 2}',
    '0 contains1',
    'endswith 0',
    '0=0)',
    '(0=0',
    '! =0',
    'NOTNOT(0=0)',
    'not.a=0',
    '0=0 !',
    'a==a & a==a',
    'a==a | a==a',
    'a==a && OR a==a',
    'a==aORa==a',
    'a=1ANDNOT b=2',
    'truepredicate &&',
    'a IN {1, 2, 3',
    'a IN (1, 2, 3)',
    'a IN [1, 2, 3]',
    'a IN {b, c}',
    'a > [c] 1',
    'SORT(p ASCENDING)',
    'a=b SORT(p)',
    'a=b SORT(0 DESC)',
    'a=b sort()',
    'a=b sort',
    'a=bDISTINCT(p)',
    'a=b DISTINCT(p q)',
    'LIMIT(1)',
    'a=b LIMIT(-1)',
    'a=b LIMIT(2.7)',
    'a=b LIMIT(0xFFEE)',
    'a=b LIMIT(1, 1)',
    'SUBQUERY(items, $x, $x.name == "a") > 0',
    '@prop > 2',
    'prop@links > 2',
    'a == b == c',
    '(a + 1) contains "x"',
    'd > 1899-12-31@23:59:59',
    'd > T-1:5',
    '',
  ])('refuses %s with a syntax error', (text) => {
    const error = syntaxErrorOf(text);
    expect(error.errorCode).toBe(RqlErrorCode.Syntax);
    expect(error.syncErrorCode).toBe(226);
    expect(error.message).toMatch(/^Invalid query: /);
  });

  it('says where the error is', () => {
    const error = syntaxErrorOf('a == 1 && b === 2');
    expect(error.position).toBe(14);
    expect(error.message).toContain('offset 14');
  });

  it('binds NOT tighter than AND, and AND tighter than OR', () => {
    const { query } = parseQuery('!a == 1 && b == 2 || c == 3');
    expect(query.kind).toBe('or');
    const left = (query as { left: RqlQuery }).left;
    expect(left.kind).toBe('and');
    expect((left as { left: RqlQuery }).left.kind).toBe('not');
  });

  it('reads a parenthesis as a predicate or an operand by what follows it', () => {
    expect(parseQuery('(a == 1)').query.kind).toBe('compare');
    expect(parseQuery('((a)) == 1').query.kind).toBe('compare');
    expect(parseQuery('((a == 1) || (b == 2)) && c == 3').query.kind).toBe('and');
    const arithmetic = compare('(a + 1) * 2 > 3');
    expect(arithmetic.left.kind).toBe('arithmetic');
    expect((arithmetic.left as { op: string }).op).toBe('*');
  });

  it('reads integers as strtoll does: octal after a leading zero, hexadecimal, clamped to 64 bits', () => {
    expect(constantOf('017')).toBe(15);
    expect(constantOf('0x1f')).toBe(31);
    expect(constantOf('-12')).toBe(-12);
    expect(constantOf('99999999999999999999')).toEqual(Long.MAX_VALUE);
    expect(constantOf('1.5f')).toBe(1.5);
    expect(constantOf('-inf')).toBe(-Infinity);
    expect(Number.isNaN(constantOf('nan'))).toBe(true);
  });

  it('keeps string escapes as written, and decodes B64 strings', () => {
    expect(constantOf(String.raw`"a\"b"`)).toBe(String.raw`a\"b`);
    expect(constantOf("'x'")).toBe('x');
    expect(constantOf('B64"aGVsbG8gIndvcmxkIg=="')).toBe('hello "world"');
    expect(syntaxErrorOf('a == B64"a"').errorCode).toBe(RqlErrorCode.Syntax);
  });

  it('reads dates in both forms, with nanoseconds', () => {
    expect(constantOf('2021-03-04@05:06:07')).toEqual(new Date(Date.UTC(2021, 2, 4, 5, 6, 7)));
    expect(constantOf('2021-03-04T05:06:07:8000000')).toEqual(new Date(Date.UTC(2021, 2, 4, 5, 6, 7, 8)));
    expect(constantOf('T10:5000000')).toEqual(new Date(10_005));
    expect(constantOf('T-10:-5000000')).toEqual(new Date(-10_005));
    const right = compare('d > T1:1').right;
    expect(right.kind === 'constant' && right.subMillisecond).toBe(true);
  });

  it('reads ObjectId, UUID and binary constants as their BSON values', () => {
    expect(constantOf('oid(507f1f77bcf86cd799439011)')).toEqual(new ObjectId('507f1f77bcf86cd799439011'));
    const uuid = constantOf('uuid(3b241101-e2bb-4255-8caf-4136c566a962)') as Binary;
    expect(uuid.sub_type).toBe(4);
    expect(Buffer.from(uuid.buffer).toString('hex')).toBe('3b241101e2bb42558caf4136c566a962');
    expect((constantOf('bin("ab")') as Binary).sub_type).toBe(0);
  });

  it('substitutes $n arguments, lists included, and refuses a missing one', () => {
    expect(constantOf('$0')).toBeDefined();
    expect(compare('a == $1').right).toMatchObject({ kind: 'constant', value: 'x' });
    expect(parseQuery('a IN $0', { args: [[1, 2]] }).query).toMatchObject({ right: { list: [1, 2] } });
    expect(syntaxErrorOf('a == $2', [1]).message).toContain('argument at index 2');
    expect(syntaxErrorOf('a == $0', [{ nested: true }]).errorCode).toBe(RqlErrorCode.Syntax);
  });

  it('parses descriptors in order', () => {
    const { descriptors } = parseQuery('a == 1 SORT(a ASC, b.c DESC) DISTINCT(d) LIMIT(5) LIMIT(2)');
    expect(descriptors).toEqual([
      { kind: 'sort', keys: [{ path: ['a'], ascending: true }, { path: ['b', 'c'], ascending: false }] },
      { kind: 'distinct', paths: [['d']] },
      { kind: 'limit', count: 5 },
      { kind: 'limit', count: 2 },
    ]);
  });

  it('bounds nesting depth and input size instead of exhausting the stack', () => {
    const deep = `${'('.repeat(5000)}a == 1${')'.repeat(5000)}`;
    expect(syntaxErrorOf(deep).message).toContain('nests deeper');
    expect(syntaxErrorOf(`${'!'.repeat(5000)}a == 1`).message).toContain('nests deeper');
    expect(syntaxErrorOf(`a == ${'('.repeat(5000)}1${')'.repeat(5000)}`).message).toContain('nests deeper');
    expect(() => parseQuery('a == "x"'.padEnd(300_000, ' '))).toThrow(/longer than/);
    // A long flat chain is no problem: it is a loop, not recursion.
    expect(parseQuery(Array.from({ length: 10_000 }, (_, i) => `a == ${i}`).join(' || ')).query.kind).toBe('or');
  });

  it('never throws anything but an RqlError', () => {
    const samples = ['(', ')', '{', '}', 'a ==', '== 1', 'a[', 'a[1', 'a.', '@', 'SUBQUERY(', 'obj(', 'bin(', 'a == {1,', 'x geowithin geoBox([1,2],[3,4])', '$K0 == 1', '"\\u12'];
    for (const text of samples) {
      try {
        parseQuery(text);
      } catch (error) {
        expect(isRqlError(error), text).toBe(true);
      }
    }
  });
});

describe('parseQuery on hostile input', () => {
  const pieces = ['a', 'tags', '==', '!=', '<', '>=', '&&', '||', '!', 'NOT', '(', ')', '{', '}', '[', ']', ',', '.', '@count', '@keys', 'ANY', 'ALL',
    'NONE', 'IN', 'BEGINSWITH', '[c]', 'BETWEEN', 'SUBQUERY', '$x', '$0', '$K1', 'SORT', 'LIMIT', 'ASC', '1', '-2.5e3', '0x', "'s'", '"', "'", '\\',
    'B64"', 'oid(', 'uuid(', 'T1:2', '2020-01-01@', 'TRUEPREDICATE', '@max', '+', '*', ' ', '\n', 'é', '\u0000'];

  it('answers every input with a tree or an RqlError, never another exception', () => {
    fc.assert(
      fc.property(fc.oneof(fc.array(fc.constantFrom(...pieces), { maxLength: 30 }).map((parts) => parts.join('')), fc.string({ maxLength: 60 })), (text) => {
        try {
          parseQuery(text, { args: [1, [2, 3]] });
        } catch (error) {
          expect(isRqlError(error), `${JSON.stringify(text)}: ${String(error)}`).toBe(true);
        }
      }),
      { numRuns: 5000 },
    );
  });
});
