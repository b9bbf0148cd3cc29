/**
 * fast-check generators for the property tests: RQL query texts over a small table (every served operator,
 * nested with AND, OR and NOT) and documents whose values collide with the queries' constants often enough
 * for both outcomes to be common.
 */
import { ObjectId, UUID } from 'bson';
import fc from 'fast-check';
import { isRqlError } from '../errors';
import { parseQuery } from '../parser';
import { type QueryableFields, type RqlTable, type TranslatedQuery, translateQuery } from '../translate';

export const itemTable: RqlTable = {
  name: 'Item',
  fields: {
    _id: { type: 'objectId' },
    name: { type: 'string' },
    n: { type: 'int' },
    score: { type: 'double' },
    done: { type: 'bool' },
    when: { type: 'date' },
    ref: { type: 'uuid' },
    owner: { type: 'objectId' },
    tags: { type: 'string', collection: 'list' },
    nums: { type: 'int', collection: 'set' },
    attrs: { type: 'int', collection: 'dictionary' },
    secret: { type: 'string' },
  },
};

export const itemQueryable: QueryableFields = { queryable: ['_id', 'name', 'n', 'score', 'done', 'when', 'ref', 'owner', 'tags', 'nums', 'attrs'] };

/** A query on the item table as the server serves it, or undefined when the server refuses it. */
export function servedItemQuery(text: string): TranslatedQuery | undefined {
  try {
    return translateQuery(parseQuery(text), itemTable, itemQueryable);
  } catch (error) {
    if (isRqlError(error)) return undefined;
    throw error;
  }
}

const STRINGS = ['', 'a', 'b', 'ab', 'Ab', 'aB c', 'x*y', 'x.y', 'é', 'É', 'line\nbreak', '$a'];
const OIDS = ['507f1f77bcf86cd799439011', '507f1f77bcf86cd799439012', '000000000000000000000001'];
const UUIDS = ['3b241101-e2bb-4255-8caf-4136c566a962', '00000000-0000-4000-8000-000000000001'];
const DATES = [0, 1, 1000, 1_600_000_000_000, -5];
const KEYS = ['k1', 'k2', 'k3'];

// Document values.
const stringValue = fc.constantFrom(...STRINGS);
const intValue = fc.integer({ min: -2, max: 3 });
// No NaN: the datastore's two matchers order it differently (its fast path below every number, mingo above).
const numberValue = fc.oneof(intValue, fc.constantFrom(1.5, -0.5, Infinity));
const dateValue = fc.constantFrom(...DATES).map((ms) => new Date(ms));
const oidValue = fc.constantFrom(...OIDS).map((hex) => new ObjectId(hex));
const uuidValue = fc.constantFrom(...UUIDS).map((text) => new UUID(text).toBinary());
const nullish = fc.constantFrom(null, undefined);

function optional<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null | undefined> {
  return fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: nullish });
}

export const itemDocument: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    _id: oidValue,
    name: optional(stringValue),
    n: optional(numberValue),
    score: optional(numberValue),
    done: optional(fc.boolean()),
    when: optional(dateValue),
    ref: optional(uuidValue),
    owner: optional(oidValue),
    tags: fc.oneof({ weight: 5, arbitrary: fc.array(stringValue, { maxLength: 4 }) }, { weight: 1, arbitrary: nullish }),
    nums: fc.oneof({ weight: 5, arbitrary: fc.uniqueArray(intValue, { maxLength: 3 }) }, { weight: 1, arbitrary: nullish }),
    attrs: fc.oneof(
      { weight: 5, arbitrary: fc.dictionary(fc.constantFrom(...KEYS), fc.oneof(intValue, fc.constant(null)), { maxKeys: 3 }).map((entries) => ({ ...entries })) },
      { weight: 1, arbitrary: nullish },
    ),
    secret: optional(stringValue),
  })
  .map((doc) => Object.fromEntries(Object.entries(doc).filter(([, value]) => value !== undefined)));

// Query texts.
const stringLiteral = fc.constantFrom(...STRINGS).map((s) => (/[\n'\\]/.test(s) ? `B64"${Buffer.from(s).toString('base64')}"` : `'${s}'`));
const intLiteral = fc.oneof(fc.integer({ min: -2, max: 3 }).map(String), fc.constantFrom('1.5', '-0.5', '0x2', '03'));
const dateLiteral = fc.constantFrom('1970-01-01@00:00:00', '1970-01-01T00:00:01', 'T0:1000000', 'T0:500000', 'T1:0', '2020-09-13@12:26:40', 'T-1:0');
const oidLiteral = fc.constantFrom(...OIDS).map((hex) => `oid(${hex})`);
const uuidLiteral = fc.constantFrom(...UUIDS).map((text) => `uuid(${text})`);
const relational = fc.constantFrom('==', '=', '!=', '<>', '<', '<=', '>', '>=');
const equality = fc.constantFrom('==', '!=');
const stringOp = fc.constantFrom('==', '!=', 'BEGINSWITH', 'ENDSWITH', 'CONTAINS', 'LIKE', 'beginswith', 'like');
const caseFlag = fc.constantFrom('', '[c]');
const listOf = (literal: fc.Arbitrary<string>) => fc.array(literal, { maxLength: 3 }).map((items) => `{${items.join(', ')}}`);

function scalarComparisons(field: string, literal: fc.Arbitrary<string>, ops: fc.Arbitrary<string>): fc.Arbitrary<string>[] {
  return [
    fc.tuple(ops, literal).map(([op, value]) => `${field} ${op} ${value}`),
    fc.tuple(ops, literal).map(([op, value]) => `${value} ${op} ${field}`),
    listOf(literal).map((list) => `${field} IN ${list}`),
    fc.tuple(ops, fc.constantFrom('', 'ANY ', 'ALL ', 'NONE '), listOf(literal)).map(([op, q, list]) => `${field} ${op} ${q}${list}`),
    fc.tuple(literal, literal).map(([low, high]) => `${field} BETWEEN {${low}, ${high}}`),
    equality.map((op) => `${field} ${op} null`),
  ];
}

const atom: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('TRUEPREDICATE', 'FALSEPREDICATE'),
  ...scalarComparisons('n', intLiteral, relational),
  ...scalarComparisons('score', intLiteral, relational),
  ...scalarComparisons('when', dateLiteral, relational),
  ...scalarComparisons('_id', oidLiteral, equality),
  ...scalarComparisons('owner', oidLiteral, relational),
  ...scalarComparisons('ref', uuidLiteral, equality),
  fc.tuple(equality, fc.constantFrom('true', 'false', 'null')).map(([op, value]) => `done ${op} ${value}`),
  fc.tuple(stringOp, caseFlag, stringLiteral).map(([op, c, value]) => `name ${op}${c} ${value}`),
  fc.tuple(relational, stringLiteral).map(([op, value]) => `name ${op} ${value}`),
  listOf(stringLiteral).map((list) => `name IN ${list}`),
  fc.tuple(fc.constantFrom('', 'ANY ', 'SOME ', 'ALL ', 'NONE '), stringOp, caseFlag, stringLiteral).map(([q, op, c, value]) => `${q}tags ${op}${c} ${value}`),
  stringLiteral.map((value) => `${value} IN tags`),
  fc.tuple(fc.constantFrom('', 'ALL ', 'NONE '), listOf(stringLiteral)).map(([q, list]) => `${q}tags IN ${list}`),
  fc.tuple(fc.constantFrom('', 'ANY ', 'ALL ', 'NONE '), relational, intLiteral).map(([q, op, value]) => `${q}nums ${op} ${value}`),
  fc.tuple(fc.constantFrom('tags', 'nums'), fc.constantFrom('.@count', '.@size', '[SIZE]'), relational, fc.integer({ min: 0, max: 3 })).map(([f, size, op, k]) => `${f}${size} ${op} ${k}`),
  fc.tuple(fc.constantFrom('', 'NONE '), fc.constantFrom(...KEYS, 'k9')).map(([q, key]) => `${q}attrs.@keys == '${key}'`),
  fc.tuple(fc.constantFrom('', 'NONE '), listOf(fc.constantFrom(...KEYS).map((k) => `'${k}'`))).map(([q, list]) => `${q}attrs.@keys IN ${list}`),
  fc.tuple(fc.constantFrom('attrs.@values', 'attrs', 'ANY attrs.@values', 'NONE attrs'), fc.oneof(intLiteral, fc.constant('null'))).map(([path, value]) => `${path} == ${value}`),
  fc.tuple(fc.constantFrom(...KEYS).map((k) => [`attrs.${k}`, `attrs['${k}']`]), fc.nat(1), relational, fc.oneof(intLiteral, fc.constant('null'))).map(([paths, i, op, value]) => `${paths[i]} ${value === 'null' && !['==', '=', '!=', '<>'].includes(op) ? '==' : op} ${value}`),
);

/** A served subscription query: atoms nested with AND, OR and NOT. */
export const itemQuery: fc.Arbitrary<string> = fc.letrec<{ query: string }>((tie) => ({
  query: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: atom },
    fc.tuple(tie('query'), fc.constantFrom('&&', 'AND', 'and', '||', 'OR'), tie('query')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
    tie('query').map((q) => `NOT (${q})`),
    tie('query').map((q) => `!(${q})`),
  ),
})).query;

/** Queries a flexible-sync app typically holds: most pin an owner or a status by equality. */
export const indexableItemQuery: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(oidLiteral, itemQuery).map(([owner, rest]) => `owner == ${owner} AND (${rest})`),
  fc.tuple(listOf(stringLiteral), itemQuery).map(([names, rest]) => `name IN ${names} && (${rest})`),
  fc.tuple(stringLiteral, stringLiteral).map(([a, b]) => `name == ${a} || name == ${b}`),
  fc.tuple(stringLiteral, itemQuery).map(([tag, rest]) => `ANY tags == ${tag} && (${rest})`),
  fc.tuple(fc.constantFrom('k1', 'k2'), intLiteral).map(([key, value]) => `attrs.${key} == ${value}`),
  itemQuery,
);

