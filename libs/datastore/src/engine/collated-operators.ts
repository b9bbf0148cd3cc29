/**
 * The operators the engine gives mingo in place of its comparing ones, in two groups (wired in mingo.ts).
 *
 * In both contexts, because mingo answers otherwise than MongoDB whatever the collation: `$all` (mingo's
 * matches arrays only), the expressions that compare ($eq ... $cmp, $in, $indexOfArray, $setEquals and
 * $setIsSubset: mingo's match an array's elements and take a missing value for null; the set operators that
 * answer values are typed-expressions.ts's), `$lookup` and `$graphLookup`
 * (mingo's concise form ran its pipeline over the whole foreign collection), `$group` and `$sortByCount`
 * (their keys and results keep stored number types), and the accumulators that order or compare values
 * ($max, $min, $maxN, $minN, $top, $bottom, $topN, $bottomN, $addToSet: mingo's skip strings or answer arrays).
 *
 * Only while a locale's collation is active, because mingo compares strings by code point wherever it
 * compares (its `compare` and `isEqual`, maps keyed by value): the query operators $eq ... $in ($elemMatch,
 * $not, $expr and the logical operators reach them through the context), and the stages that match or
 * group values ($bucket, $setWindowFields). A query operator whose operand holds no string hands
 * over to mingo's own, whose answer a collation cannot change.
 *
 * All compare through compareValues, which consults the comparison withCollation made active (binary without
 * one), so they must run inside it. $regex, $type, field names and $strcasecmp are not collated (nor in MongoDB).
 */
import { type AccumulatorOperator, ComputeOptions, type ExpressionOperator, type Options, type PipelineOperator, type QueryOperator, computeValue } from 'mingo/core';
import { type Iterator, Lazy } from 'mingo/lazy';
import { $bottomN as mingoBottomN, $topN as mingoTopN } from 'mingo/operators/accumulator';
import { $bucket as mingoBucket, $group as mingoGroup, $lookup as mingoLookup } from 'mingo/operators/pipeline';
import { $elemMatch as mingoElemMatch, $eq as mingoEq, $gt as mingoGt, $gte as mingoGte, $lt as mingoLt, $lte as mingoLte, $ne as mingoNe, $in as mingoIn } from 'mingo/operators/query';
import { HashMap, ensureArray, flatten, resolve, setValue } from 'mingo/util';
import { Long } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import {
  type Document,
  asPromotedCopy,
  collectPathValues,
  compareValues,
  holdsString,
  isPlainObject,
  originalOf,
  promoteNumbers,
  storedOf,
  typeName,
  typeRank,
  valuesEqual,
} from '../bson/values';
import { numericKind } from '../bson/numeric';
import { collatedKeyOf, collatedKeys, mapKey, uniqueValues } from './collated-keys';
import { checkSort, sortDocuments, sortKeys } from './sort';
import { typedPush, typedValue } from './typed-expressions';

type Predicate = (doc: unknown) => boolean;

function badValue(message: string): DatastoreError {
  return new DatastoreError('BadValue', message);
}

// ---- query operators ----

/** What a query compares at a path: each value reached and, for an array, its elements too. */
function valuesAt(doc: unknown, parts: string[]): unknown[] {
  const out: unknown[] = [];
  for (const v of collectPathValues(doc, parts)) {
    if (Array.isArray(v)) out.push(...(v as unknown[]));
    out.push(v);
  }
  return out;
}

function equalTo(selector: string, target: unknown): Predicate {
  const parts = selector.split('.');
  return (doc) => valuesAt(doc, parts).some((v) => valuesEqual(v, target));
}

function negated(predicate: Predicate): Predicate {
  return (doc) => !predicate(doc);
}

function rangeOperator(builtin: QueryOperator, ok: (c: number) => boolean): QueryOperator {
  return (selector, value, options) => {
    if (!holdsString(value)) return builtin(selector, value, options);
    const parts = selector.split('.');
    const rank = typeRank(value);
    return (doc) => valuesAt(doc, parts).some((v) => typeRank(v) === rank && ok(compareValues(v, value)));
  };
}

const $eq: QueryOperator = (selector, value, options) => (holdsString(value) ? equalTo(selector, value) : mingoEq(selector, value, options));

const $in: QueryOperator = (selector, value, options) => {
  if (!Array.isArray(value) || !value.some(holdsString)) return mingoIn(selector, value, options);
  const parts = selector.split('.');
  const list = value as unknown[];
  const matchesMissing = list.some((v) => v === null);
  return (doc) => {
    const values = valuesAt(doc, parts);
    if (values.length === 0) return matchesMissing;
    return values.some((v) => list.some((item) => valuesEqual(v, item)));
  };
};

/**
 * `$all` as MongoDB reads it, an $and of its members at the field whatever the field holds (mingo's matches
 * arrays only): each an equality (a regex, an $elemMatch, null as {field: null}); an empty one matches nothing.
 * Registered in both contexts: its equalities compare strings by the active comparison.
 */
const $all: QueryOperator = (selector, value, options) => {
  if (!Array.isArray(value)) throw badValue('$all needs an array');
  if (value.length === 0) return () => false;
  const parts = selector.split('.');
  const tests = (value as unknown[]).map((member): Predicate => {
    // mingo's $elemMatch runs its condition with these options: by the collated operators under a collation.
    if (isPlainObject(member) && '$elemMatch' in member) return mingoElemMatch(selector, member.$elemMatch, options) as Predicate;
    if (member instanceof RegExp) return (doc) => valuesAt(doc, parts).some((v) => typeof v === 'string' && member.test(v));
    if (member === null) return mingoEq(selector, null, options) as Predicate;
    return equalTo(selector, member);
  });
  return (doc) => tests.every((test) => test(doc));
};

/** The query operators of both contexts. */
export const queryOperators: Record<string, QueryOperator> = { $all };

/** The query operators of the collated context, with `$in` to wrap in the regex-aware one (regex-filter.ts). */
export const collatedQueryOperators: Record<string, QueryOperator> & { $in: QueryOperator } = {
  $eq,
  $ne: (selector, value, options) => (holdsString(value) ? negated(equalTo(selector, value)) : mingoNe(selector, value, options)),
  $gt: rangeOperator(mingoGt, (c) => c > 0),
  $gte: rangeOperator(mingoGte, (c) => c >= 0),
  $lt: rangeOperator(mingoLt, (c) => c < 0),
  $lte: rangeOperator(mingoLte, (c) => c <= 0),
  $in,
};

// ---- expression operators ----

/** Aggregation's order of values: BSON order, a missing value below null (MongoDB's Value comparison). */
function expressionCompare(a: unknown, b: unknown): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? -1 : 1;
  return compareValues(a, b);
}

function expressionEqual(a: unknown, b: unknown): boolean {
  return expressionCompare(a, b) === 0;
}

function argumentsOf(obj: unknown, expr: unknown, options: Options, name: string, count?: number): unknown[] {
  const args: unknown = computeValue(obj, expr, null, options);
  const list = Array.isArray(args) ? (args as unknown[]) : [args];
  if (count !== undefined && list.length !== count) throw badValue(`Expression ${name} takes exactly ${count} arguments. ${list.length} were passed in.`);
  return list;
}

function comparison(name: string, answer: (c: number) => unknown): ExpressionOperator {
  return (obj, expr, options) => {
    const [a, b] = argumentsOf(obj, expr, options, name, 2);
    return answer(expressionCompare(a, b));
  };
}

function arraysOf(args: unknown[], name: string): unknown[][] {
  for (const arg of args) if (!Array.isArray(arg)) throw badValue(`All operands of ${name} must be arrays. One argument is of type: ${typeName(arg)}`);
  return args as unknown[][];
}

const isNil = (value: unknown): boolean => value === null || value === undefined;

const setOperators: Record<string, ExpressionOperator> = {
  $setEquals: (obj, expr, options) => {
    const args = argumentsOf(obj, expr, options, '$setEquals');
    if (args.length < 2) throw badValue(`$setEquals needs at least two arguments had: ${args.length}`);
    const keyOf = collatedKeyOf();
    const sets = arraysOf(args, '$setEquals').map((values) => new Set(values.map(keyOf)));
    return sets.every((set) => set.size === sets[0].size && [...set].every((key) => sets[0].has(key)));
  },
  $setIsSubset: (obj, expr, options) => {
    const [first, second] = arraysOf(argumentsOf(obj, expr, options, '$setIsSubset', 2), '$setIsSubset');
    const keyOf = collatedKeyOf();
    const superset = new Set(second.map(keyOf));
    return first.every((v) => superset.has(keyOf(v)));
  },
};

/**
 * The expressions that compare values, registered in both contexts: mingo's compare as its queries do (an
 * array equal to any of its elements, a missing value equal to null, values of different types never
 * ordered, documents equal whatever their field order), MongoDB's compare whole values in BSON order with a
 * missing value below null (jstests/aggregation/expressions/comparison_missing_and_key_values.js).
 */
export const comparingExpressions: Record<string, ExpressionOperator> = {
  $eq: comparison('$eq', (c) => c === 0),
  $ne: comparison('$ne', (c) => c !== 0),
  $gt: comparison('$gt', (c) => c > 0),
  $gte: comparison('$gte', (c) => c >= 0),
  $lt: comparison('$lt', (c) => c < 0),
  $lte: comparison('$lte', (c) => c <= 0),
  $cmp: comparison('$cmp', (c) => c),
  $in: (obj, expr, options) => {
    const [item, list] = argumentsOf(obj, expr, options, '$in', 2);
    if (!Array.isArray(list)) throw badValue(`$in requires an array as a second argument, found: ${list === undefined ? 'missing' : typeName(list)}`);
    return (list as unknown[]).some((v) => expressionEqual(v, item));
  },
  $indexOfArray: (obj, expr, options) => {
    const args = argumentsOf(obj, expr, options, '$indexOfArray');
    const [array, search, start = 0, end] = args;
    if (isNil(array)) return null;
    if (!Array.isArray(array)) throw badValue(`$indexOfArray requires an array as a first argument, found: ${typeName(array)}`);
    const from = Number(start);
    const to = isNil(end) ? array.length : Math.min(Number(end), array.length);
    if (!(from >= 0) || !(to >= 0)) throw badValue('$indexOfArray requires non-negative integer indexes');
    for (let i = from; i < to; i++) if (expressionEqual(array[i], search)) return i;
    return -1;
  },
  ...setOperators,
};

// ---- accumulators ----

function extremeAccumulator(sign: 1 | -1): AccumulatorOperator {
  return (collection, expr, options) => {
    let best: unknown;
    for (const value of typedPush(collection, expr, options)) {
      if (isNil(value)) continue;
      if (best === undefined || compareValues(value, best) * sign > 0) best = value;
    }
    return best ?? null;
  };
}

/** $maxN (direction -1) and $minN (1): the n greatest or least values that are not null. */
function extremesN(direction: 1 | -1): AccumulatorOperator {
  return (collection, expr, options) => {
    const copts = ComputeOptions.init(options);
    const spec = isPlainObject(expr) ? expr : {};
    const n = Number(computeValue(copts.local.groupId, spec.n, null, copts));
    const values = typedPush(collection, spec.input, options).filter((v) => !isNil(v));
    values.sort((a, b) => compareValues(a, b) * direction);
    return values.slice(0, n);
  };
}

/** $topN (from the start of the sortBy order) and $bottomN (from its end); $top and $bottom (fixedN 1) answer one value. */
function sortedN(builtin: AccumulatorOperator, fromEnd: boolean, fixedN?: number): AccumulatorOperator {
  return (collection, expr, options) => {
    if (!isPlainObject(expr) || !isPlainObject(expr.sortBy)) return builtin(collection, expr, options);
    const copts = ComputeOptions.init(options);
    const n = fixedN ?? Number(computeValue(copts.local.groupId, expr.n, null, copts));
    const sorted = sortDocuments((collection as Document[]).slice(), checkSort(expr.sortBy) ?? {});
    const kept = fromEnd ? sorted.slice(Math.max(0, sorted.length - n)) : sorted.slice(0, n);
    const out = typedPush(kept, expr.output, copts);
    return fixedN === undefined ? out : out[0];
  };
}

const maxN = extremesN(-1);
const minN = extremesN(1);

/**
 * Accumulators that order or compare values, in BSON order with strings by the active comparison (the
 * collation's when one runs, else binary), answering values as stored (typedPush). Registered in both
 * contexts: mingo's own $max and $min skip every string (they answer the first value met), its $top and
 * $bottom answer an array, its sorts are not BSON order, and its $addToSet compares strings by code point.
 */
export const orderingAccumulators: Record<string, AccumulatorOperator> = {
  $addToSet: (collection, expr, options) => uniqueValues(typedPush(collection, expr, options)),
  $max: extremeAccumulator(1),
  $min: extremeAccumulator(-1),
  $maxN: maxN,
  $minN: minN,
  $topN: sortedN(mingoTopN, false),
  $bottomN: sortedN(mingoBottomN, true),
  $top: sortedN(mingoTopN, false, 1),
  $bottom: sortedN(mingoBottomN, true, 1),
};

// ---- pipeline stages ----

/**
 * $group, in both contexts: keys equal in BSON order are one group (1, a long 1 and a double 1.0 too; strings
 * the collation calls equal), and a group's _id is the first key met, as stored (a long stays a long). Its
 * output is a promoted copy of the stored row: the accumulators answer stored values (typed-expressions.ts).
 */
export const group: PipelineOperator = (collection, expr, options) => {
  if (!isPlainObject(expr) || !('_id' in expr)) return mingoGroup(collection, expr, options);
  const { _id: idExpr, ...specs } = expr;
  const names = Object.keys(specs);
  const accumulators = Object.fromEntries(names.map((name) => [name, typedOperand(specs[name])]));
  return collection.transform((docs) => {
    const canonical = collatedKeys();
    const copts = ComputeOptions.init(options);
    const groups = new Map<unknown, { id: unknown; members: unknown[] }>();
    for (const doc of docs) {
      const id = canonical(typedValue(doc, idExpr, copts.update(doc))) ?? null;
      const key = mapKey(id);
      const entry = groups.get(key);
      if (entry) entry.members.push(doc);
      else groups.set(key, { id, members: [doc] });
    }
    const out: Document[] = [];
    for (const { id, members } of groups.values()) {
      const row: Document = { _id: id };
      const groupId = promoteNumbers(id);
      for (const name of names) row[name] = storedOf(computeValue(members, accumulators[name], null, copts.update(null, { groupId })));
      out.push(promoteNumbers(row) as Document);
    }
    return out;
  });
};

/**
 * An accumulator whose operand is a number literal of the caller's type (`{$sum: NumberLong(1)}`), with the
 * literal kept: mingo hands an accumulator its operand alone, promoted.
 */
function typedOperand(spec: unknown): unknown {
  if (!isPlainObject(spec)) return spec;
  const original = originalOf(spec);
  const [op] = Object.keys(spec);
  const literal: unknown = original === spec || op === undefined ? undefined : original[op];
  return literal !== null && typeof literal === 'object' && numericKind(literal) !== undefined ? { [op]: { $literal: literal } } : spec;
}

export const sortByCount: PipelineOperator = (collection, expr, options) =>
  group(collection, { _id: expr, count: { $sum: 1 } }, options).transform((docs) => sortDocuments(docs as Document[], { count: -1 }));

/**
 * $bucket with boundaries that hold strings: a document falls in the bucket whose bounds bracket its groupBy
 * value by the collation (values of another type than the boundaries go to `default`). Like MongoDB, only
 * buckets that received documents are output.
 */
const collatedBucket: PipelineOperator = (collection, expr, options) => {
  if (!isPlainObject(expr) || !Array.isArray(expr.boundaries) || !expr.boundaries.some(holdsString)) return mingoBucket(collection, expr, options);
  const bounds = expr.boundaries as unknown[];
  const rank = typeRank(bounds[0]);
  if (bounds.length < 2) throw badValue("$bucket requires 'boundaries' to have at least 2 values");
  for (let i = 1; i < bounds.length; i++) {
    if (typeRank(bounds[i]) !== rank) throw badValue("All values in the 'boundaries' option to $bucket must have the same type");
    if (compareValues(bounds[i - 1], bounds[i]) >= 0) throw badValue("The 'boundaries' option to $bucket must be sorted in ascending order");
  }
  const hasDefault = 'default' in expr;
  const inRange = (value: unknown): boolean => typeRank(value) === rank && compareValues(value, bounds[0]) >= 0 && compareValues(value, bounds[bounds.length - 1]) < 0;
  if (hasDefault && inRange(expr.default)) throw badValue("The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary");
  const output = isPlainObject(expr.output) ? expr.output : { count: { $sum: 1 } };
  return collection.transform((docs) => {
    const buckets = new Map<number, unknown[]>();
    const fallback: unknown[] = [];
    for (const doc of docs) {
      const value: unknown = computeValue(doc, expr.groupBy, null, options);
      if (!inRange(value)) {
        if (!hasDefault) throw badValue('$switch could not find a matching branch for an input, and no default was specified.');
        fallback.push(doc);
        continue;
      }
      let i = 0;
      while (compareValues(value, bounds[i + 1]) >= 0) i++;
      const members = buckets.get(i);
      if (members) members.push(doc);
      else buckets.set(i, [doc]);
    }
    const rows: [unknown, unknown[]][] = [...buckets.entries()].sort(([a], [b]) => a - b).map(([i, members]) => [bounds[i], members]);
    if (fallback.length > 0) rows.push([expr.default, fallback]);
    return rows.map(([key, members]) => {
      const [row] = mingoGroup(Lazy(members), { _id: null, ...output }, options).value<Document>();
      return { ...row, _id: key };
    });
  });
};

/**
 * $lookup's equality join (localField/foreignField), in both contexts: mingo's keyed its map by binary value,
 * and in the concise form with a pipeline (MongoDB 5+) ran the pipeline over the whole foreign collection
 * whenever anything matched. Here values compare by the active comparison, the pipeline runs over each
 * document's matches only, and matches keep the foreign collection's order (a scan's, as MongoDB's without
 * an index), whatever the order of a local array.
 */
export const lookup: PipelineOperator = (collection, expr, options) => {
  if (!isPlainObject(expr) || typeof expr.localField !== 'string' || typeof expr.foreignField !== 'string') return joinedByPipeline(collection, expr, options);
  const { localField, foreignField, as } = expr;
  const foreign: unknown = typeof expr.from === 'string' ? options.collectionResolver?.(expr.from) : expr.from;
  if (!Array.isArray(foreign) || typeof as !== 'string') return joinedByPipeline(collection, expr, options);
  const docs = foreign as Document[];
  const pipeline = Array.isArray(expr.pipeline) && expr.pipeline.length > 0 ? expr.pipeline : undefined;
  const keyOf = collatedKeyOf();
  // The documents whose foreignField holds each key, and their places in `docs`, in order.
  const byKey = new Map<unknown, { docs: Document[]; places: number[] }>();
  docs.forEach((doc, place) => {
    for (const value of ensureArray(resolve(doc, foreignField) ?? null) as unknown[]) {
      const key = keyOf(value);
      const entry = byKey.get(key);
      if (!entry) byKey.set(key, { docs: [doc], places: [place] });
      else if (entry.places[entry.places.length - 1] !== place) {
        entry.docs.push(doc);
        entry.places.push(place);
      }
    }
  });
  return collection.map((obj: unknown) => {
    const local: unknown = resolve(obj as Document, localField) ?? null;
    let matched: Document[];
    if (!Array.isArray(local)) matched = byKey.get(keyOf(local))?.docs.slice() ?? [];
    else {
      const found = new Set<number>();
      for (const value of local as unknown[]) for (const place of byKey.get(keyOf(value))?.places ?? []) found.add(place);
      matched = [...found].sort((a, b) => a - b).map((place) => docs[place]);
    }
    if (!pipeline) return joinedCopy(obj, as, matched);
    const [joined] = mingoLookup(Lazy([obj]), { from: matched, let: expr.let, pipeline, as }, options).value<Document>();
    return joinedCopy(obj, as, joined[as] as unknown[]);
  });
};

/**
 * `obj` with `docs` at `as`, as the promoted copy of the stored join: the joined documents keep their stored
 * types. `stored` are the documents' stored forms when the caller has them (each of `docs` is a promoted copy
 * or a document without a number to promote, as every document between stages is).
 */
function joinedCopy(obj: unknown, as: string, docs: unknown[], stored: unknown[] = docs.map(originalOf)): Document {
  const joined = { ...(obj as Document), [as]: docs };
  const original = originalOf(obj as Document);
  if (original === obj && stored.every((doc, i) => doc === docs[i])) return joined;
  return asPromotedCopy(joined, { ...original, [as]: stored });
}

/** mingo's $lookup (a pipeline with `let` and no equality), its output in the same promoted form as `lookup`'s. */
function joinedByPipeline(collection: Iterator, expr: unknown, options: Options): Iterator {
  const as = isPlainObject(expr) ? expr.as : undefined;
  if (typeof as !== 'string') return mingoLookup(collection, expr, options);
  return collection.transform((docs) => mingoLookup(Lazy(docs), expr, options).value<Document>().map((out, i) => (Array.isArray(out[as]) ? joinedCopy(docs[i], as, out[as]) : out)));
}

/**
 * mingo's $graphLookup, its equality steps by `lookup` above instead of mingo's own $lookup (in both contexts):
 * the documents found keep their stored types, and depthField is a long, as in MongoDB.
 */
export const graphLookup: PipelineOperator = (collection, expr, options) => {
  if (!isPlainObject(expr)) return collection;
  const from: unknown = typeof expr.from === 'string' ? options.collectionResolver?.(expr.from) : expr.from;
  const { connectFromField, connectToField, as, maxDepth, depthField, restrictSearchWithMatch } = expr;
  if (typeof connectFromField !== 'string' || typeof connectToField !== 'string' || typeof as !== 'string') throw badValue('$graphLookup requires connectFromField, connectToField and as as strings');
  const restrict = restrictSearchWithMatch ? { pipeline: [{ $match: restrictSearchWithMatch }] } : {};
  return collection.map((obj: unknown) => {
    const start: Document = {};
    setValue(start, connectFromField, computeValue(obj, expr.startWith, null, options));
    let frontier: unknown[] = [start];
    const found = HashMap.init(options.hashFunction) as Map<unknown, number>;
    for (let depth = 0; ; depth++) {
      const joined = lookup(Lazy(frontier), { from, localField: connectFromField, foreignField: connectToField, as, ...restrict }, options).value<Document>();
      frontier = flatten(joined.map((o) => o[as] as unknown[]));
      const before = found.size;
      for (const doc of frontier) found.set(doc, found.get(doc) ?? depth);
      if (found.size === before || (typeof maxDepth === 'number' && depth >= maxDepth)) break;
    }
    const result: Document[] = [];
    const stored: Document[] = [];
    found.forEach((depth, doc) => {
      const original = originalOf(doc as Document);
      if (typeof depthField !== 'string') {
        result.push(doc as Document);
        stored.push(original);
        return;
      }
      const copy = asPromotedCopy(Object.assign({ [depthField]: depth }, doc), Object.assign({ [depthField]: Long.fromNumber(depth) }, original));
      result.push(copy);
      stored.push(originalOf(copy));
    });
    return joinedCopy(obj, as, result, stored);
  });
};

/** A field name no stored document uses, holding a document's place in a window's collated sortBy order. */
const WINDOW_ORDER = '__tessera_window_order';
/** Window operators that read the sortBy field's values (numbers or dates, which a collation leaves alone). */
const READS_SORT_VALUES = new Set(['$derivative', '$integral', '$linearFill']);

function readsSortValues(output: Document): boolean {
  return Object.values(output).some(
    (field) =>
      isPlainObject(field) &&
      ((isPlainObject(field.window) && (field.window.range !== undefined || field.window.unit !== undefined)) || Object.keys(field).some((op) => READS_SORT_VALUES.has(op))),
  );
}

/** Deletes WINDOW_ORDER from the copies this stage made, wherever an output put them. */
function stripOrder(value: unknown, copies: WeakSet<object>): void {
  if (Array.isArray(value)) {
    for (const item of value) stripOrder(item, copies);
    return;
  }
  if (!isPlainObject(value)) return;
  if (copies.has(value)) delete value[WINDOW_ORDER];
  for (const item of Object.values(value)) stripOrder(item, copies);
}

/**
 * $setWindowFields with partitions and sortBy by the collation. mingo's stage groups partitions by binary
 * value and sorts with its own comparison, so here the documents are sorted by sortBy (sortDocuments) and
 * split by the collated partition key; each partition goes to `base` (mingo's stage) sorted by its place in
 * that order, a number equal for documents the collation ties ($rank and $denseRank then rank as MongoDB
 * does). Outputs that read sortBy's values (range windows, $derivative...) keep sortBy: those are numbers
 * or dates, which a collation does not order.
 */
export function collatedSetWindowFields(base: PipelineOperator): PipelineOperator {
  return (collection, expr, options) => {
    if (!isPlainObject(expr) || !isPlainObject(expr.output)) return base(collection, expr, options);
    const sortBy = checkSort(expr.sortBy);
    const { partitionBy, ...stage } = expr;
    const keepSort = !sortBy || Object.keys(sortBy).length === 0 || readsSortValues(expr.output);
    return collection.transform((input) => {
      const docs = sortBy ? sortDocuments(input as Document[], sortBy) : (input as Document[]);
      const keyOf = collatedKeyOf();
      const partitions = new Map<unknown, Document[]>();
      for (const doc of docs) {
        const key = partitionBy === undefined ? '' : keyOf(computeValue(doc, partitionBy, null, options));
        const members = partitions.get(key);
        if (members) members.push(doc);
        else partitions.set(key, [doc]);
      }
      const out: Document[] = [];
      for (const members of partitions.values()) {
        if (keepSort) {
          out.push(...base(Lazy(members), stage, options).value<Document>());
          continue;
        }
        const copies = new WeakSet<object>();
        let order = 0;
        let previous: unknown[] | undefined;
        const ordered = members.map((doc) => {
          const keys = sortKeys(doc, sortBy);
          if (previous && keys.some((k, i) => compareValues(k, previous?.[i]) !== 0)) order++;
          previous = keys;
          const copy = { ...doc, [WINDOW_ORDER]: order };
          copies.add(copy);
          return copy;
        });
        for (const row of base(Lazy(ordered), { ...stage, sortBy: { [WINDOW_ORDER]: 1 } }, options).value<Document>()) {
          delete row[WINDOW_ORDER];
          stripOrder(row, copies);
          out.push(row);
        }
      }
      return out;
    });
  };
}

export const collatedPipelineOperators: Record<string, PipelineOperator> = {
  $bucket: collatedBucket,
};

