/**
 * `$out` and `$merge` for the embedded engine: the last stage of a pipeline writes its results to a
 * collection of the same service, in one write unit (all or nothing), as MongoDB 7 does. Who may run them
 * is not decided here: the rules layer allows them to system callers only.
 */
import { ObjectId } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import { type Document, formatValue, idKey, isPlainObject, normalize, normalizeStored, promoteNumbers, valuesEqual } from '../bson/values';
import { type Collation, sameCollation } from '../engine/collation';
import { type CollectionState } from '../engine/collection-state';
import { select } from '../engine/query';
import { applyUpdate, checkUpdate } from '../engine/update';
import { type ServiceStore, type WriteUnit } from './service-store';

export interface Namespace {
  db: string;
  coll: string;
}

export type WriteStage =
  | { kind: '$out'; target: Namespace }
  | {
      kind: '$merge';
      target: Namespace;
      on: string[];
      whenMatched: 'replace' | 'keepExisting' | 'merge' | 'fail' | Document[];
      whenNotMatched: 'insert' | 'discard' | 'fail';
      variables?: Document;
    };

const WRITE_STAGES = new Set(['$out', '$merge']);

function stageName(stage: unknown): string | undefined {
  return isPlainObject(stage) ? Object.keys(stage)[0] : undefined;
}

/** Refuses `$out`/`$merge` anywhere but last, including inside `$facet`, `$lookup` and `$unionWith`. */
function refuseNested(value: unknown, where: string): void {
  if (Array.isArray(value)) {
    for (const item of value) refuseNested(item, where);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [key, inner] of Object.entries(value)) {
    if (WRITE_STAGES.has(key)) {
      throw new DatastoreError(where === 'a $facet stage' ? 'Location40600' : 'Location51047', `${key} is not allowed to be used within ${where}`);
    }
    refuseNested(inner, where);
  }
}

function namespaceOf(value: unknown, db: string, stage: string): Namespace {
  if (typeof value === 'string' && value.length > 0) return { db, coll: value };
  if (isPlainObject(value) && typeof value.coll === 'string' && value.coll.length > 0) {
    if (value.db !== undefined && typeof value.db !== 'string') throw new DatastoreError('TypeMismatch', `${stage} 'db' must be a string`);
    return { db: (value.db) ?? db, coll: value.coll };
  }
  throw new DatastoreError('Location16990', `${stage} requires a collection name as a string or a document with 'db' and 'coll'`);
}

function mergeSpec(spec: unknown, db: string): WriteStage {
  if (typeof spec === 'string') return { kind: '$merge', target: { db, coll: spec }, on: ['_id'], whenMatched: 'merge', whenNotMatched: 'insert' };
  if (!isPlainObject(spec)) throw new DatastoreError('Location51182', '$merge requires a string or an object argument');
  for (const key of Object.keys(spec)) {
    if (!['into', 'on', 'let', 'whenMatched', 'whenNotMatched'].includes(key)) {
      throw new DatastoreError('Location40415', `BSON field '$merge.${key}' is an unknown field.`);
    }
  }
  const on = spec.on === undefined ? ['_id'] : Array.isArray(spec.on) ? spec.on : [spec.on];
  if (on.length === 0 || on.some((f) => typeof f !== 'string')) throw new DatastoreError('Location51187', "$merge 'on' must be a field name or a non-empty array of field names");
  const whenMatched = spec.whenMatched ?? 'merge';
  if (!Array.isArray(whenMatched) && !['replace', 'keepExisting', 'merge', 'fail'].includes(whenMatched as string)) {
    throw new DatastoreError('BadValue', `Enumeration value '${formatValue(whenMatched)}' for field '$merge.whenMatched' is not a valid value.`);
  }
  if (Array.isArray(whenMatched)) checkUpdate(whenMatched);
  const whenNotMatched = spec.whenNotMatched ?? 'insert';
  if (!['insert', 'discard', 'fail'].includes(whenNotMatched as string)) {
    throw new DatastoreError('BadValue', `Enumeration value '${formatValue(whenNotMatched)}' for field '$merge.whenNotMatched' is not a valid value.`);
  }
  if (spec.let !== undefined && !Array.isArray(whenMatched)) throw new DatastoreError('Location51199', `Cannot use 'let' variables with 'whenMatched: ${formatValue(whenMatched)}' mode`);
  return {
    kind: '$merge',
    target: namespaceOf(spec.into, db, '$merge'),
    on: on as string[],
    whenMatched: whenMatched as Extract<WriteStage, { kind: '$merge' }>['whenMatched'],
    whenNotMatched: whenNotMatched as 'insert' | 'discard' | 'fail',
    variables: isPlainObject(spec.let) ? spec.let : undefined,
  };
}

/** Splits off a final `$out`/`$merge` stage; refuses one anywhere else. */
export function splitWriteStage(stages: Document[], db: string): { read: Document[]; write?: WriteStage } {
  stages.forEach((stage, i) => {
    const name = stageName(stage);
    if (name && WRITE_STAGES.has(name) && i !== stages.length - 1) {
      throw new DatastoreError('Location40601', `${name} can only be the final stage in the pipeline`);
    }
    if (name === '$facet') refuseNested(stage.$facet, 'a $facet stage');
    if (name === '$lookup' || name === '$unionWith') refuseNested(stage[name], `a ${name} pipeline`);
  });
  const last = stages[stages.length - 1];
  const name = stageName(last);
  if (!name || !WRITE_STAGES.has(name)) return { read: stages };
  const write = name === '$out' ? ({ kind: '$out', target: namespaceOf(last.$out, db, '$out') } as const) : mergeSpec(last.$merge, db);
  return { read: stages.slice(0, -1), write };
}

function withId(doc: Document): Document {
  return doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc;
}

/** `$out`: the target holds exactly the results afterwards; its indexes stay. */
function writeOut(store: ServiceStore, unit: WriteUnit, target: Namespace, docs: Document[]): void {
  const seen = new Set<string>();
  const prepared = docs.map((d) => withId(normalizeStored(d) as Document));
  for (const doc of prepared) {
    const key = idKey(doc._id);
    if (seen.has(key)) throw new DatastoreError('DuplicateKey', `E11000 duplicate key error collection: ${target.db}.${target.coll} index: _id_ dup key: { _id: ${JSON.stringify(doc._id)} }`);
    seen.add(key);
  }
  const coll = store.collectionForWrite(unit, target.db, target.coll);
  for (const rec of [...coll.records.values()]) store.delete(unit, coll, rec);
  for (const doc of prepared) store.insert(unit, coll, doc);
}

/** MongoDB's check that `on` identifies one document: a unique index on exactly those fields, of the operation's collation. */
function requireUniqueIndex(coll: CollectionState | undefined, on: string[], target: Namespace, collation: Collation | undefined): void {
  if (on.length === 1 && on[0] === '_id') return;
  const fits =
    coll &&
    [...coll.indexes.values()].some((i) => i.unique && !i.sparse && i.fields.length === on.length && on.every((f) => i.fields.includes(f)) && sameCollation(i.collation, collation));
  if (!fits) throw new DatastoreError('Location51183', `Cannot find index to verify that join fields will be unique (target ${target.db}.${target.coll})`);
}

function mergeOne(store: ServiceStore, unit: WriteUnit, stage: Extract<WriteStage, { kind: '$merge' }>, coll: CollectionState, incoming: Document, collation: Collation | undefined): void {
  const filter: Document = {};
  for (const field of stage.on) {
    const value = field.split('.').reduce<unknown>((v, part) => (isPlainObject(v) ? v[part] : undefined), incoming);
    if (value === undefined || value === null || Array.isArray(value)) {
      throw new DatastoreError('Location51132', `$merge write error: 'on' field '${field}' cannot be missing, null, undefined or an array`);
    }
    filter[field] = value;
  }
  const [rec] = select(coll, filter, { limit: 1, collation });
  if (!rec) {
    if (stage.whenNotMatched === 'discard') return;
    if (stage.whenNotMatched === 'fail') {
      throw new DatastoreError('Location13113', '$merge could not find a matching document in the target collection for at least one document in the source collection');
    }
    store.insert(unit, coll, withId(incoming));
    return;
  }
  const existing = rec.doc;
  let next: Document;
  if (Array.isArray(stage.whenMatched)) {
    const variables = { new: promoteNumbers(incoming), ...(stage.variables ? (normalize(stage.variables) as Document) : {}) };
    next = applyUpdate(existing, stage.whenMatched, { variables, collation });
  } else if (stage.whenMatched === 'keepExisting') {
    return;
  } else if (stage.whenMatched === 'fail') {
    const error = new DatastoreError('DuplicateKey', `$merge with whenMatched: fail found an existing document with the same values for the 'on' field: ${JSON.stringify(filter)}`);
    error.errorResponse = { keyPattern: Object.fromEntries(stage.on.map((f) => [f, 1])), keyValue: filter };
    throw error;
  } else if (stage.whenMatched === 'replace') {
    next = { _id: existing._id, ...incoming };
  } else {
    next = { ...existing, ...incoming };
  }
  if (incoming._id !== undefined && !valuesEqual(incoming._id, existing._id)) {
    throw new DatastoreError('ImmutableField', "$merge failed to update the matching document, did you attempt to modify the _id or the shard key? :: caused by :: Performing an update on the path '_id' would modify the immutable field '_id'");
  }
  // MongoDB runs whenMatched `merge` as a $set of the incoming fields, a pipeline as a pipeline update, and
  // `replace` as a replacement: their change events are updates, updates and replaces.
  if (stage.whenMatched === 'replace') store.replace(unit, coll, rec, { _id: existing._id, ...next }, 'r');
  else store.replace(unit, coll, rec, { _id: existing._id, ...next }, 'u', Array.isArray(stage.whenMatched) ? undefined : { paths: Object.keys(incoming) });
}

/**
 * Runs the write stage over `docs` inside `unit`. `$out` is all or nothing (MongoDB writes a temporary
 * collection and renames it); `$merge` keeps what it wrote before a failure, as MongoDB's does, and matches
 * its `on` fields by the operation's `collation` (absent: binary).
 */
export function applyWriteStage(store: ServiceStore, unit: WriteUnit, stage: WriteStage, docs: Document[], collation?: Collation): void {
  if (stage.kind === '$merge') {
    const existing = store.collection(stage.target.db, stage.target.coll);
    if (existing?.view) throw new DatastoreError('CommandNotSupportedOnView', `Namespace ${stage.target.db}.${stage.target.coll} is a view, not a collection`);
    requireUniqueIndex(existing, stage.on, stage.target, collation);
    const coll = store.collectionForWrite(unit, stage.target.db, stage.target.coll);
    for (const doc of docs) mergeOne(store, unit, stage, coll, normalizeStored(doc) as Document, collation);
    return;
  }
  const mark = { ops: unit.ops.length, undo: unit.undo.length };
  try {
    writeOut(store, unit, stage.target, docs);
  } catch (error) {
    for (let i = unit.undo.length - 1; i >= mark.undo; i--) unit.undo[i]();
    unit.undo.length = mark.undo;
    unit.ops.length = mark.ops;
    throw error;
  }
}
