/**
 * Pipeline stages mingo answers otherwise than MongoDB 7, written after MongoDB's own
 * (src/mongo/db/pipeline/document_source_{bucket_auto,densify,fill}.cpp): mingo's `$bucketAuto` orders values
 * its own way and fails on mixed types, its `$densify` partitions by string values only and by code point,
 * its `$fill` runs mingo's `$setWindowFields` directly, which the engine's scriptEnabled: false refuses, and
 * its `$linearFill` window operator fails on a partition that begins with null.
 * They compare through compareValues and collatedKeyOf, so by the operation's collation when one runs, and
 * serve both contexts (mingo.ts). Nothing here runs caller JavaScript.
 */
import { ComputeOptions, type Options, type PipelineOperator, type WindowOperator, OpType, computeValue, getOperator } from 'mingo/core';
import { type Iterator, Lazy } from 'mingo/lazy';
import { $bucketAuto as mingoBucketAuto, $group as mingoGroup } from 'mingo/operators/pipeline';
import { setValue } from 'mingo/util';
import { DatastoreError } from '../api/datastore.error';
import { type Document, cloneValue, compareValues, formatValue, getPath, isPlainObject, typeName } from '../bson/values';
import { collatedKeyOf } from './collated-keys';
import { sortDocuments } from './sort';
import { typedValue } from './typed-expressions';

/** MongoDB's assertion `code`, reported as BadValue (the engine's name for a refused argument). */
function refused(code: number, message: string): DatastoreError {
  return new DatastoreError('BadValue', message, { code });
}

/** One group's accumulators over `members`, computed by mingo's $group (through the context's accumulators). */
function accumulate(members: Document[], output: Document, options: Options): Document {
  const [row] = mingoGroup(Lazy(members), { _id: null, ...output }, options).value<Document>();
  const fields: Document = { ...row };
  delete fields._id;
  return fields;
}

// ---- $bucketAuto ----

/**
 * `$bucketAuto` without a granularity: documents sorted by their groupBy value in BSON order (missing as null,
 * equal values in input order), `round(n / buckets)` to a bucket (at least one), the last bucket taking the
 * rest; a bucket also takes the values equal to its last, and ends where the next begins (its `max`), the
 * last at its own last value. Only buckets that received documents are output. With a granularity (numbers
 * only, which mingo orders as MongoDB does) mingo's stage answers.
 */
export const bucketAuto: PipelineOperator = (collection, expr, options) => {
  if (!isPlainObject(expr)) throw refused(40240, `The argument to $bucketAuto must be an object, but found type: ${typeName(expr)}`);
  for (const key of Object.keys(expr)) {
    if (!['groupBy', 'buckets', 'output', 'granularity'].includes(key)) throw refused(40245, `Unrecognized option to $bucketAuto: ${key}.`);
  }
  const { groupBy, buckets } = expr;
  if (groupBy === undefined || buckets === undefined) throw refused(40246, "$bucketAuto requires 'groupBy' and 'buckets' to be specified");
  const expression = (typeof groupBy === 'string' && groupBy.length > 1 && groupBy.startsWith('$')) || (isPlainObject(groupBy) && Object.keys(groupBy)[0]?.startsWith('$'));
  if (!expression) throw refused(40239, "The $bucketAuto 'groupBy' field must be defined as a $-prefixed path or an expression object");
  if (typeof buckets !== 'number') throw refused(40241, `The $bucketAuto 'buckets' field must be a numeric value, but found type: ${typeName(buckets)}`);
  if (!Number.isInteger(buckets) || buckets > 0x7fffffff) throw refused(40242, `The $bucketAuto 'buckets' field must be representable as a 32-bit integer, but found ${buckets}`);
  if (buckets <= 0) throw refused(40243, `The $bucketAuto 'buckets' field must be greater than 0, but found: ${buckets}`);
  if (expr.output !== undefined && !isPlainObject(expr.output)) throw refused(40244, `The $bucketAuto 'output' field must be an object, but found type: ${typeName(expr.output)}`);
  if (expr.granularity !== undefined) return mingoBucketAuto(collection, expr, options);
  const output = isPlainObject(expr.output) && Object.keys(expr.output).length > 0 ? expr.output : { count: { $sum: 1 } };
  return collection.transform((input) => {
    // Keys as stored: a bucket's min and max keep their type (a long stays a long).
    const keyed = (input as Document[]).map((doc) => ({ key: typedValue(doc, groupBy, ComputeOptions.init(options, doc)) ?? null, doc }));
    keyed.sort((a, b) => compareValues(a.key, b.key));
    const size = Math.max(1, Math.round(keyed.length / buckets));
    const out: Document[] = [];
    let next = 0;
    for (let bucket = 1; bucket <= buckets && next < keyed.length; bucket++) {
      const first = next;
      next = bucket === buckets ? keyed.length : Math.min(keyed.length, first + size);
      while (next < keyed.length && compareValues(keyed[next].key, keyed[next - 1].key) === 0) next++;
      const max = next < keyed.length ? keyed[next].key : keyed[next - 1].key;
      const members = keyed.slice(first, next).map((entry) => entry.doc);
      out.push({ _id: { min: keyed[first].key, max }, ...accumulate(members, output, options) });
    }
    return out;
  });
};

// ---- $densify ----

/** internalQueryMaxAllowedDensifyDocs, MongoDB's default. */
const MAX_DENSIFY_DOCS = 500_000;
const FIXED_UNITS: Record<string, number> = { millisecond: 1, second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };
const CALENDAR_UNITS: Record<string, number> = { month: 1, quarter: 3, year: 12 };

/** `date` plus `amount` units in UTC, a month's day clamped to its last (as $dateAdd). */
function addUnits(date: Date, unit: string, amount: number): Date {
  const fixed = FIXED_UNITS[unit];
  if (fixed !== undefined) return new Date(date.getTime() + amount * fixed);
  const day = date.getUTCDate();
  const out = new Date(date.getTime());
  out.setUTCDate(1);
  out.setUTCMonth(out.getUTCMonth() + amount * CALENDAR_UNITS[unit]);
  const last = new Date(Date.UTC(out.getUTCFullYear(), out.getUTCMonth() + 1, 0)).getUTCDate();
  out.setUTCDate(Math.min(day, last));
  return out;
}

type DensifyValue = number | Date;
type Bounds = 'full' | 'partition' | [DensifyValue, DensifyValue];

interface DensifySpec {
  field: string;
  partitionByFields: string[];
  step: number;
  unit?: string;
  bounds: Bounds;
}

function densifySpec(expr: unknown): DensifySpec {
  if (!isPlainObject(expr)) throw new DatastoreError('FailedToParse', `The $densify stage specification must be an object, found ${typeName(expr)}`);
  const { field, partitionByFields = [], range } = expr;
  if (typeof field !== 'string' || field === '') throw refused(40414, "BSON field '$densify.field' is missing but a required field");
  if (!Array.isArray(partitionByFields) || partitionByFields.some((f) => typeof f !== 'string')) throw new DatastoreError('TypeMismatch', "BSON field '$densify.partitionByFields' must be an array of strings");
  if (!isPlainObject(range)) throw refused(40414, "BSON field '$densify.range' is missing but a required field");
  const { step, unit, bounds } = range;
  if (typeof step !== 'number' || !(step > 0)) throw refused(5733401, 'The step parameter in a range statement must be a strictly positive numeric value');
  if (unit !== undefined) {
    if (typeof unit !== 'string' || (FIXED_UNITS[unit] === undefined && CALENDAR_UNITS[unit] === undefined)) throw new DatastoreError('FailedToParse', `unknown time unit value: ${formatValue(unit)}`);
    if (!Number.isInteger(step)) throw refused(6586400, 'The step parameter in a range statement must be a whole number when densifying a date range');
  }
  let parsed: Bounds;
  if (Array.isArray(bounds)) {
    if (bounds.length !== 2) throw refused(5733403, 'A bounding array in a range statement must have exactly two elements');
    const [lower, upper] = bounds as unknown[];
    if (typeof lower === 'number') {
      if (unit !== undefined) throw refused(5733409, 'Numeric bounds may not have unit parameter');
      if (typeof upper !== 'number') throw refused(5733406, 'A bounding array must contain either both dates or both numeric types');
    } else if (lower instanceof Date) {
      if (!(upper instanceof Date)) throw refused(5733405, 'A bounding array must contain either both dates or both numeric types');
      if (unit === undefined) throw refused(5733410, 'A bounding array of dates must specify a unit');
    } else {
      throw refused(5946800, 'Explicit bounds must be numeric or dates');
    }
    if (compareValues(lower, upper) > 0) throw refused(5733402, 'A bounding array must be an ascending array of either two dates or two numbers');
    parsed = [lower, upper];
  } else if (bounds === 'full' || bounds === 'partition') {
    parsed = bounds;
  } else if (typeof bounds === 'string') {
    throw refused(5946802, "Bounds string must either be 'full' or 'partition'");
  } else {
    throw refused(5733404, "The bounds in a range statement must be the string 'full', 'partition', or an ascending array of two numbers or two dates");
  }
  if (parsed === 'partition' && partitionByFields.length === 0) {
    throw refused(5733408, "One cannot specify the bounds as 'partition' without specifying a non-empty array of partitionByFields. You may have meant to specify 'full' bounds.");
  }
  return { field, partitionByFields: partitionByFields as string[], step, unit, bounds: parsed };
}

/** A partition's state: the next value on its steps not yet seen or made, and its partition fields' values. */
interface Partition {
  next: DensifyValue | undefined;
  fields: Document;
}

/**
 * `$densify`: the documents sorted by their partition fields (not for 'full' bounds) and the field, each
 * partition filled on its own steps, from its first value ('partition'), the lowest value of all ('full') or
 * the lower bound (explicit), up to its last value, the highest value of all (made too when on the steps) or
 * the upper bound (excluded). A value already there is not made again; documents without the field (or with
 * null) pass unchanged. A made document holds the partition fields of the document after the gap it fills,
 * or of the partition's first document at the end. Partition values of any type, compared by the collation.
 */
export const densify: PipelineOperator = (collection, expr) => {
  const spec = densifySpec(expr);
  const { field, partitionByFields, step, unit, bounds } = spec;
  const advance = (value: DensifyValue): DensifyValue => (unit === undefined ? (value as number) + step : addUnits(value as Date, unit, step));
  const valueOf = (doc: Document): DensifyValue | undefined => {
    const value = getPath(doc, field);
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' && !(value instanceof Date)) throw refused(5733201, 'Densify field type must be numeric or a date');
    if (unit === undefined && value instanceof Date) throw refused(6053600, 'Encountered date densify value in collection when step does not have a date unit.');
    if (unit !== undefined && typeof value === 'number') throw refused(6053600, 'Encountered numeric densify value in collection when step has a date unit.');
    return value;
  };
  const sortBy: Record<string, 1> = {};
  if (bounds !== 'full') for (const f of partitionByFields) sortBy[f] = 1;
  sortBy[field] = 1;
  return collection.transform((input) => {
    const docs = sortDocuments((input as Document[]).slice(), sortBy);
    const values = docs.map(valueOf);
    const present = values.filter((v): v is DensifyValue => v !== undefined);
    const lowest = present.reduce<DensifyValue | undefined>((low, v) => (low === undefined || compareValues(v, low) < 0 ? v : low), undefined);
    const highest = present.reduce<DensifyValue | undefined>((high, v) => (high === undefined || compareValues(v, high) > 0 ? v : high), undefined);
    const start = (first: DensifyValue): DensifyValue | undefined => (bounds === 'partition' ? first : bounds === 'full' ? lowest : bounds[0]);
    /** Made values stop below this (the upper bound), or after it ('full': the highest value). */
    const below = (value: DensifyValue, end: DensifyValue | undefined): boolean => end !== undefined && (Array.isArray(bounds) ? compareValues(value, end) < 0 : compareValues(value, end) <= 0);
    const keyOf = collatedKeyOf();
    const partitions = new Map<unknown, Partition>();
    const partitionOf = (fields: Document): Partition => {
      const key = keyOf(fields);
      let partition = partitions.get(key);
      if (!partition) {
        partition = { next: undefined, fields };
        partitions.set(key, partition);
      }
      return partition;
    };
    let made = 0;
    const make = (value: DensifyValue, fields: Document): Document => {
      if (++made > MAX_DENSIFY_DOCS) {
        throw refused(5897900, `Generated ${made} documents in $densify, which is over the limit of ${MAX_DENSIFY_DOCS}. Increase the 'internalQueryMaxAllowedDensifyDocs' parameter to allow more generated documents`);
      }
      const doc = cloneValue(fields);
      setValue(doc, field, value);
      return doc;
    };
    const out: Document[] = [];
    // With explicit bounds and no partitions, the range is filled even without documents.
    if (Array.isArray(bounds) && partitionByFields.length === 0) partitionOf({}).next = bounds[0];
    docs.forEach((doc, i) => {
      const value = values[i];
      if (value === undefined) {
        out.push(doc);
        return;
      }
      const fields = fieldsOf(doc, partitionByFields);
      const partition = partitionOf(fields);
      partition.next ??= start(value);
      let next = partition.next;
      while (next !== undefined && compareValues(next, value) < 0 && (!Array.isArray(bounds) || compareValues(next, bounds[1]) < 0)) {
        out.push(make(next, fields));
        next = advance(next);
      }
      if (next !== undefined && compareValues(next, value) === 0) next = advance(next);
      partition.next = next;
      out.push(doc);
    });
    if (bounds !== 'partition') {
      const end = Array.isArray(bounds) ? bounds[1] : highest;
      for (const partition of partitions.values()) {
        let next = partition.next;
        while (next !== undefined && below(next, end)) {
          out.push(make(next, partition.fields));
          next = advance(next);
        }
      }
    }
    return out;
  });
};

/** The values of `fields` in `doc`, as a document (dotted names nested), those missing left out. */
function fieldsOf(doc: Document, fields: string[]): Document {
  const out: Document = {};
  for (const f of fields) {
    const value = getPath(doc, f);
    if (value !== undefined) setValue(out, f, cloneValue(value));
  }
  return out;
}

// ---- $fill ----

const FILL_METHODS: Record<string, string> = { locf: '$locf', linear: '$linearFill' };

/**
 * `$fill` as MongoDB desugars it: a `$setWindowFields` over the partitions and sortBy computing `$locf` or
 * `$linearFill` of each output field with a method, then an `$addFields` of `$ifNull` for each with a value.
 * Both stages are the context's, so partitions compare by the collation when one runs.
 */
export const fill: PipelineOperator = (collection, expr, options) => {
  if (!isPlainObject(expr)) throw new DatastoreError('FailedToParse', `The $fill stage specification must be an object, found ${typeName(expr)}`);
  const { output, sortBy, partitionBy, partitionByFields } = expr;
  if (!isPlainObject(output) || Object.keys(output).length === 0) throw refused(6050203, "The output field in '$fill' must contain an object with at least one element");
  if (partitionBy !== undefined && partitionByFields !== undefined) throw refused(6050204, "Maximum one of 'partitionBy' and 'partitionByFields can be specified in '$fill'");
  const windowOutput: Document = {};
  const values: Document = {};
  for (const [name, spec] of Object.entries(output)) {
    if (!isPlainObject(spec)) throw refused(6050200, 'Each fill output specification must be an object with exactly one field');
    if (spec.method !== undefined) {
      if (spec.value !== undefined) throw refused(6050201, "Each fill output specification must have exactly one of 'method' or 'value' fields, not both");
      const method = typeof spec.method === 'string' ? FILL_METHODS[spec.method] : undefined;
      if (!method) throw refused(6050202, 'Method must be either locf or linear');
      windowOutput[name] = { [method]: `$${name}` };
    }
    if (spec.value !== undefined) values[name] = { $ifNull: [`$${name}`, spec.value] };
  }
  let out: Iterator = collection;
  if (Object.keys(windowOutput).length > 0) {
    const stage: Document = { output: windowOutput };
    if (sortBy !== undefined) stage.sortBy = sortBy;
    if (partitionBy !== undefined) stage.partitionBy = partitionBy;
    if (Array.isArray(partitionByFields)) stage.partitionBy = Object.fromEntries(partitionByFields.map((f) => [String(f), `$${String(f)}`]));
    out = stageOf('$setWindowFields', options)(out, stage, options);
  }
  if (Object.keys(values).length > 0) out = stageOf('$addFields', options)(out, values, options);
  return out;
};

function stageOf(name: string, options: Options): PipelineOperator {
  const stage = getOperator(OpType.PIPELINE, name, options) as PipelineOperator | null;
  if (!stage) throw new DatastoreError('InternalError', `no ${name} stage registered`);
  return stage;
}

/** Each window's filled values, by output field, computed once per window (mingo calls the operator per document). */
const linearFills = new WeakMap<object, Map<string, unknown[]>>();

/**
 * `$linearFill`: a null or missing value between two numbers is interpolated on the single sortBy field's
 * values (numbers or dates); values before the first number or after the last stay null.
 */
export const linearFill: WindowOperator = (_obj, collection, expr, options) => {
  let byField = linearFills.get(collection);
  if (!byField) {
    byField = new Map();
    linearFills.set(collection, byField);
  }
  let series = byField.get(expr.field);
  if (!series) {
    series = linearSeries(collection, expr.parentExpr.sortBy, expr.inputExpr, options);
    byField.set(expr.field, series);
  }
  const value = series[expr.documentNumber - 1];
  if (expr.documentNumber === collection.length) byField.delete(expr.field);
  return value;
};

function linearSeries(docs: object[], sortBy: Record<string, unknown>, input: unknown, options: Options): unknown[] {
  const keys = Object.keys(sortBy);
  if (keys.length !== 1) throw new DatastoreError('BadValue', '$linearFill requires exactly one field in sortBy');
  const xs = docs.map((doc) => {
    const x: unknown = getPath(doc, keys[0]);
    if (typeof x === 'number') return x;
    if (x instanceof Date) return x.getTime();
    throw new DatastoreError('BadValue', `$linearFill requires the sortBy field to be numeric or a date, found: ${typeName(x)}`);
  });
  const ys = docs.map((doc) => computeValue(doc, input, null, options) ?? null);
  let previous = -1;
  for (let i = 0; i < ys.length; i++) {
    const y = ys[i];
    if (y === null) continue;
    if (typeof y !== 'number') throw new DatastoreError('BadValue', `$linearFill requires numeric values, found: ${typeName(y)}`);
    if (previous >= 0 && previous < i - 1) {
      const x1 = xs[previous];
      const y1 = ys[previous] as number;
      const slope = (y - y1) / (xs[i] - x1);
      for (let j = previous + 1; j < i; j++) ys[j] = y1 + (xs[j] - x1) * slope;
    }
    previous = i;
  }
  return ys;
}
