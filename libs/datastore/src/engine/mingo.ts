/**
 * The one place the embedded engine reaches mingo: query matching, projection and aggregation with every
 * operator registered, and mingo's failures turned into MongoDB-shaped errors.
 */
import 'mingo/init/system';
import { Aggregator, Query } from 'mingo';
import { $in as mingoIn } from 'mingo/operators/query';
import { $regexFind, $regexFindAll, $regexMatch } from 'mingo/operators/expression';
import { ComputeOptions, Context, type CollectionResolver, type Options, computeValue, initOptions } from 'mingo/core';
import { $bucket as mingoBucket, $redact as mingoRedact, $setWindowFields as mingoSetWindowFields } from 'mingo/operators/pipeline';
import { Double, Int32, Long } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import { type Iterator } from 'mingo/lazy';
import { type Document, collationActive, isPlainObject, normalizeSpec, originalOf, promoteNumbers } from '../bson/values';
import {
  collatedPipelineOperators,
  collatedQueryOperators,
  collatedSetWindowFields,
  comparingExpressions,
  graphLookup,
  group,
  lookup,
  orderingAccumulators,
  queryOperators,
  sortByCount,
} from './collated-operators';
import { bucketAuto, densify, fill, linearFill } from './mongo-stages';
import { checkSort, sortDocuments } from './sort';
import { fastMatcher } from './matcher';
import { checkStages } from './stage-checks';
import { prepareFilter, regexExpressionOperators, regexQueryOperators } from './regex-filter';
import { typeExpression } from './type-operator';
import { plainExpressionOperators, typedAccumulators, typedValue, typedWindowOperators } from './typed-expressions';
import { computedFieldOperator, projector, restoring, typedBucket, typedStages } from './typed-stages';

function translate(error: unknown): never {
  if (error instanceof DatastoreError) throw error;
  const message = error instanceof Error ? error.message : String(error);
  const stage = /unregistered pipeline operator (\$\w+)/.exec(message);
  if (stage) throw new DatastoreError('BadValue', `Unrecognized pipeline stage name: '${stage[1]}'`, { cause: error, code: 40324 });
  const unknown = /unknown (?:query |top level |pipeline |expression |projection )?operator:? ?'?(\$\w+)'?/i.exec(message);
  if (unknown) throw new DatastoreError('BadValue', `unknown operator: ${unknown[1]}`, { cause: error });
  // A JavaScript failure inside mingo (a malformed argument it did not check) says nothing a caller can use
  // and names engine internals: answer with MongoDB's kind of error, keep the original as the cause.
  if (error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError) {
    throw new DatastoreError('BadValue', 'invalid argument to an aggregation stage, expression or query operator', { cause: error });
  }
  throw new DatastoreError('BadValue', message, { cause: error });
}

export type Matcher = (doc: Document) => boolean;

/**
 * Shared options: no script operators ($where, $function, $accumulator run JavaScript in this process;
 * functions have their own sandbox), and one context built once instead of per query.
 */
const OPTIONS: Options = ComputeOptions.init(initOptions({ scriptEnabled: false }));

// $sort in pipelines follows MongoDB's BSON order (arrays by their smallest or largest element, types in
// BSON order) like find does, instead of mingo's own ordering. Registered first, so it wins over mingo's.
OPTIONS.context.addPipelineOps({
  $sort: (collection: Iterator, spec: unknown) => collection.transform((docs) => sortDocuments(docs as Document[], checkSort(spec) ?? {})),
});

/** True when `value` names one of the operators that run caller-supplied JavaScript, at any depth. */
function namesScript(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(namesScript);
  if (!isPlainObject(value)) return false;
  return Object.entries(value).some(([key, v]) => key === '$function' || key === '$accumulator' || key === '$where' || namesScript(v));
}

/**
 * mingo computes $setWindowFields' outputs through its own `$function` with a JavaScript closure, which the
 * engine's scriptEnabled: false refuses, so the stage failed whatever it asked. It runs with scripts on
 * for mingo's closure only: a stage naming a script operator itself keeps the refusal.
 */
function setWindowFields(collection: Iterator, expr: unknown, options: Options): Iterator {
  if (namesScript(expr)) return mingoSetWindowFields(collection, expr, options);
  const base = options instanceof ComputeOptions ? options.getOptions() : options;
  return mingoSetWindowFields(collection, expr, initOptions({ ...base, scriptEnabled: true }));
}

// Stages and operators whose results keep MongoDB's number types (typed-expressions.ts, typed-stages.ts): a
// document travels between stages as the promoted copy of its stored form, and each stage that builds
// documents builds them stored. mingo's own expression operators are given promoted values only.
OPTIONS.context.addPipelineOps(typedStages);
OPTIONS.context.addPipelineOps({ $group: group, $sortByCount: sortByCount, $graphLookup: graphLookup });
OPTIONS.context.addPipelineOps({ $setWindowFields: restoring(setWindowFields, true), $bucket: restoring(typedBucket(mingoBucket), false), $redact: restoring(mingoRedact, true) });
const accumulators = { ...typedAccumulators, ...orderingAccumulators };
// mingo's $max and $min skip strings, its $top and $bottom answer arrays: these order values as MongoDB does.
OPTIONS.context.addAccumulatorOps(accumulators);
// Registered before every other expression operator: the first registration of a name wins.
OPTIONS.context.addExpressionOps({ ...plainExpressionOperators(accumulators), ...computedFieldOperator });
OPTIONS.context.addWindowOps(typedWindowOperators);
// mingo's $all matches arrays only: this one matches as MongoDB does (see collated-operators.ts).
OPTIONS.context.addQueryOps(queryOperators);
// mingo's concise $lookup ran its pipeline over the whole foreign collection: this one over the matches.
OPTIONS.context.addPipelineOps({ $lookup: lookup });
// mingo's comparing expressions compare as its queries do: these compare whole values, missing below null.
OPTIONS.context.addExpressionOps(comparingExpressions);
// mingo's $bucketAuto fails on mixed types, its $densify partitions by strings only, its $fill is refused (it
// calls mingo's $setWindowFields itself, without the scripts that stage needs) and its $linearFill fails on a
// partition that begins with null: see mongo-stages.ts.
OPTIONS.context.addPipelineOps({ $bucketAuto: restoring(bucketAuto, false), $densify: restoring(densify, true), $fill: restoring(fill, true) });
OPTIONS.context.addWindowOps({ $linearFill: linearFill });

// Regex conditions are compiled by prepareFilter into operators of this engine (see regex-filter.ts); a
// pipeline's $match gets the same preparation as find.
OPTIONS.context.addQueryOps(regexQueryOperators(mingoIn as never));
OPTIONS.context.addExpressionOps(regexExpressionOperators({ $regexMatch, $regexFind, $regexFindAll } as never));
// mingo's $range builds whatever array it is asked for (`{$range: [0, 1e9]}` holds the event loop and every
// app of the process until memory runs out) and loops forever on an infinite bound: MongoDB's argument checks
// and its memory limit (internalQueryMaxRangeBytes, 64 MiB at 16 bytes a value) are applied first.
OPTIONS.context.addExpressionOps({ $range: boundedRange });
// mingo's $type sees the promoted copy (every number a JS number): this one reads a field as stored.
OPTIONS.context.addExpressionOps({ $type: typeExpression((obj, expr, options: Options) => typedValue(obj, expr, options)) });
OPTIONS.context.addPipelineOps({
  $match: (collection: Iterator, expr: unknown, options: Options) => {
    // Under a collation the fast matcher is quicker than mingo's collated operators (it compares by it too).
    const fast = collationActive() && isPlainObject(expr) ? fastMatcher(expr) : undefined;
    if (fast) return collection.filter((doc) => fast(doc as Document));
    const query = new Query(prepareFilter(expr as Document), options);
    return collection.filter((doc) => query.test(doc as Document));
  },
});

const MAX_RANGE_BYTES = 64 * 1024 * 1024;
const RANGE_VALUE_BYTES = 16;

function rangeArgument(value: unknown, what: string): number {
  const number = typeof value === 'number' ? value : value instanceof Int32 || value instanceof Double ? value.value : value instanceof Long ? value.toNumber() : Number.NaN;
  if (!Number.isInteger(number) || number < -0x80000000 || number > 0x7fffffff) throw new DatastoreError('BadValue', `$range requires a ${what} that can be represented as a 32-bit integer, found value: ${String(value)}`);
  return number;
}

function boundedRange(obj: unknown, expr: unknown, options: Options): unknown {
  const args: unknown = computeValue(obj, expr, null, options);
  if (!Array.isArray(args) || args.length < 2 || args.length > 3) throw new DatastoreError('BadValue', '$range requires 2 or 3 arguments');
  const start = rangeArgument(args[0], 'starting value');
  const end = rangeArgument(args[1], 'ending value');
  const step = args.length === 3 ? rangeArgument(args[2], 'step value') : 1;
  if (step === 0) throw new DatastoreError('BadValue', '$range requires a non-zero step value');
  const length = Math.max(0, Math.ceil((end - start) / step));
  const bytes = length * RANGE_VALUE_BYTES;
  if (bytes >= MAX_RANGE_BYTES) throw new DatastoreError('ExceededMemoryLimit', `$range would use too much memory (${bytes} bytes) and cannot spill to disk. Memory limit: ${MAX_RANGE_BYTES} bytes`);
  return Array.from({ length }, (_unused, i) => start + i * step);
}

/** `let` variables of an operation, visible as `$$name` in its expressions. */
export type Variables = Document;

let collated: Options | undefined;

/**
 * The options while a locale's collation is active: a context in which the operators of collated-operators.ts
 * replace mingo's comparing ones (the first context given to Context.merge wins), everything else as in
 * OPTIONS. Built on first use, after every registration above.
 */
function collatedOptions(): Options {
  if (!collated) {
    const overrides = Context.init({
      query: { ...collatedQueryOperators, ...regexQueryOperators(collatedQueryOperators.$in as never) },
      pipeline: { $bucket: restoring(typedBucket(collatedPipelineOperators.$bucket), false), $setWindowFields: restoring(collatedSetWindowFields(setWindowFields), true) },
    });
    collated = ComputeOptions.init(initOptions({ ...(OPTIONS as ComputeOptions).getOptions(), context: Context.merge(overrides, OPTIONS.context) }));
  }
  return collated;
}

/** mingo's options for the comparison now active: the collated ones under a locale, else the shared ones. */
function activeOptions(): Options {
  return collationActive() ? collatedOptions() : OPTIONS;
}

/** The active options with a resolver and `let` variables (given stored: mingo reads their promoted copy, typed expressions the stored values). */
function optionsWith(resolver: CollectionResolver | undefined, variables?: Variables): Options {
  const base = activeOptions();
  if (!resolver && !variables) return base;
  return ComputeOptions.init(
    initOptions({ ...(base as ComputeOptions).getOptions(), ...(resolver ? { collectionResolver: resolver } : {}), ...(variables ? { variables: promoteNumbers(variables) as Variables } : {}) }),
  );
}

const matchAll: Matcher = () => true;

/** Compiles a query filter; throws BadValue for unknown operators. */
export function compileFilter(filter: Document | undefined, variables?: Variables): Matcher {
  if (!filter || Object.keys(filter).length === 0) return matchAll;
  const fast = fastMatcher(filter);
  if (fast) return fast;
  let query: Query;
  try {
    query = new Query(prepareFilter(filter), optionsWith(undefined, variables));
  } catch (error) {
    translate(error);
  }
  return (doc) => {
    try {
      return query.test(promoteNumbers(doc) as Document);
    } catch (error) {
      translate(error);
    }
  };
}

/** A resolver whose documents mingo computes over as it does over the input (see promoteNumbers). */
function promotingResolver(resolver: CollectionResolver | undefined): CollectionResolver | undefined {
  return resolver && ((name: string) => resolver(name).map((doc) => promoteNumbers(doc) as Document));
}

/**
 * Runs a pipeline over stored documents. mingo computes over their promoted copies (promoteNumbers) and every
 * stage that builds documents builds them in stored form (typed-stages.ts), so each output is the promoted
 * copy of a stored document: its original is the answer, a number passed on or computed with its BSON type.
 */
export function runPipeline(docs: Iterable<Document>, pipeline: Document[], resolver?: CollectionResolver, variables?: Variables): Document[] {
  checkStages(pipeline);
  try {
    // Every number a JS number for mingo, the caller's literal types kept for typed expressions.
    const aggregator = new Aggregator(normalizeSpec(pipeline) as Document[], optionsWith(promotingResolver(resolver), variables));
    const promoted: Document[] = [];
    for (const doc of docs) promoted.push(promoteNumbers(doc) as Document);
    return aggregator.run<Document>(promoted).map((doc) => originalOf(doc));
  } catch (error) {
    translate(error);
  }
}

/** Evaluates `let` definitions (expressions over no document, as MongoDB does) into their values. */
export function evaluateVariables(definitions: Document): Variables {
  if (Object.keys(definitions).length === 0) return {};
  const [values] = runPipeline([{}], [{ $set: definitions }]);
  return values ?? {};
}

/**
 * Applies a validated projection with expressions to one stored document (mingo handles $slice, $elemMatch
 * and the rest): fields it passes on keep their stored types, computed ones have MongoDB's.
 */
export function compileProjection(projection: Document): (doc: Document) => Document {
  const project = projector(projection, activeOptions());
  return (doc) => {
    try {
      return originalOf(project([promoteNumbers(doc) as Document])[0]);
    } catch (error) {
      translate(error);
    }
  };
}

/** A compiled condition over values that may hold stored numbers (Double, Long). */
export interface ValueQuery {
  test(value: unknown): boolean;
}

/** A mingo Query with the active options (array filters, $pull conditions, projections' $elemMatch). */
export function mingoQuery(condition: Document): ValueQuery {
  let query: Query;
  try {
    query = new Query(prepareFilter(condition), activeOptions());
  } catch (error) {
    translate(error);
  }
  return { test: (value) => query.test(promoteNumbers(value) as Document) };
}
