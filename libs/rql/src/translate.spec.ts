import { ObjectId } from 'bson';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RqlErrorCode, isRqlError } from './errors';
import { parseQuery } from './parser';
import { itemQueryable, itemTable } from './testing';
import { type QueryableFields, translateQuery } from './translate';

function translate(text: string, fields: QueryableFields = itemQueryable) {
  return translateQuery(parseQuery(text), itemTable, fields);
}

function refusal(text: string, fields?: QueryableFields) {
  try {
    translate(text, fields);
  } catch (error) {
    if (isRqlError(error)) return error;
    throw error;
  }
  throw new Error(`served: ${text}`);
}

describe('translateQuery', () => {
  it('refuses a non-queryable field with App Services words and code 226', () => {
    const error = refusal("secret == 'x'");
    expect(error.errorCode).toBe(RqlErrorCode.NotQueryable);
    expect(error.syncErrorCode).toBe(226);
    expect(error.message).toBe('Invalid query: unsupported query for table "Item": key "secret" is not a queryable field');
    expect(refusal('nosuchfield == 1').message).toContain('key "nosuchfield" is not a queryable field');
    expect(refusal("n == 1 && (done == true || secret BEGINSWITH 'a')").message).toContain('key "secret"');
  });

  it.each([
    ['TRUEPREDICATE SORT(n ASC)', 'SORT is not supported'],
    ['TRUEPREDICATE DISTINCT(n)', 'DISTINCT is not supported'],
    ['TRUEPREDICATE LIMIT(5)', 'LIMIT is not supported'],
    ['nums.@max > 2', "aggregate operator '@max'"],
    ['n + 1 > 2', 'arithmetic'],
    ['n > score', 'comparing two properties'],
    ['owner.name == "a"', 'embedded objects, links'],
    ['tags[0] == "a"', 'embedded objects, links'],
    ['name.@size > 2', '@count and @size are supported on lists only'],
    ['n.@type == "int"', '@type'],
    ["name TEXT 'word'", 'full-text'],
    ['SUBQUERY(tags, $x, $x == "a").@count > 0', 'SUBQUERY'],
    ['owner == O12', 'links'],
    ['ANY name == "a"', 'needs a list property'],
    ["attrs.@keys BEGINSWITH 'k'", '@keys supports == and IN only'],
  ])('refuses what the server did not serve: %s', (text, reason) => {
    const error = refusal(text);
    expect(error.errorCode).toBe(RqlErrorCode.Unsupported);
    expect(error.message).toMatch(/^Invalid query: unsupported query for table "Item": /);
    expect(error.message).toContain(reason);
  });

  it.each([
    ["n == 'a'", "Unsupported comparison between type 'int' and type 'string'"],
    ['name > 3', "Unsupported comparison between type 'string' and type 'int'"],
    ['done BEGINSWITH "t"', "between type 'bool' and type 'string'"],
    ['n > null', 'null can only be compared with == or !='],
    ['n BETWEEN {1}', "requires list with 2 elements"],
    ['ref == oid(507f1f77bcf86cd799439011)', "type 'uuid' and type 'objectId'"],
  ])('refuses a comparison the schema makes meaningless: %s', (text, reason) => {
    const error = refusal(text);
    expect(error.errorCode).toBe(RqlErrorCode.Invalid);
    expect(error.message).toContain(reason);
  });

  it('requires the indexed queryable field by equality, ANDed with the rest', () => {
    const fields = { ...itemQueryable, indexed: ['owner'] };
    expect(() => translate('owner == oid(507f1f77bcf86cd799439011) && n > 2', fields)).not.toThrow();
    expect(() => translate('n > 2 AND owner IN {oid(507f1f77bcf86cd799439011)}', fields)).not.toThrow();
    for (const text of ['n > 2', 'TRUEPREDICATE', 'owner > oid(507f1f77bcf86cd799439011)', 'owner == oid(507f1f77bcf86cd799439011) || n > 2', 'owner == oid(507f1f77bcf86cd799439011) && n > 1 || n < 0']) {
      expect(refusal(text, fields).message, text).toContain('indexed queryable field "owner"');
    }
  });

  it('lowers comparisons to the datastore filter', () => {
    const id = new ObjectId('507f1f77bcf86cd799439011');
    expect(translate("name == 'a' && n >= 2").filter).toEqual({ $and: [{ name: { $eq: 'a' } }, { n: { $gte: 2 } }] });
    expect(translate('3 < n').filter).toEqual({ n: { $gt: 3 } });
    expect(translate('owner IN {oid(507f1f77bcf86cd799439011), null}').filter).toEqual({ owner: { $in: [id, null] } });
    expect(translate('n BETWEEN {1, 5}').filter).toEqual({ $and: [{ n: { $gte: 1 } }, { n: { $lte: 5 } }] });
    expect(translate('!(n == 1)').filter).toEqual({ $nor: [{ n: { $eq: 1 } }] });
    expect(translate('TRUEPREDICATE').filter).toEqual({});
    expect(translate('FALSEPREDICATE').filter).toEqual({ _id: { $in: [] } });
    expect(translate('n == 1 || TRUEPREDICATE').filter).toEqual({});
  });

  it('lowers string operators to anchored, escaped regular expressions', () => {
    expect(translate("name BEGINSWITH 'a.b'").filter).toEqual({ name: { $regex: '^a\\.b', $options: '' } });
    expect(translate("name ENDSWITH[c] 'x'").filter).toEqual({ name: { $regex: 'x(?![\\s\\S])', $options: 'i' } });
    expect(translate("name LIKE 'a?c*'").filter).toEqual({ name: { $regex: '^a[\\s\\S]c[\\s\\S]*(?![\\s\\S])', $options: '' } });
    expect(translate("name ==[c] 'Ab'").filter).toEqual({ name: { $regex: '^Ab(?![\\s\\S])', $options: 'i' } });
    const { matches } = translate("name LIKE[c] '*B?'");
    expect(matches({ name: 'xxbz' })).toBe(true);
    expect(matches({ name: 'xxb' })).toBe(false);
    expect(translate("name CONTAINS '(*)'").matches({ name: 'a(*)b' })).toBe(true);
  });

  it('applies ANY, ALL and NONE to list elements', () => {
    expect(translate("tags == 'a'").filter).toEqual({ tags: { $elemMatch: { $eq: 'a' } } });
    expect(translate("'a' IN tags").filter).toEqual({ tags: { $elemMatch: { $eq: 'a' } } });
    expect(translate("ALL tags != 'a'").filter).toEqual({ tags: { $not: { $elemMatch: { $not: { $ne: 'a' } } } } });
    const none = translate("NONE tags BEGINSWITH 'a'");
    expect(none.matches({ tags: ['ba', 'c'] })).toBe(true);
    expect(none.matches({ tags: ['ab'] })).toBe(false);
    const all = translate('ALL nums > 1');
    expect(all.matches({ nums: [] })).toBe(true);
    expect(all.matches({ nums: [2, 3] })).toBe(true);
    expect(all.matches({ nums: [2, 1] })).toBe(false);
  });

  it('compares a scalar with a quantified list literal', () => {
    expect(translate('n == ANY {1, 2}').filter).toEqual({ n: { $in: [1, 2] } });
    expect(translate('n IN {}').matches({ n: 1 })).toBe(false);
    expect(translate('n > ALL {1, 2}').matches({ n: 3 })).toBe(true);
    expect(translate('n > ALL {1, 2}').matches({ n: 2 })).toBe(false);
    expect(translate('n == NONE {1, 2}').matches({ n: 3 })).toBe(true);
  });

  it('counts list elements with @count and @size', () => {
    const query = translate('tags.@count >= 2');
    expect(query.matches({ tags: ['a', 'b'] })).toBe(true);
    expect(query.matches({ tags: ['a'] })).toBe(false);
    expect(translate('tags.@size == 0').matches({})).toBe(true);
  });

  it('queries dictionaries by key, by value and by entry', () => {
    expect(translate("attrs.@keys == 'k1'").filter).toEqual({ 'attrs.k1': { $exists: true } });
    expect(translate("attrs['k1'] > 1").filter).toEqual({ 'attrs.k1': { $gt: 1 } });
    expect(translate('attrs.k2 == 3').matches({ attrs: { k2: 3 } })).toBe(true);
    const values = translate('attrs.@values == 2');
    expect(values.matches({ attrs: { k1: 1, k2: 2 } })).toBe(true);
    expect(values.matches({ attrs: { k1: 1 } })).toBe(false);
    expect(refusal("attrs.@keys == 'a.b'").errorCode).toBe(RqlErrorCode.Invalid);
  });

  it('matches dates with nanoseconds against stored milliseconds', () => {
    expect(translate('when > T0:500000').matches({ when: new Date(0) })).toBe(false);
    expect(translate('when >= T0:500000').matches({ when: new Date(1) })).toBe(true);
    expect(translate('when >= T0:500000').matches({ when: new Date(0) })).toBe(false);
    expect(translate('when <= T0:500000').matches({ when: new Date(0) })).toBe(true);
    expect(translate('when == T0:500000').matches({ when: new Date(0) })).toBe(false);
    expect(translate('when != T0:500000').matches({ when: new Date(0) })).toBe(true);
    expect(translate('when == 1970-01-01@00:00:01').matches({ when: new Date(1000) })).toBe(true);
  });

  // The shapes realm-core's query serializer writes when an SDK sends a subscription (util/serializer.cpp):
  // lower-case and/or, NULL, doubles at 17 digits, T<s>:<ns> dates, B64 strings, ANY on lists.
  it.each([
    ['name == "alice" and n > 5', { name: 'alice', n: 6 }, { name: 'alice', n: 5 }],
    ['(n == 1 or n == 2) and done == false', { n: 2, done: false }, { n: 2, done: true }],
    ['NOT (name BEGINSWITH[c] "a")', { name: 'bob' }, { name: 'Ann' }],
    ['ANY tags == "a"', { tags: ['b', 'a'] }, { tags: ['b'] }],
    ['tags.@count > 1', { tags: ['a', 'b'] }, { tags: ['a'] }],
    ['when > T1612345678:123000000', { when: new Date(1612345678124) }, { when: new Date(1612345678123) }],
    ['score >= 0.10000000000000001 and score < 1e+20', { score: 0.1 }, { score: 1e20 }],
    ['score == -inf', { score: -Infinity }, { score: 0 }],
    ['name == B64"YSJi"', { name: 'a"b' }, { name: 'ab' }],
    ['owner == NULL', { owner: null }, { owner: new ObjectId('507f1f77bcf86cd799439011') }],
    ['_id == oid(507f1f77bcf86cd799439011)', { _id: new ObjectId('507f1f77bcf86cd799439011') }, { _id: new ObjectId('507f1f77bcf86cd799439012') }],
    ['name LIKE "a*c"', { name: 'abbc' }, { name: 'abcd' }],
    ["attrs['k1'] == 5", { attrs: { k1: 5 } }, { attrs: { k2: 5 } }],
  ])('serves a serialized subscription: %s', (text, inside, outside) => {
    const query = translate(text);
    expect(query.matches(inside)).toBe(true);
    expect(query.matches(outside)).toBe(false);
  });

  it('translates a long chain without recursion', () => {
    const text = Array.from({ length: 5_000 }, (_, i) => `n == ${i}`).join(' || ');
    const query = translate(text);
    expect(query.matches({ n: 4_999 })).toBe(true);
    expect(query.matches({ n: 5_000 })).toBe(false);
  });
});

describe('translateQuery on hostile queries', () => {
  const quantifiers = ['', 'ANY ', 'ALL ', 'NONE '];
  const paths = ['n', 'name', 'tags', 'nums', 'attrs', 'secret', 'owner', 'when', 'ref', 'done', 'attrs.@keys', 'attrs.@values', 'tags.@count', 'name.@size', "attrs['k1']", 'attrs.k2', 'n.@type', 'tags[0]', 'owner.x', 'nums.@max'];
  const operators = ['==', '!=', '<', '>=', ' IN ', ' BEGINSWITH ', ' LIKE ', ' CONTAINS ', '==[c]', ' BETWEEN ', ' TEXT '];
  const constants = ['{1, 2}', '{}', "{'a', null}", "'s'", 'B64"YQ=="', '1', '2.5', '-inf', 'nan', 'null', 'T0:1', 'oid(507f1f77bcf86cd799439011)', 'uuid(3b241101-e2bb-4255-8caf-4136c566a962)', '$0', 'ALL {1}', 'O1', 'n', 'true'];
  const comparison = fc
    .tuple(fc.constantFrom(...quantifiers), fc.constantFrom(...paths), fc.constantFrom(...operators), fc.constantFrom(...constants), fc.boolean())
    .map(([q, path, op, constant, flip]) => (flip ? `${constant}${op}${q}${path}` : `${q}${path}${op}${constant}`));
  const query = fc
    .array(fc.tuple(fc.constantFrom('', '!', 'NOT '), comparison, fc.constantFrom(' && ', ' || ')), { minLength: 1, maxLength: 2 })
    .map((parts) => parts.map(([not, text, join], i) => `${i > 0 ? join : ''}${not}(${text})`).join(''));

  it('answers every parsed query with a translation or an RqlError, never another exception', () => {
    let parsed = 0;
    let served = 0;
    fc.assert(
      fc.property(query, fc.constantFrom('', '', '', '', ' SORT(n ASC)', ' LIMIT(1)'), (text, suffix) => {
        let tree;
        try {
          tree = parseQuery(text + suffix, { args: [[1, 'a', null]] });
        } catch (error) {
          expect(isRqlError(error)).toBe(true);
          return;
        }
        parsed += 1;
        try {
          const translated = translateQuery(tree, itemTable, itemQueryable);
          expect(typeof translated.matches({ n: 1, name: 's', tags: ['s'], attrs: { k1: 1 } })).toBe('boolean');
          served += 1;
        } catch (error) {
          expect(isRqlError(error), `${text}: ${String(error)}`).toBe(true);
        }
      }),
      { numRuns: 5_000 },
    );
    expect(parsed).toBeGreaterThan(2_500);
    expect(served).toBeGreaterThan(30);
  });
});
