/**
 * Pipeline stages whose outputs keep stored number types. Between stages a document travels as the
 * promoted copy of its stored form (promoteNumbers: mingo computes with JS numbers), and every stage here
 * builds its output in stored form, computed values typed (typed-expressions.ts) and fields it passes on
 * as they were stored, then hands on the promoted copy of that: runPipeline answers the stored form
 * (originalOf) of whatever comes out. Stages that only pass documents on ($match, $sort, $skip, $limit,
 * $sample, $unionWith) need nothing; $group, $lookup and $graphLookup are in collated-operators.ts.
 *
 * These stages also never change their input: mingo's $addFields, $unwind and $project wrote into the
 * objects of the documents they were given, which can be a stored document's.
 */
import { ComputeOptions, type Options, type PipelineOperator } from 'mingo/core';
import { type Iterator, Lazy } from 'mingo/lazy';
import { $addFields as mingoAddFields, $project as mingoProject, $unwind as mingoUnwind } from 'mingo/operators/pipeline';
import { Aggregator } from 'mingo';
import { Long } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import { type Document, asPromotedCopy, cloneValue, compareValues, hasOwn, idKey, isPlainObject, originalOf, promoteNumbers, restoreNumberTypes, storedOf, typeName } from '../bson/values';
import { typedValue } from './typed-expressions';

// ---- paths, copied on the way (never writing into an object the stage was given) ----

function isIndex(key: string): boolean {
  return /^\d+$/.test(key);
}

function setField(target: Document, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** A copy of `value` the caller may change, or undefined when a path cannot go through it. */
function ownCopy(value: unknown): Document | unknown[] | undefined {
  if (Array.isArray(value)) return (value as unknown[]).slice();
  if (isPlainObject(value)) return { ...value };
  return undefined;
}

/**
 * Sets a dotted path in `target` (a copy the caller owns), copying each object on the way; missing levels
 * become objects. As mingo's $addFields: a path through a scalar or through an array (other than by an index)
 * sets nothing.
 */
function setPath(target: Document | unknown[], parts: readonly string[], at: number, value: unknown): void {
  const key = parts[at];
  if (Array.isArray(target)) {
    if (!isIndex(key)) return;
    const index = Number(key);
    if (at === parts.length - 1) {
      target[index] = value;
      return;
    }
    const child = ownCopy(target[index]);
    if (!child) return;
    target[index] = child;
    setPath(child, parts, at + 1, value);
    return;
  }
  if (at === parts.length - 1) {
    setField(target, key, value);
    return;
  }
  const current = target[key];
  const child = current === null || current === undefined ? {} : ownCopy(current);
  if (!child) return;
  setField(target, key, child);
  setPath(child, parts, at + 1, value);
}

/** Removes a dotted path from `target` (a copy the caller owns), copying each object on the way; `eachElement`: through arrays too. */
function removePath(target: Document | unknown[], parts: readonly string[], at: number, eachElement: boolean): void {
  const key = parts[at];
  const last = at === parts.length - 1;
  if (Array.isArray(target)) {
    if (!isIndex(key)) return;
    if (last) {
      target.splice(Number(key), 1);
      return;
    }
    const child = ownCopy(target[Number(key)]);
    if (!child) return;
    target[Number(key)] = child;
    removePath(child, parts, at + 1, eachElement);
    return;
  }
  if (!hasOwn(target, key)) return;
  if (last) {
    delete target[key];
    return;
  }
  const current = target[key];
  if (Array.isArray(current) && eachElement && !isIndex(parts[at + 1])) {
    setField(
      target,
      key,
      current.map((item: unknown) => {
        const copy = isPlainObject(item) ? { ...item } : undefined;
        if (copy) removePath(copy, parts, at + 1, eachElement);
        return copy ?? item;
      }),
    );
    return;
  }
  const child = ownCopy(current);
  if (!child) return;
  setField(target, key, child);
  removePath(child, parts, at + 1, eachElement);
}

// ---- $addFields, $set, $unset ----

const addFields: PipelineOperator = (collection, expr, options) => {
  if (!isPlainObject(expr)) return mingoAddFields(collection, expr, options);
  const fields = Object.keys(expr);
  if (fields.length === 0) return collection;
  const literal = originalOf(expr);
  const paths = fields.map((field) => field.split('.'));
  return collection.map((obj: unknown) => {
    const copts = ComputeOptions.init(options, obj);
    const out: Document = { ...(originalOf(obj) as Document) };
    // Every field is computed from the input document, none from another's new value (as in MongoDB).
    const values = fields.map((field) => storedOf(typedValue(obj, expr[field], copts, literal[field])));
    values.forEach((value, i) => (value === undefined ? removePath(out, paths[i], 0, false) : setPath(out, paths[i], 0, value)));
    return promoteNumbers(out);
  });
};

const unset: PipelineOperator = (collection, expr, options) => {
  const fields: unknown[] = Array.isArray(expr) ? expr : [expr];
  if (!fields.every((field) => typeof field === 'string' && field !== '')) return mingoProject(collection, Object.fromEntries(fields.map((f) => [String(f), 0])), options);
  const paths = (fields as string[]).map((field) => field.split('.'));
  return collection.map((obj: unknown) => {
    const out: Document = { ...(originalOf(obj) as Document) };
    for (const path of paths) removePath(out, path, 0, true);
    return promoteNumbers(out);
  });
};

// ---- $project ----

/** A value a projection computed, as stored: set apart from the fields it passed on. */
class Computed {
  constructor(readonly value: unknown) {}
}

/** The expression operator standing for a computed field in the projection handed to mingo. */
const COMPUTED = '$__tesseraComputed';
let projecting = 0;

/** Registered with the expression operators: evaluates a projection's computed field typed, for `project` only. */
export const computedFieldOperator = {
  [COMPUTED]: (obj: unknown, expr: unknown, options: Options): unknown => {
    if (projecting === 0) throw new DatastoreError('BadValue', `unknown operator: ${COMPUTED}`);
    const [spec, literal] = expr as [unknown, unknown];
    return new Computed(typedValue(obj, spec, options, literal));
  },
};

function computed(spec: unknown, literal: unknown): Document {
  return { [COMPUTED]: [spec, literal] };
}

/** A projection with each computed field (an expression, a field path) marked, its number literals kept. */
function markComputed(spec: Document, literal: Document): Document {
  const out: Document = {};
  for (const key of Object.keys(spec)) {
    const value = spec[key];
    const typed = literal[key];
    if (typeof value === 'string') out[key] = value.startsWith('$') ? computed(value, typed) : value;
    else if (Array.isArray(value)) {
      const items = Array.isArray(typed) ? typed : value;
      out[key] = value.map((item: unknown, i) => computed(item, items[i]));
    } else if (isPlainObject(value)) {
      const keys = Object.keys(value);
      const projectionOperator = keys.length === 1 && (keys[0] === '$elemMatch' || (keys[0] === '$slice' && [value.$slice].flat().every((n) => typeof n === 'number')));
      if (projectionOperator) out[key] = value;
      else if (keys.length === 1 && keys[0].startsWith('$')) out[key] = computed(value, typed);
      else out[key] = markComputed(value, isPlainObject(typed) ? typed : value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function marksComputed(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(marksComputed);
  return isPlainObject(value) && (hasOwn(value, COMPUTED) || Object.values(value).some(marksComputed));
}

/** True when a projection excludes a field other than `_id`: mingo's exclusion then deletes from its input's objects. */
function excludes(spec: Document, top = true): boolean {
  return Object.entries(spec).some(([key, value]) => ((value === 0 || value === false) && !(top && key === '_id')) || (isPlainObject(value) && !Object.keys(value)[0]?.startsWith('$') && excludes(value, false)));
}

/**
 * A projection's output (mingo's, over a promoted copy, in containers it made) settled: each computed value
 * is put in place in its promoted form, and the stored form is answered (computed values as computed, what
 * the projection passed on as stored in `source`). A container whose stored form differs is made the
 * promoted copy of it (asPromotedCopy); one holding nothing typed is its own stored form.
 */
function settle(out: unknown, source: unknown): unknown {
  if (out === null || typeof out !== 'object') return restoreNumberTypes(out, source);
  if (originalOf(out) === source) return source;
  if (Array.isArray(out)) {
    const items = Array.isArray(source) ? (source as unknown[]) : [];
    let stored: unknown[] | undefined;
    for (let i = 0; i < out.length; i++) {
      const item = out[i] as unknown;
      let value: unknown;
      if (item instanceof Computed) {
        // A computed element that is missing is null, as mingo makes it.
        value = storedOf(item.value) ?? null;
        out[i] = promoteNumbers(value);
      } else {
        value = settle(item, items[i]);
      }
      if (stored) stored[i] = value;
      else if (value !== out[i]) (stored = out.slice())[i] = value;
    }
    return pairedWith(out, stored);
  }
  if (!isPlainObject(out)) return out;
  const fields = isPlainObject(source) ? source : {};
  let stored: Document | undefined;
  for (const key of Object.keys(out)) {
    const item = out[key];
    let value: unknown;
    if (item instanceof Computed) {
      value = storedOf(item.value);
      if (value === undefined) {
        // A computed field that is missing is left out.
        delete out[key];
        if (stored) delete stored[key];
        continue;
      }
      setField(out, key, promoteNumbers(value));
    } else {
      value = settle(item, hasOwn(fields, key) ? fields[key] : undefined);
    }
    if (stored) setField(stored, key, value);
    else if (value !== out[key]) setField((stored = { ...out }), key, value);
  }
  return pairedWith(out, stored);
}

/** The stored form of `promoted`: `stored` when one was made (then paired with it), else `promoted` itself. */
function pairedWith(promoted: object, stored: object | undefined): unknown {
  if (!stored) return promoted;
  asPromotedCopy(promoted, stored);
  return stored;
}

/**
 * A projection of promoted copies as mingo reads it (inclusion, exclusion, sub-projections, $slice,
 * $elemMatch), each computed field evaluated typed: a function from a batch of inputs to their outputs, each
 * the promoted copy of its stored form.
 */
export function projector(spec: Document, options: Options): (inputs: Document[]) => Document[] {
  const marked = markComputed(spec, originalOf(spec));
  const computes = marksComputed(marked);
  const copyInputs = excludes(spec);
  return (inputs) => {
    projecting++;
    let outputs: Document[];
    try {
      outputs = mingoProject(Lazy(copyInputs ? inputs.map((doc) => cloneValue(doc)) : inputs), marked, options).value<Document>();
    } finally {
      projecting--;
    }
    return outputs.map((out, i) => {
      const source = originalOf(inputs[i]);
      // Nothing computed from a document holding no number to promote: mingo's output is its stored form.
      if (!computes && source === inputs[i]) return out;
      settle(out, source);
      return out;
    });
  };
}

const project: PipelineOperator = (collection, expr, options) => {
  if (!isPlainObject(expr) || Object.keys(expr).length === 0) return mingoProject(collection, expr, options);
  const run = projector(expr, options);
  return collection.transform((docs) => run(docs as Document[]));
};

// ---- $replaceRoot, $replaceWith ----

function replacement(stage: '$replaceRoot' | '$replaceWith'): PipelineOperator {
  return (collection, expr, options) => {
    const spec = stage === '$replaceRoot' ? (isPlainObject(expr) ? expr.newRoot : undefined) : expr;
    const literal = stage === '$replaceRoot' && isPlainObject(expr) ? originalOf(expr).newRoot : originalOf(expr);
    return collection.map((obj: unknown) => {
      const root = storedOf(typedValue(obj, spec, ComputeOptions.init(options, obj), literal));
      if (!isPlainObject(root)) throw new DatastoreError('BadValue', `'newRoot' expression must evaluate to an object, but resulting value was: ${root === undefined ? 'MISSING' : typeName(root)}`, { code: 40228 });
      return promoteNumbers(root);
    });
  };
}

// ---- $unwind ----

/** $unwind over stored documents: elements keep their types and includeArrayIndex is a long, as in MongoDB. */
const unwind: PipelineOperator = (collection, expr, options) => {
  const spec = typeof expr === 'string' ? { path: expr } : expr;
  if (!isPlainObject(spec) || typeof spec.path !== 'string' || !spec.path.startsWith('$') || spec.path.length < 2) return mingoUnwind(collection, expr, options);
  const parts = spec.path.slice(1).split('.');
  const index = typeof spec.includeArrayIndex === 'string' && spec.includeArrayIndex !== '' ? spec.includeArrayIndex.split('.') : undefined;
  const preserve = spec.preserveNullAndEmptyArrays === true;
  const emit = (out: Document[], doc: Document, position: number | null): void => {
    if (index) setPath(doc, index, 0, position === null ? null : Long.fromNumber(position));
    out.push(promoteNumbers(doc) as Document);
  };
  return collection.transform((docs) => {
    const out: Document[] = [];
    for (const obj of docs) {
      const stored = originalOf(obj) as Document;
      const value = resolveDocumentPath(stored, parts);
      if (Array.isArray(value) && value.length > 0) {
        value.forEach((item, i) => {
          const copy: Document = { ...stored };
          setPath(copy, parts, 0, item);
          emit(out, copy, i);
        });
      } else if (Array.isArray(value)) {
        if (!preserve) continue;
        const copy: Document = { ...stored };
        removePath(copy, parts, 0, false);
        emit(out, copy, null);
      } else if ((value !== undefined && value !== null) || preserve) {
        if (index) emit(out, { ...stored }, null);
        else out.push(obj as Document);
      }
    }
    return out;
  });
};

/** The value at a dotted path through documents only (an array on the way ends it), as $unwind reads its path. */
function resolveDocumentPath(doc: Document, parts: readonly string[]): unknown {
  let current: unknown = doc;
  for (const part of parts) {
    if (!isPlainObject(current)) return undefined;
    current = current[part];
  }
  return current;
}

// ---- $facet, $documents ----

const facet: PipelineOperator = (collection, expr, options) => {
  if (!isPlainObject(expr)) return collection;
  return collection.transform((docs) => {
    const out: Document = {};
    for (const [name, pipeline] of Object.entries(expr)) {
      if (!Array.isArray(pipeline)) throw new DatastoreError('TypeMismatch', `arguments to $facet must be arrays, ${name} is type ${typeName(pipeline)}`, { code: 40170 });
      // Each sub-pipeline gets its own copies (as mingo gave it), which keep their stored types.
      const inputs = (docs as Document[]).map((doc) => promoteNumbers(cloneValue(originalOf(doc))) as Document);
      out[name] = new Aggregator(pipeline as Document[], options).run(inputs).map((doc) => originalOf(doc));
    }
    return [promoteNumbers(out)];
  });
};

const documents: PipelineOperator = (_collection, expr, options) => {
  const docs = storedOf(typedValue(null, expr, ComputeOptions.init(options), originalOf(expr)));
  if (!Array.isArray(docs)) throw new DatastoreError('BadValue', '$documents: expression must resolve to an array.');
  return Lazy(docs.map((doc) => promoteNumbers(doc)));
};

/** The stages above, for mingo's pipeline operators. */
export const typedStages: Readonly<Record<string, PipelineOperator>> = {
  $addFields: addFields,
  $set: addFields,
  $unset: unset,
  $project: project,
  $replaceRoot: replacement('$replaceRoot'),
  $replaceWith: replacement('$replaceWith'),
  $unwind: unwind,
  $facet: facet,
  $documents: documents,
};

/**
 * $bucket (mingo's, or collated-operators.ts's under a collation) with each bucket's `_id` the boundary or
 * the `default` as the pipeline wrote it: the stage reads them promoted, so a long boundary came out an int.
 * Buckets are keyed by their lower boundary, which no other boundary nor the default can equal.
 */
export function typedBucket(stage: PipelineOperator): PipelineOperator {
  return (collection, expr, options) => {
    const spec = originalOf(expr);
    if (!isPlainObject(expr) || !isPlainObject(spec) || spec === expr) return stage(collection, expr, options);
    const lowerBounds = Array.isArray(spec.boundaries) ? (spec.boundaries as unknown[]).slice(0, -1) : [];
    const literalOf = (id: unknown): unknown => {
      const bound = lowerBounds.find((b) => compareValues(b, id) === 0);
      if (bound !== undefined) return bound;
      return hasOwn(spec, 'default') && compareValues(spec.default, id) === 0 ? spec.default : id;
    };
    return stage(collection, expr, options).map((doc: unknown) => (isPlainObject(doc) ? { ...doc, _id: literalOf(doc._id) } : doc));
  };
}

// ---- stages of mingo's or mongo-stages.ts's, their outputs put back in stored form ----

/**
 * A stage of mingo's (or mongo-stages.ts's) that builds documents without knowing stored types: each output
 * it did not pass on is put in stored form (the accumulators it called answered stored values already) and
 * promoted. `reshapes` says the stage outputs its input documents changed ($setWindowFields, $densify,
 * $fill, $redact): an output's numbers are then put back as stored where the input of the same _id holds
 * them unchanged. A grouping stage ($bucket, $bucketAuto) makes documents of its own.
 */
export function restoring(stage: PipelineOperator, reshapes: boolean): PipelineOperator {
  return (collection: Iterator, expr: unknown, options: Options) =>
    collection.transform((docs) => {
      const inputs = docs as Document[];
      return retyped(reshapes ? inputs : [], stage(Lazy(inputs), expr, options).value<Document>());
    });
}

function retyped(inputs: Document[], outputs: Document[]): Document[] {
  let passed: Set<Document> | undefined;
  let byId: Map<string, Document> | undefined;
  return outputs.map((out) => {
    if (!isPlainObject(out) || originalOf(out) !== out) return out;
    passed ??= new Set(inputs);
    if (passed.has(out)) return out;
    if (!byId) {
      byId = new Map();
      for (const input of inputs) {
        const stored = originalOf(input);
        if (stored !== input && stored._id !== undefined) byId.set(idKey(stored._id), stored);
      }
    }
    const source = out._id === undefined ? undefined : byId.get(idKey(out._id));
    return promoteNumbers(restoreNumberTypes(storedOf(out), source)) as Document;
  });
}
