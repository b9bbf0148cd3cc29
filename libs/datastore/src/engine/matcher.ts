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

// A matcher runs once per stored document of a scan (a user's find runs the rules' pushed-down $or over
// every document), so the paths below allocate nothing per call: loops instead of callbacks, one reused
// array for the common single plain value, and primitive strings and numbers compared without the
// general BSON comparison (same answers: equal strings, numbers with NaN equal to NaN and below all).
const NONE: unknown[] = [];
const ONE: unknown[] = [undefined];

/**
 * Values a query compares against at a path: each reached value and, for arrays, their elements. The
 * result is only valid until the next call (field tests read it at once and never call back into here).
 */
function candidates(doc: Document, parts: string[]): unknown[] {
  if (parts.length === 1) {
    const v = doc[parts[0]];
    if (v === undefined) return NONE;
    if (Array.isArray(v)) return [...(v as unknown[]), v];
    ONE[0] = v;
    return ONE;
  }
  const out: unknown[] = [];
  for (const v of collectPathValues(doc, parts)) {
    if (Array.isArray(v)) out.push(...(v as unknown[]));
    out.push(v);
  }
  return out;
}

/**
 * A test of the values at a path. `direct`, when present, answers for a stored value that is a primitive
 * string or number (no array to expand, no BSON wrapper), the common case, without building the values.
 */
type FieldTest = ((values: unknown[]) => boolean) & { direct?: (value: string | number) => boolean };

function withDirect(test: (values: unknown[]) => boolean, direct: (value: string | number) => boolean): FieldTest {
  return Object.assign(test, { direct });
}

function equalsAny(target: unknown): FieldTest {
  if (typeof target === 'string') {
    return withDirect(
      (values) => {
        for (let i = 0; i < values.length; i++) {
          const v = values[i];
          if (typeof v === 'string' ? v === target : valuesEqual(v, target)) return true;
        }
        return false;
      },
      (v) => v === target,
    );
  }
  if (typeof target === 'number') {
    const nan = Number.isNaN(target);
    const same = (v: number): boolean => v === target || (nan && Number.isNaN(v));
    return withDirect(
      (values) => {
        for (let i = 0; i < values.length; i++) {
          const v = values[i];
          if (typeof v === 'number' ? same(v) : valuesEqual(v, target)) return true;
        }
        return false;
      },
      (v) => typeof v === 'number' && same(v),
    );
  }
  return (values) => {
    for (let i = 0; i < values.length; i++) if (valuesEqual(values[i], target)) return true;
    return false;
  };
}

function equalsAnyOf(values: unknown[], list: unknown[]): boolean {
  for (let i = 0; i < values.length; i++) for (let j = 0; j < list.length; j++) if (valuesEqual(values[i], list[j])) return true;
  return false;
}

function rangeTest(op: string, bound: unknown): FieldTest | undefined {
  const rank = typeRank(bound);
  if (!RANGE_RANKS.has(rank)) return undefined;
  const ok =
    op === '$gt' ? (c: number) => c > 0 : op === '$gte' ? (c: number) => c >= 0 : op === '$lt' ? (c: number) => c < 0 : (c: number) => c <= 0;
  if (typeof bound === 'number' && !Number.isNaN(bound)) {
    // NaN sorts below every other number.
    const number = (v: number): boolean => ok(Number.isNaN(v) ? -1 : v < bound ? -1 : v > bound ? 1 : 0);
    return withDirect(
      (values) => {
        for (let i = 0; i < values.length; i++) {
          const v = values[i];
          if (typeof v === 'number' ? number(v) : typeRank(v) === rank && ok(compareValues(v, bound))) return true;
        }
        return false;
      },
      (v) => typeof v === 'number' && number(v),
    );
  }
  return (values) => {
    for (let i = 0; i < values.length; i++) if (typeRank(values[i]) === rank && ok(compareValues(values[i], bound))) return true;
    return false;
  };
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
        {
          const equals = equalsAny(arg);
          const ne = (values: unknown[]): boolean => !equals(values);
          const { direct } = equals;
          tests.push(direct ? withDirect(ne, (v) => !direct(v)) : ne);
        }
        break;
      case '$in':
      case '$nin': {
        if (!Array.isArray(arg) || !arg.every(isSimpleValue)) return undefined;
        const list = arg as unknown[];
        const any: FieldTest = (values) => equalsAnyOf(values, list);
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
  if (tests.length === 1) return tests[0];
  const all = (values: unknown[]): boolean => {
    for (let i = 0; i < tests.length; i++) if (!tests[i](values)) return false;
    return true;
  };
  if (!tests.every((t) => t.direct)) return all;
  const directs = tests.map((t) => t.direct as (value: string | number) => boolean);
  return withDirect(all, (v) => {
    for (let i = 0; i < directs.length; i++) if (!directs[i](v)) return false;
    return true;
  });
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

function allOf(matchers: Matcher[]): Matcher {
  if (matchers.length === 1) return matchers[0];
  return (doc) => {
    for (let i = 0; i < matchers.length; i++) if (!matchers[i](doc)) return false;
    return true;
  };
}

function anyOf(matchers: Matcher[]): Matcher {
  if (matchers.length === 1) return matchers[0];
  return (doc) => {
    for (let i = 0; i < matchers.length; i++) if (matchers[i](doc)) return true;
    return false;
  };
}

function logicalMatcher(op: string, branches: Matcher[]): Matcher {
  if (op === '$and') return allOf(branches);
  if (op === '$or') return anyOf(branches);
  const any = anyOf(branches);
  return (doc) => !any(doc);
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
  return allOf(fields.length > 0 ? [fieldMatcher, ...logical] : logical);
}

function matcherOfFields(fields: { parts: string[]; test: FieldTest }[]): Matcher {
  return allOf(fields.map(({ parts, test }) => fieldMatcher(parts, test)));
}

function fieldMatcher(parts: string[], test: FieldTest): Matcher {
  const { direct } = test;
  if (parts.length !== 1 || !direct) return (doc) => test(candidates(doc, parts));
  const key = parts[0];
  return (doc) => {
    const v = doc[key];
    return typeof v === 'string' || typeof v === 'number' ? direct(v) : test(candidates(doc, parts));
  };
}
