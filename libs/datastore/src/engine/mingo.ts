/**
 * The one place the embedded engine reaches mingo: query matching, projection and aggregation with every
 * operator registered, and mingo's failures turned into MongoDB-shaped errors.
 */
import 'mingo/init/system';
import { Aggregator, Query } from 'mingo';
import { $in as mingoIn } from 'mingo/operators/query';
import { $regexFind, $regexFindAll, $regexMatch } from 'mingo/operators/expression';
import { ComputeOptions, Context, type CollectionResolver, type Options, computeValue, initOptions } from 'mingo/core';
import { $setWindowFields as mingoSetWindowFields } from 'mingo/operators/pipeline';
import { Double, Int32, Long } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import { type Iterator } from 'mingo/lazy';
import { type Document, collationActive, idKey, isPlainObject, promoteNumbers, restoreNumberTypes } from '../bson/values';
import {
  collatedAccumulatorOperators,
  collatedExpressionOperators,
  collatedPipelineOperators,
  collatedQueryOperators,
  collatedSetWindowFields,
  comparingExpressions,
  lookup,
  orderingAccumulators,
  orderingExpressions,
  queryOperators,
} from './collated-operators';
import { bucketAuto, densify, fill, linearFill } from './mongo-stages';
import { checkSort, sortDocuments } from './sort';
import { fastMatcher } from './matcher';
import { checkStages } from './stage-checks';
import { prepareFilter, regexExpressionOperators, regexQueryOperators } from './regex-filter';
import { typeExpression } from './type-operator';

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

OPTIONS.context.addPipelineOps({ $setWindowFields: setWindowFields });
// mingo's $max and $min skip strings, its $top and $bottom answer arrays: these order values as MongoDB does.
OPTIONS.context.addAccumulatorOps(orderingAccumulators);
// mingo's $all matches arrays only: this one matches as MongoDB does (see collated-operators.ts).
OPTIONS.context.addQueryOps(queryOperators);
// mingo's concise $lookup ran its pipeline over the whole foreign collection: this one over the matches.
OPTIONS.context.addPipelineOps({ $lookup: lookup });
// mingo's comparing expressions compare as its queries do: these compare whole values, missing below null.
OPTIONS.context.addExpressionOps(comparingExpressions);
// mingo's $bucketAuto fails on mixed types, its $densify partitions by strings only, its $fill is refused (it
// calls mingo's $setWindowFields itself, without the scripts that stage needs) and its $linearFill fails on a
// partition that begins with null: see mongo-stages.ts.
OPTIONS.context.addPipelineOps({ $bucketAuto: bucketAuto, $densify: densify, $fill: fill });
OPTIONS.context.addWindowOps({ $linearFill: linearFill });
OPTIONS.context.addExpressionOps(orderingExpressions);

// Regex conditions are compiled by prepareFilter into operators of this engine (see regex-filter.ts); a
// pipeline's $match gets the same preparation as find.
OPTIONS.context.addQueryOps(regexQueryOperators(mingoIn as never));
OPTIONS.context.addExpressionOps(regexExpressionOperators({ $regexMatch, $regexFind, $regexFindAll } as never));
// mingo's $range builds whatever array it is asked for (`{$range: [0, 1e9]}` holds the event loop and every
// app of the process until memory runs out) and loops forever on an infinite bound: MongoDB's argument checks
// and its memory limit (internalQueryMaxRangeBytes, 64 MiB at 16 bytes a value) are applied first.
OPTIONS.context.addExpressionOps({ $range: boundedRange });
// mingo's $type sees the promoted copy (every number a JS number): this one reads a field as stored.
OPTIONS.context.addExpressionOps({ $type: typeExpression((obj, expr, options: Options) => computeValue(obj, expr, null, options)) });
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
      expression: collatedExpressionOperators,
      accumulator: collatedAccumulatorOperators,
      pipeline: { ...collatedPipelineOperators, $setWindowFields: collatedSetWindowFields(setWindowFields) },
    });
    collated = ComputeOptions.init(initOptions({ ...(OPTIONS as ComputeOptions).getOptions(), context: Context.merge(overrides, OPTIONS.context) }));
  }
  return collated;
}

/** mingo's options for the comparison now active: the collated ones under a locale, else the shared ones. */
function activeOptions(): Options {
  return collationActive() ? collatedOptions() : OPTIONS;
}

function optionsWith(resolver: CollectionResolver | undefined, variables?: Variables): Options {
  const base = activeOptions();
  if (!resolver && !variables) return base;
  return ComputeOptions.init(initOptions({ ...(base as ComputeOptions).getOptions(), ...(resolver ? { collectionResolver: resolver } : {}), ...(variables ? { variables } : {}) }));
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

/**
 * A pipeline's output with the stored number types of its input put back: mingo computes over copies
 * with every number a JS number (promoteNumbers), and a document it passed through or reshaped keeps the
 * Double or Long of its input wherever it still holds the same number at the same place. An output is
 * matched to its input by identity, else by `_id`.
 */
function restoreOutputs(inputs: Document[], promoted: Document[], outputs: Document[]): Document[] {
  const byCopy = new Map<Document, Document>();
  for (let i = 0; i < inputs.length; i++) if (promoted[i] !== inputs[i]) byCopy.set(promoted[i], inputs[i]);
  if (byCopy.size === 0) return outputs;
  let byId: Map<string, Document> | undefined;
  return outputs.map((out) => {
    const source = byCopy.get(out);
    if (source) return restoreNumberTypes(out, source) as Document;
    if (!isPlainObject(out) || out._id === undefined) return out;
    if (!byId) {
      byId = new Map();
      for (const doc of byCopy.values()) if (doc._id !== undefined) byId.set(idKey(doc._id), doc);
    }
    const original = byId.get(idKey(out._id));
    return original ? (restoreNumberTypes(out, original) as Document) : out;
  });
}

/** A resolver whose documents mingo computes over as it does over the input (see promoteNumbers). */
function promotingResolver(resolver: CollectionResolver | undefined): CollectionResolver | undefined {
  return resolver && ((name: string) => resolver(name).map((doc) => promoteNumbers(doc) as Document));
}

export function runPipeline(docs: Iterable<Document>, pipeline: Document[], resolver?: CollectionResolver, variables?: Variables): Document[] {
  checkStages(pipeline);
  try {
    const aggregator = new Aggregator(pipeline, optionsWith(promotingResolver(resolver), variables));
    const inputs = Array.isArray(docs) ? (docs as Document[]) : [...docs];
    const promoted = inputs.map((doc) => promoteNumbers(doc) as Document);
    return restoreOutputs(inputs, promoted, aggregator.run<Document>(promoted));
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

/** Applies a validated projection to one document (mingo handles $slice, $elemMatch and the rest). */
export function compileProjection(projection: Document, filter: Document | undefined): (doc: Document) => Document {
  let query: Query;
  try {
    query = new Query(prepareFilter(filter ?? {}), activeOptions());
  } catch (error) {
    translate(error);
  }
  return (doc) => {
    try {
      return restoreNumberTypes(query.find([promoteNumbers(doc)], projection).next(), doc) as Document;
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
