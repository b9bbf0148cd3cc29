/**
 * A fast matcher for the filters most calls use (fields compared to plain values with equality, $eq, $ne,
 * $in, $nin, $gt, $gte, $lt, $lte, $exists, combined with $and, $or and $nor whose branches are themselves
 * in this subset), with MongoDB's array and type-bracketing semantics. Building a mingo Query costs tens of
 * microseconds, which dominates a point query, and mingo's per-document test is several times slower than
 * this one; anything outside this subset still goes to mingo.
 */
import { type Document, collectPathValues, compareValues, isPlainObject, typeRank, valuesEqual } from '../bson/values';

export type Matcher = (doc: Document) => boolean;

const RANGE_RANKS = new Set([2, 3, 7, 8, 9, 10]);

/** A plain comparable value: not null/missing, not a document, array or regex. */
function isSimpleValue(value: unknown): boolean {
  if (value === null || value === undefined || Array.isArray(value) || value instanceof RegExp) return false;
  if (isPlainObject(value)) return false;
  const rank = typeRank(value);
  return RANGE_RANKS.has(rank) || rank === 6;
}

/** Values a query compares against at a path: each reached value and, for arrays, their elements. */
function candidates(doc: Document, parts: string[]): unknown[] {
  if (parts.length === 1) {
    const v = doc[parts[0]];
    if (v === undefined) return [];
    return Array.isArray(v) ? [...(v as unknown[]), v] : [v];
  }
  const out: unknown[] = [];
  for (const v of collectPathValues(doc, parts)) {
    if (Array.isArray(v)) out.push(...(v as unknown[]));
    out.push(v);
  }
  return out;
}

type FieldTest = (values: unknown[]) => boolean;

function equalsAny(target: unknown): FieldTest {
  return (values) => values.some((v) => valuesEqual(v, target));
}

function rangeTest(op: string, bound: unknown): FieldTest | undefined {
  const rank = typeRank(bound);
  if (!RANGE_RANKS.has(rank)) return undefined;
  const ok =
    op === '$gt' ? (c: number) => c > 0 : op === '$gte' ? (c: number) => c >= 0 : op === '$lt' ? (c: number) => c < 0 : (c: number) => c <= 0;
  return (values) => values.some((v) => typeRank(v) === rank && ok(compareValues(v, bound)));
}

function fieldTest(condition: unknown): FieldTest | undefined {
  if (!isPlainObject(condition)) return isSimpleValue(condition) ? equalsAny(condition) : undefined;
  const entries = Object.entries(condition);
  if (entries.length === 0 || !entries.every(([k]) => k.startsWith('$'))) return undefined;
  const tests: FieldTest[] = [];
  for (const [op, arg] of entries) {
    switch (op) {
      case '$eq':
        if (!isSimpleValue(arg)) return undefined;
        tests.push(equalsAny(arg));
        break;
      case '$ne':
        if (!isSimpleValue(arg)) return undefined;
        tests.push((values) => !values.some((v) => valuesEqual(v, arg)));
        break;
      case '$in':
      case '$nin': {
        if (!Array.isArray(arg) || !arg.every(isSimpleValue)) return undefined;
        const list = arg as unknown[];
        const any: FieldTest = (values) => values.some((v) => list.some((t) => valuesEqual(v, t)));
        tests.push(op === '$in' ? any : (values) => !any(values));
        break;
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        const test = rangeTest(op, arg);
        if (!test) return undefined;
        tests.push(test);
        break;
      }
      case '$exists':
        tests.push(arg ? (values) => values.length > 0 : (values) => values.length === 0);
        break;
      default:
        return undefined;
    }
  }
  return tests.length === 1 ? tests[0] : (values) => tests.every((t) => t(values));
}

const LOGICAL = new Set(['$and', '$or', '$nor']);

/** Matchers for the branches of a $and/$or/$nor: a non-empty array of fast-matchable filters, else undefined. */
function branchMatchers(branches: unknown): Matcher[] | undefined {
  // An empty or non-array operand is a BadValue error: mingo reports it.
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const out: Matcher[] = [];
  for (const branch of branches as unknown[]) {
    if (!isPlainObject(branch)) return undefined;
    const m = fastMatcher(branch);
    if (!m) return undefined;
    out.push(m);
  }
  return out;
}

function logicalMatcher(op: string, branches: Matcher[]): Matcher {
  if (op === '$and') return branches.length === 1 ? branches[0] : (doc) => branches.every((m) => m(doc));
  if (op === '$or') return branches.length === 1 ? branches[0] : (doc) => branches.some((m) => m(doc));
  return (doc) => !branches.some((m) => m(doc));
}

/** A matcher for `filter` when it stays within the fast subset, else undefined. */
export function fastMatcher(filter: Document): Matcher | undefined {
  const fields: { parts: string[]; test: FieldTest }[] = [];
  const logical: Matcher[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (key.startsWith('$')) {
      if (!LOGICAL.has(key)) return undefined;
      const branches = branchMatchers(condition);
      if (!branches) return undefined;
      logical.push(logicalMatcher(key, branches));
      continue;
    }
    const test = fieldTest(condition);
    if (!test) return undefined;
    fields.push({ parts: key.split('.'), test });
  }
  const fieldMatcher = matcherOfFields(fields);
  if (logical.length === 0) return fieldMatcher;
  const all = fields.length > 0 ? [fieldMatcher, ...logical] : logical;
  return all.length === 1 ? all[0] : (doc) => all.every((m) => m(doc));
}

function matcherOfFields(fields: { parts: string[]; test: FieldTest }[]): Matcher {
  if (fields.length === 1) {
    const [{ parts, test }] = fields;
    return (doc) => test(candidates(doc, parts));
  }
  return (doc) => fields.every(({ parts, test }) => test(candidates(doc, parts)));
}
