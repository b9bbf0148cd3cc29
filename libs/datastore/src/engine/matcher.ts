/**
 * A fast matcher for the filters most calls use (fields compared to plain values with equality, $eq, $ne,
 * $in, $nin, $gt, $gte, $lt, $lte, $exists, combined with $and, $or and $nor whose branches are themselves
 * in this subset), with MongoDB's array and type-bracketing semantics. Building a mingo Query costs tens of
 * microseconds, which dominates a point query, and mingo's per-document test is several times slower than
 * this one; anything outside this subset still goes to mingo.
 */
import { type Document, collationActive, collectPathValues, compareValues, isPlainObject, typeRank, valuesEqual } from '../bson/values';

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

type FieldTest = (values: unknown[]) => boolean;

function equalsAny(target: unknown): FieldTest {
  if (typeof target === 'string') {
    // Under a collation strings are equal by the collator (compareValues consults it), not by code point.
    if (collationActive()) return (values) => equalsAnyOf(values, [target]);
    return (values) => {
      for (let i = 0; i < values.length; i++) {
        const v = values[i];
        if (typeof v === 'string' ? v === target : valuesEqual(v, target)) return true;
      }
      return false;
    };
  }
  if (typeof target === 'number') {
    const nan = Number.isNaN(target);
    const same = (v: number): boolean => v === target || (nan && Number.isNaN(v));
    return (values) => {
      for (let i = 0; i < values.length; i++) {
        const v = values[i];
        if (typeof v === 'number' ? same(v) : valuesEqual(v, target)) return true;
      }
      return false;
    };
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
    return (values) => {
      for (let i = 0; i < values.length; i++) {
        const v = values[i];
        if (typeof v === 'number' ? number(v) : typeRank(v) === rank && ok(compareValues(v, bound))) return true;
      }
      return false;
    };
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
          tests.push((values) => !equals(values));
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
  return (values) => {
    for (let i = 0; i < tests.length; i++) if (!tests[i](values)) return false;
    return true;
  };
}

const LOGICAL = new Set(['$and', '$or', '$nor']);

/**
 * Filters in the fast subset are compiled to one JavaScript function per filter *shape*: the operators,
 * their nesting and the kinds of their operands, with every field name and value passed in as data, so
 * the generated source never contains anything from the filter and a handful of shapes cover every
 * call. Comparisons of a plain string or number stored at a top-level field are written inline (the
 * common case: rules' pushed-down `$or`s, equality and range filters); anything else (arrays, BSON
 * wrappers, dotted paths, `$in`, `$exists`) calls the field's general test, with the same answers.
 */
interface Compilation {
  /** Per field: its general test, its path and its top-level key. */
  tests: FieldTest[];
  paths: string[][];
  keys: string[];
  /** Operands of the inline comparisons. */
  values: unknown[];
}

type Factory = (tests: FieldTest[], collect: typeof candidates, paths: string[][], keys: string[], values: unknown[]) => Matcher;

const factories = new Map<string, Factory>();
const MAX_SHAPES = 256;
/**
 * Larger or deeper filters are left to mingo: compiling one costs time and memory in proportion to its
 * size, and a filter can come from an untrusted client (a 16 MB `$or` would hold the event loop for
 * seconds and stay cached). Rules' pushed-down filters and hand-written queries stay far below these.
 */
const MAX_COMPILED_FIELDS = 64;
const MAX_COMPILED_DEPTH = 16;

/** A matcher for `filter` when it stays within the fast subset, else undefined. */
export function fastMatcher(filter: Document): Matcher | undefined {
  const compilation: Compilation = { tests: [], paths: [], keys: [], values: [] };
  const body = emitFilter(filter, compilation);
  if (body === undefined) return undefined;
  let factory = factories.get(body);
  if (!factory) {
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the source is built from fixed templates only (see above)
    factory = new Function('T', 'C', 'P', 'K', 'X', `'use strict'; return function match(doc) { let v; return ${body}; };`) as Factory;
    if (factories.size >= MAX_SHAPES) factories.delete(factories.keys().next().value as string);
    factories.set(body, factory);
  }
  return factory(compilation.tests, candidates, compilation.paths, compilation.keys, compilation.values);
}

/** The expression for a filter document (`doc` is the stored document), or undefined outside the subset. */
function emitFilter(filter: Document, compilation: Compilation, depth = 0): string | undefined {
  if (depth > MAX_COMPILED_DEPTH) return undefined;
  const clauses: string[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (compilation.tests.length >= MAX_COMPILED_FIELDS) return undefined;
    if (key.startsWith('$')) {
      if (!LOGICAL.has(key)) return undefined;
      // An empty or non-array operand is a BadValue error: mingo reports it.
      if (!Array.isArray(condition) || condition.length === 0) return undefined;
      const branches: string[] = [];
      for (const branch of condition as unknown[]) {
        if (!isPlainObject(branch)) return undefined;
        const code = emitFilter(branch, compilation, depth + 1);
        if (code === undefined) return undefined;
        branches.push(code);
      }
      if (key === '$and') clauses.push(`(${branches.join(' && ')})`);
      else if (key === '$or') clauses.push(`(${branches.join(' || ')})`);
      else clauses.push(`!(${branches.join(' || ')})`);
      continue;
    }
    const test = fieldTest(condition);
    if (!test) return undefined;
    clauses.push(emitField(key, condition, test, compilation));
  }
  return clauses.length === 0 ? 'true' : `(${clauses.join(' && ')})`;
}

function emitField(key: string, condition: unknown, test: FieldTest, compilation: Compilation): string {
  const i = compilation.tests.length;
  compilation.tests.push(test);
  const parts = key.split('.');
  compilation.paths.push(parts);
  compilation.keys.push(key);
  const general = `T[${i}](C(doc, P[${i}]))`;
  // The inline comparisons are by code point: a collation's matcher compares strings through compareValues.
  const inline = parts.length === 1 && !collationActive() ? inlineComparison(condition, compilation) : undefined;
  if (!inline) return general;
  return `((v = doc[K[${i}]]), typeof v === 'number' ? ${inline.number} : typeof v === 'string' ? ${inline.string} : ${general})`;
}

/** A primitive operand the inline comparisons handle: a string, or a number that is not NaN. */
function inlineOperand(value: unknown): value is string | number {
  return typeof value === 'string' || (typeof value === 'number' && !Number.isNaN(value));
}

/**
 * The condition on a plain number `v` and on a plain string `v`, written out; undefined when the
 * condition has an operator or operand these do not cover. Strings and numbers never compare equal and
 * are never in range of each other (different BSON types); NaN sorts below every other number.
 */
function inlineComparison(condition: unknown, compilation: Compilation): { number: string; string: string } | undefined {
  const operand = (value: unknown): string => {
    compilation.values.push(value);
    return `X[${compilation.values.length - 1}]`;
  };
  const equality = (value: string | number): { number: string; string: string } =>
    typeof value === 'number' ? { number: `v === ${operand(value)}`, string: 'false' } : { number: 'false', string: `v === ${operand(value)}` };
  if (!isPlainObject(condition)) return inlineOperand(condition) ? equality(condition) : undefined;
  const numbers: string[] = [];
  const strings: string[] = [];
  for (const [op, arg] of Object.entries(condition)) {
    if (!inlineOperand(arg)) return undefined;
    let part: { number: string; string: string };
    switch (op) {
      case '$eq':
        part = equality(arg);
        break;
      case '$ne': {
        const eq = equality(arg);
        part = { number: `!(${eq.number})`, string: `!(${eq.string})` };
        break;
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        const js = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
        const x = operand(arg);
        if (typeof arg === 'number') part = { number: op === '$lt' || op === '$lte' ? `(v ${js} ${x} || v !== v)` : `v ${js} ${x}`, string: 'false' };
        else part = { number: 'false', string: `v ${js} ${x}` };
        break;
      }
      default:
        return undefined;
    }
    numbers.push(part.number);
    strings.push(part.string);
  }
  if (numbers.length === 0) return undefined;
  return { number: `(${numbers.join(' && ')})`, string: `(${strings.join(' && ')})` };
}
