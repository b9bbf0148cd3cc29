/**
 * The data-access API over the embedded engine for one collection. Reads run synchronously against the
 * in-memory state; writes run inside a WriteUnit of the service store and resolve once durable.
 */
import { isRegexValue } from '../bson/regex';
import { ObjectId } from 'bson';
import { LazyCursor, type CursorState } from '../api/cursor';
import { DatastoreError, type WriteErrorDetail, writeErrorDetail } from '../api/datastore.error';
import {
  type AggregateCursor,
  type AggregateOptions,
  type BulkWriteOperation,
  type BulkWriteOptions,
  type BulkWriteResult,
  type ChangeStream,
  type CollectionHandle,
  type CountOptions,
  type DeleteResult,
  type Document,
  type FindCursor,
  type FindOneAndDeleteOptions,
  type FindOneAndModifyOptions,
  type FindOneOptions,
  type FindOptions,
  type Hint,
  type IndexDescription,
  type IndexOptions,
  type InsertManyOptions,
  type InsertManyResult,
  type InsertOneResult,
  type ReplaceOptions,
  type QueryOptions,
  type SessionOption,
  type SortDirection,
  type SortSpec,
  type UpdateOptions,
  type UpdateResult,
  type WatchOptions,
} from '../api/data-source';
import { cloneValue, collectPathValues, hasOwn, identicalValues, idKey, isPlainObject, normalize, normalizeSpec, normalizeStored, valuesEqual } from '../bson/values';
import { type CollectionState, type StoredRecord } from '../engine/collection-state';
import { compileFilter, evaluateVariables, runPipeline } from '../engine/mingo';
import { buildProjector } from '../engine/projection';
import { checkSort, select, sortDocuments } from '../engine/query';
import { compileCollation, sameCollation, withCollation } from '../engine/collation';
import { applyUpdate, checkReplacement, checkUpdate, upsertBase } from '../engine/update';
import { updatePathsOf } from '../engine/update-description';
import { applyWriteStage, splitWriteStage } from './aggregate-writes';
import { EmbeddedChangeStream } from './change-stream';
import { type EmbeddedSession } from './embedded-session';
import { type ConflictProbe, type ServiceStore, type WriteUnit } from './service-store';

function filterOf(query: Document | undefined): Document {
  if (query === undefined || query === null) return {};
  if (!isPlainObject(query)) throw new DatastoreError('BadValue', 'query filter must be an object', { clientError: true });
  return normalize(query) as Document;
}

function ownerOf(options: SessionOption | undefined): EmbeddedSession | undefined {
  return options?.session as EmbeddedSession | undefined;
}

/** Inserting these documents conflicts with a transaction that wrote one of their `_id`s. */
function insertConflicts(docs: Document[]): ConflictProbe {
  return (changed) => docs.some((doc) => changed.has(idKey(doc._id)));
}

/**
 * A write by filter conflicts with a transaction that changed a document the filter matches as it is
 * committed (what this write would change in MongoDB's snapshot). Filters the probe cannot evaluate on
 * their own (`$expr` with `let` variables) never conflict here: the write waits for the other transaction.
 */
function filterConflicts(filter: Document, options: QueryOptions | undefined): ConflictProbe {
  return (changed) => {
    try {
      const matches = compileFilter(filter, options?.let ? evaluateVariables(options.let) : undefined);
      for (const before of changed.values()) if (before && matches(before)) return true;
    } catch {
      // Not evaluable without the write's context: no conflict is reported, the write waits instead.
    }
    return false;
  };
}

/** A bulk write conflicts when one of its operations would. */
function bulkConflicts(operations: BulkWriteOperation[], options: BulkWriteOptions): ConflictProbe {
  const probes = operations.map((operation): ConflictProbe => {
    if ('insertOne' in operation) return insertConflicts([operation.insertOne.document]);
    const spec = 'updateOne' in operation ? operation.updateOne : 'updateMany' in operation ? operation.updateMany : 'replaceOne' in operation ? operation.replaceOne : 'deleteOne' in operation ? operation.deleteOne : operation.deleteMany;
    return filterConflicts(spec.filter, options);
  });
  return (changed) => probes.some((probe) => probe(changed));
}

/** Validates a new document and puts its `_id` (generated if missing) first, as MongoDB stores it. */
function prepareInsert(doc: Document): Document {
  if (!isPlainObject(doc)) throw new DatastoreError('BadValue', 'document to insert must be an object', { clientError: true });
  const id = doc._id === undefined ? new ObjectId() : normalizeStored(doc._id);
  checkId(id);
  const out: Document = { _id: id };
  for (const key in doc) {
    if (!hasOwn(doc, key)) continue;
    const value = doc[key];
    if (key !== '_id' && value !== undefined) out[key] = normalizeStored(value);
  }
  return out;
}

function checkId(id: unknown): void {
  if (Array.isArray(id)) throw new DatastoreError('BadValue', "can't use an array for _id");
  if (isRegexValue(id)) throw new DatastoreError('BadValue', "can't use a regex for _id");
  const dollar = dollarKeyIn(id);
  if (dollar !== undefined) throw new DatastoreError('DollarPrefixedFieldName', `_id fields may not contain '$'-prefixed fields: ${dollar} is not valid for storage.`);
}

/** The first `$`-prefixed key at any depth of an `_id` document (MongoDB 7.1+ refuses them all; 7.0 the top level). */
function dollarKeyIn(value: unknown): string | undefined {
  if (!isPlainObject(value)) return undefined;
  for (const key of Object.keys(value)) {
    if (key.startsWith('$')) return key;
    const nested = dollarKeyIn(value[key]);
    if (nested !== undefined) return nested;
  }
  return undefined;
}

function withIdFirst(doc: Document, id: unknown): Document {
  checkId(id);
  const out: Document = { _id: id };
  for (const key of Object.keys(doc)) if (key !== '_id') out[key] = doc[key];
  return out;
}

/** MongoDB refuses a hint naming no index of the collection; a missing collection has none to check. */
function checkHint(coll: CollectionState | undefined, hint: Hint | undefined): void {
  if (hint === undefined || !coll || coll.view) return;
  if (isPlainObject(hint) && Object.keys(hint).length === 1 && '$natural' in hint) return;
  const wanted = isPlainObject(hint) ? Object.entries(hint) : undefined;
  for (const index of coll.indexes.values()) {
    if (typeof hint === 'string' && index.name === hint) return;
    const key = Object.entries(index.spec);
    if (wanted && wanted.length === key.length && wanted.every(([f, d], i) => key[i][0] === f && Number(key[i][1]) === Number(d))) return;
  }
  throw new DatastoreError('BadValue', 'hint provided does not correspond to an existing index');
}

/** `let` must be a document; MongoDB's own variables ($$ROOT, $$NOW...) cannot be redefined. */
function variablesOf(options: { let?: Document } | undefined): Document | undefined {
  const value = options?.let;
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) throw new DatastoreError('TypeMismatch', "BSON field 'let' is the wrong type, expected type 'object'");
  for (const name of Object.keys(value)) {
    if (!/^[a-z\u0080-\uffff][\w\u0080-\uffff]*$/.test(name)) {
      throw new DatastoreError('Location16870', `'${name}' starts with an invalid character for a user variable name`);
    }
  }
  return evaluateVariables(normalizeSpec(value) as Document);
}

/** Sort on a single-document update or replace (MongoDB 8.0); refused on updateMany. */
function updateSort(sort: SortSpec | undefined, many: boolean): SortSpec | undefined {
  if (sort === undefined) return undefined;
  if (many) throw new DatastoreError('InvalidOptions', 'Cannot specify sort with multi=true', { clientError: true });
  return checkSort(sort);
}

function emptyBulkResult(): BulkWriteResult {
  return { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0, insertedIds: {}, upsertedIds: {} };
}

function writeErrorOf(error: unknown, index: number): WriteErrorDetail {
  if (error instanceof DatastoreError) return writeErrorDetail(error, index);
  return { index, code: 1, errmsg: error instanceof Error ? error.message : String(error) };
}

function bulkError(writeErrors: WriteErrorDetail[], errors: unknown[], result: BulkWriteResult): DatastoreError {
  const first = errors[0];
  const codeName = first instanceof DatastoreError ? first.codeName : 'InternalError';
  const error = new DatastoreError(codeName, writeErrors[0].errmsg, { cause: first });
  error.writeErrors = writeErrors;
  error.result = result;
  return error;
}

export class EmbeddedCollection implements CollectionHandle {
  constructor(
    private readonly store: ServiceStore,
    readonly dbName: string,
    readonly collectionName: string,
  ) {}

  private get scope(): { db: string; coll: string } {
    return { db: this.dbName, coll: this.collectionName };
  }

  private state(): CollectionState | undefined {
    return this.store.collection(this.dbName, this.collectionName);
  }

  /** Documents of a view: its pipeline run, under the view's collation, over its source (itself possibly a view). */
  private viewDocuments(coll: CollectionState, depth = 0): Document[] {
    if (!coll.view) return [...coll.records.values()].map((r) => r.doc);
    if (depth > 20) throw new DatastoreError('BadValue', 'view definitions nest too deeply');
    const { viewOn, pipeline } = coll.view;
    const source = this.store.collection(this.dbName, viewOn);
    const docs = source ? this.viewDocuments(source, depth + 1) : [];
    return withCollation(coll.collation, () => runPipeline(docs, pipeline, (name) => this.resolve(name)));
  }

  private resolve(name: string): Document[] {
    const coll = this.store.collection(this.dbName, name);
    return coll ? this.viewDocuments(coll) : [];
  }

  /** Documents as `owner` may see them: the committed ones while another session's transaction is open. */
  private source(coll: CollectionState, owner: EmbeddedSession | undefined): Document[] {
    return this.store.committedView(owner, this.dbName, this.collectionName) ?? this.viewDocuments(coll);
  }

  /**
   * An operation's collation: its own, else the collection's default one (absent: binary). A view's is its
   * own: an operation naming another is refused, as MongoDB does.
   */
  private collationOf(explicit: Document | undefined, coll = this.state()): Document | undefined {
    if (coll?.view && explicit !== undefined && !sameCollation(explicit, coll.collation)) {
      throw new DatastoreError('OptionNotSupportedOnView', "Cannot override a view's default collation", { clientError: true });
    }
    return explicit ?? coll?.collation;
  }

  /** The matching stored documents (not copies). */
  private matching(filter: Document, state: CursorState, owner?: EmbeddedSession, query: QueryOptions = {}): Document[] {
    const coll = this.state();
    checkHint(coll, query.hint);
    const variables = variablesOf(query);
    const committed = this.store.committedView(owner, this.dbName, this.collectionName);
    if (!coll && !committed) return [];
    const sort = checkSort(state.sort);
    const collation = this.collationOf(query.collation, coll);
    if (coll && !coll.view && !committed) return select(coll, filter, { sort, skip: state.skip, limit: state.limit, variables, collation }).map((r) => r.doc);
    const source = committed ?? (coll ? this.viewDocuments(coll) : []);
    const docs = withCollation(collation, () => {
      const matches = compileFilter(filter, variables);
      const found = source.filter((d) => matches(d));
      return sort ? sortDocuments(found, sort) : found;
    });
    const skip = state.skip ?? 0;
    const limit = state.limit ? Math.abs(state.limit) : 0;
    return docs.slice(skip, limit ? skip + limit : undefined);
  }

  private read(filter: Document, state: CursorState, owner: EmbeddedSession | undefined, raw = false, query: QueryOptions = {}): Document[] {
    const docs = this.matching(filter, state, owner, query);
    const collation = this.collationOf(query.collation);
    const output = (): Document[] => {
      const project = buildProjector(state.projection, filter);
      if (raw) return project ? docs.map(project) : docs;
      return docs.map((d) => cloneValue(project ? project(d) : d));
    };
    // A projection's $elemMatch, positional `$` and expressions compare strings by the query's collation.
    return collation === undefined ? output() : withCollation(collation, output);
  }

  /** A copy of `doc` projected, the projection comparing strings by `collation` (findAndModify's answer). */
  private projectedCopy(doc: Document, projection: Document | undefined, filter: Document, collation: Document | undefined): Document {
    return withCollation(collation, () => {
      const project = buildProjector(projection, filter);
      return cloneValue(project ? project(doc) : doc);
    });
  }

  find(query?: Document, projection?: Document, options: FindOptions = {}): FindCursor {
    const filter = filterOf(query);
    const state: CursorState = { sort: options.sort, skip: options.skip, limit: options.limit, projection: projection ?? options.projection };
    return new LazyCursor(async (s) => this.read(filter, s, ownerOf(options), options.raw === true, options), state);
  }

  async findOne(query?: Document, projection?: Document, options: FindOneOptions = {}): Promise<Document | null> {
    const filter = filterOf(query);
    const [doc] = this.read(filter, { sort: options.sort, skip: options.skip, limit: 1, projection: projection ?? options.projection }, ownerOf(options), false, options);
    return doc ?? null;
  }

  private writable(unit: WriteUnit): CollectionState {
    return this.store.collectionForWrite(unit, this.dbName, this.collectionName);
  }

  private existingForWrite(): CollectionState | undefined {
    const coll = this.state();
    if (coll?.view) throw new DatastoreError('CommandNotSupportedOnView', `Namespace ${this.dbName}.${this.collectionName} is a view, not a collection`);
    return coll;
  }

  // ---- synchronous write steps, shared by the single operations, bulkWrite and transactions ----

  private insertStep(unit: WriteUnit, doc: Document): unknown {
    this.store.insert(unit, this.writable(unit), doc);
    return doc._id;
  }

  private updateStep(unit: WriteUnit, filter: Document, update: Document | Document[], options: UpdateOptions, many: boolean): UpdateResult {
    const coll = this.existingForWrite();
    checkHint(coll, options.hint);
    const variables = variablesOf(options);
    const sort = updateSort(options.sort, many);
    const collation = this.collationOf(options.collation, coll);
    const records = coll ? select(coll, filter, { limit: many ? 0 : 1, sort, variables, collation }) : [];
    let modifiedCount = 0;
    const paths = updatePathsOf(update);
    for (const rec of records) {
      const next = applyUpdate(rec.doc, update, { filter, arrayFilters: options.arrayFilters, variables, collation });
      if (identicalValues(next, rec.doc)) continue;
      this.store.replace(unit, coll as CollectionState, rec, next, 'u', paths);
      modifiedCount++;
    }
    if (records.length > 0 || !options.upsert) return { matchedCount: records.length, modifiedCount, upsertedCount: 0 };
    const base = upsertBase(filter);
    const built = applyUpdate(base, update, { filter, arrayFilters: options.arrayFilters, inserting: true, variables, collation });
    const doc = withIdFirst(built, '_id' in built ? built._id : new ObjectId());
    this.insertStep(unit, doc);
    return { matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: doc._id };
  }

  private replacement(rec: StoredRecord, replacement: Document): Document {
    if ('_id' in replacement && !valuesEqual(replacement._id, rec.doc._id)) {
      throw new DatastoreError('ImmutableField', "After applying the update, the (immutable) field '_id' was found to have been altered");
    }
    return withIdFirst(replacement, rec.doc._id);
  }

  private replaceStep(unit: WriteUnit, filter: Document, replacement: Document, options: ReplaceOptions): UpdateResult {
    const coll = this.existingForWrite();
    checkHint(coll, options.hint);
    const [rec] = coll ? select(coll, filter, { limit: 1, sort: updateSort(options.sort, false), variables: variablesOf(options), collation: this.collationOf(options.collation, coll) }) : [];
    if (rec) {
      const next = this.replacement(rec, replacement);
      if (identicalValues(next, rec.doc)) return { matchedCount: 1, modifiedCount: 0, upsertedCount: 0 };
      this.store.replace(unit, coll as CollectionState, rec, next, 'r');
      return { matchedCount: 1, modifiedCount: 1, upsertedCount: 0 };
    }
    if (!options.upsert) return { matchedCount: 0, modifiedCount: 0, upsertedCount: 0 };
    const base = upsertBase(filter);
    const doc = withIdFirst(replacement, '_id' in replacement ? replacement._id : '_id' in base ? base._id : new ObjectId());
    this.insertStep(unit, doc);
    return { matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: doc._id };
  }

  private deleteStep(unit: WriteUnit, filter: Document, many: boolean, options: QueryOptions = {}): DeleteResult {
    const coll = this.existingForWrite();
    checkHint(coll, options.hint);
    if (!coll) return { deletedCount: 0 };
    const records = select(coll, filter, { limit: many ? 0 : 1, variables: variablesOf(options), collation: this.collationOf(options.collation, coll) });
    for (const rec of records) this.store.delete(unit, coll, rec);
    return { deletedCount: records.length };
  }

  // ---- public writes ----

  async insertOne(document: Document, options?: SessionOption): Promise<InsertOneResult> {
    const doc = prepareInsert(document);
    const insertedId = await this.store.write(ownerOf(options), (unit) => this.insertStep(unit, doc), this.scope, insertConflicts([doc]));
    return { insertedId };
  }

  async insertMany(documents: Document[], options: InsertManyOptions = {}): Promise<InsertManyResult> {
    if (!Array.isArray(documents) || documents.length === 0) {
      throw new DatastoreError('InvalidOptions', 'Invalid BulkOperation, Batch cannot be empty', { clientError: true });
    }
    const docs = documents.map(prepareInsert);
    const ordered = options.ordered ?? true;
    return this.store.write(ownerOf(options), (unit) => {
      const insertedIds: unknown[] = [];
      const writeErrors: WriteErrorDetail[] = [];
      const errors: unknown[] = [];
      const result = emptyBulkResult();
      for (let i = 0; i < docs.length; i++) {
        try {
          insertedIds.push(this.insertStep(unit, docs[i]));
          result.insertedIds[i] = docs[i]._id;
          result.insertedCount++;
        } catch (error) {
          if (!(error instanceof DatastoreError) || error.code !== 11000) throw error;
          writeErrors.push(writeErrorOf(error, i));
          errors.push(error);
          if (ordered) break;
        }
      }
      if (writeErrors.length > 0) throw bulkError(writeErrors, errors, result);
      return { insertedIds, insertedCount: insertedIds.length };
    }, this.scope, insertConflicts(docs));
  }

  async updateOne(query: Document, update: Document | Document[], options: UpdateOptions = {}): Promise<UpdateResult> {
    checkUpdate(update);
    const filter = filterOf(query);
    return this.store.write(ownerOf(options), (unit) => this.updateStep(unit, filter, update, options, false), this.scope, filterConflicts(filter, options));
  }

  async updateMany(query: Document, update: Document | Document[], options: UpdateOptions = {}): Promise<UpdateResult> {
    checkUpdate(update);
    const filter = filterOf(query);
    return this.store.write(ownerOf(options), (unit) => this.updateStep(unit, filter, update, options, true), this.scope, filterConflicts(filter, options));
  }

  async replaceOne(query: Document, replacement: Document, options: ReplaceOptions = {}): Promise<UpdateResult> {
    checkReplacement(replacement);
    const filter = filterOf(query);
    const doc = normalizeStored(replacement) as Document;
    return this.store.write(ownerOf(options), (unit) => this.replaceStep(unit, filter, doc, options), this.scope, filterConflicts(filter, options));
  }

  async deleteOne(query: Document, options?: QueryOptions): Promise<DeleteResult> {
    const filter = filterOf(query);
    return this.store.write(ownerOf(options), (unit) => this.deleteStep(unit, filter, false, options), this.scope, filterConflicts(filter, options));
  }

  async deleteMany(query: Document, options?: QueryOptions): Promise<DeleteResult> {
    const filter = filterOf(query);
    return this.store.write(ownerOf(options), (unit) => this.deleteStep(unit, filter, true, options), this.scope, filterConflicts(filter, options));
  }

  async findOneAndUpdate(query: Document, update: Document | Document[], options: FindOneAndModifyOptions = {}): Promise<Document | null> {
    checkUpdate(update);
    const filter = filterOf(query);
    buildProjector(options.projection, filter); // refuses a bad projection before writing anything
    const sort = checkSort(options.sort);
    const variables = variablesOf(options);
    return this.store.write(ownerOf(options), (unit) => {
      const coll = this.existingForWrite();
      checkHint(coll, options.hint);
      const collation = this.collationOf(options.collation, coll);
      const [rec] = coll ? select(coll, filter, { sort, limit: 1, variables, collation }) : [];
      let result: Document | null = null;
      if (rec) {
        const before = rec.doc;
        const next = applyUpdate(before, update, { filter, arrayFilters: options.arrayFilters, variables, collation });
        if (!identicalValues(next, before)) this.store.replace(unit, coll as CollectionState, rec, next, 'u', updatePathsOf(update));
        result = options.returnNewDocument ? next : before;
      } else if (options.upsert) {
        const built = applyUpdate(upsertBase(filter), update, { filter, arrayFilters: options.arrayFilters, inserting: true, variables, collation });
        const doc = withIdFirst(built, '_id' in built ? built._id : new ObjectId());
        this.insertStep(unit, doc);
        result = options.returnNewDocument ? doc : null;
      }
      return result === null ? null : this.projectedCopy(result, options.projection, filter, collation);
    }, this.scope, filterConflicts(filter, options));
  }

  async findOneAndReplace(query: Document, replacement: Document, options: FindOneAndModifyOptions = {}): Promise<Document | null> {
    checkReplacement(replacement);
    const filter = filterOf(query);
    const doc = normalizeStored(replacement) as Document;
    buildProjector(options.projection, filter); // refuses a bad projection before writing anything
    const sort = checkSort(options.sort);
    const variables = variablesOf(options);
    return this.store.write(ownerOf(options), (unit) => {
      const coll = this.existingForWrite();
      checkHint(coll, options.hint);
      const [rec] = coll ? select(coll, filter, { sort, limit: 1, variables, collation: this.collationOf(options.collation, coll) }) : [];
      let result: Document | null = null;
      if (rec) {
        const before = rec.doc;
        const next = this.replacement(rec, doc);
        if (!identicalValues(next, before)) this.store.replace(unit, coll as CollectionState, rec, next, 'r');
        result = options.returnNewDocument ? next : before;
      } else if (options.upsert) {
        const base = upsertBase(filter);
        const inserted = withIdFirst(doc, '_id' in doc ? doc._id : '_id' in base ? base._id : new ObjectId());
        this.insertStep(unit, inserted);
        result = options.returnNewDocument ? inserted : null;
      }
      return result === null ? null : this.projectedCopy(result, options.projection, filter, this.collationOf(options.collation, coll));
    }, this.scope, filterConflicts(filter, options));
  }

  async findOneAndDelete(query: Document, options: FindOneAndDeleteOptions = {}): Promise<Document | null> {
    const filter = filterOf(query);
    buildProjector(options.projection, filter); // refuses a bad projection before writing anything
    const sort = checkSort(options.sort);
    const variables = variablesOf(options);
    return this.store.write(ownerOf(options), (unit) => {
      const coll = this.existingForWrite();
      checkHint(coll, options.hint);
      const [rec] = coll ? select(coll, filter, { sort, limit: 1, variables, collation: this.collationOf(options.collation, coll) }) : [];
      if (!rec || !coll) return null;
      this.store.delete(unit, coll, rec);
      return this.projectedCopy(rec.doc, options.projection, filter, this.collationOf(options.collation, coll));
    }, this.scope, filterConflicts(filter, options));
  }

  async bulkWrite(operations: BulkWriteOperation[], options: BulkWriteOptions = {}): Promise<BulkWriteResult> {
    if (!Array.isArray(operations) || operations.length === 0) {
      throw new DatastoreError('InvalidOptions', 'Invalid BulkOperation, Batch cannot be empty', { clientError: true });
    }
    const ordered = options.ordered ?? true;
    // Validate everything before writing anything, as drivers do.
    const variables = options.let;
    const steps = operations.map((operation, index) => this.bulkStep(operation, index, variables));
    return this.store.write(ownerOf(options), (unit) => {
      const result = emptyBulkResult();
      const writeErrors: WriteErrorDetail[] = [];
      const errors: unknown[] = [];
      for (let i = 0; i < steps.length; i++) {
        try {
          steps[i](unit, result);
        } catch (error) {
          if (!(error instanceof DatastoreError)) throw error;
          writeErrors.push(writeErrorOf(error, i));
          errors.push(error);
          if (ordered) break;
        }
      }
      if (writeErrors.length > 0) throw bulkError(writeErrors, errors, result);
      return result;
    }, this.scope, bulkConflicts(operations, options));
  }

  private bulkStep(operation: BulkWriteOperation, index: number, variables: Document | undefined): (unit: WriteUnit, result: BulkWriteResult) => void {
    if ('insertOne' in operation) {
      const doc = prepareInsert(operation.insertOne.document);
      return (unit, result) => {
        this.insertStep(unit, doc);
        result.insertedCount++;
        result.insertedIds[index] = doc._id;
      };
    }
    const addUpdate = (result: BulkWriteResult, r: UpdateResult) => {
      result.matchedCount += r.matchedCount;
      result.modifiedCount += r.modifiedCount;
      if (r.upsertedCount) {
        result.upsertedCount++;
        result.upsertedIds[index] = r.upsertedId;
      }
    };
    if ('updateOne' in operation || 'updateMany' in operation) {
      const many = 'updateMany' in operation;
      const spec: UpdateOptions & { filter: Document; update: Document | Document[] } = 'updateMany' in operation ? operation.updateMany : operation.updateOne;
      checkUpdate(spec.update);
      const filter = filterOf(spec.filter);
      const options: UpdateOptions = { upsert: spec.upsert, arrayFilters: spec.arrayFilters, hint: spec.hint, sort: spec.sort, let: variables, collation: spec.collation };
      return (unit, result) => addUpdate(result, this.updateStep(unit, filter, spec.update, options, many));
    }
    if ('replaceOne' in operation) {
      const spec = operation.replaceOne;
      checkReplacement(spec.replacement);
      const filter = filterOf(spec.filter);
      const doc = normalizeStored(spec.replacement) as Document;
      return (unit, result) => addUpdate(result, this.replaceStep(unit, filter, doc, { upsert: spec.upsert, hint: spec.hint, sort: spec.sort, let: variables, collation: spec.collation }));
    }
    if ('deleteOne' in operation || 'deleteMany' in operation) {
      const many = 'deleteMany' in operation;
      const spec = many ? operation.deleteMany : operation.deleteOne;
      const filter = filterOf(spec.filter);
      return (unit, result) => {
        result.deletedCount += this.deleteStep(unit, filter, many, { hint: spec.hint, let: variables, collation: spec.collation }).deletedCount;
      };
    }
    throw new DatastoreError('FailedToParse', `Invalid bulkWrite operation at index ${index}: ${Object.keys(operation).join(', ')}`, { clientError: true });
  }

  // ---- reads ----

  aggregate(pipeline: Document[], options: AggregateOptions = {}): AggregateCursor {
    if (!Array.isArray(pipeline)) throw new DatastoreError('BadValue', 'aggregate requires a pipeline array', { clientError: true });
    const { read: stages, write } = splitWriteStage(normalizeSpec(pipeline) as Document[], this.dbName);
    const owner = ownerOf(options);
    if (write && owner?.inTransaction()) {
      throw new DatastoreError('OperationNotSupportedInTransaction', `Operation not permitted in transaction :: caused by :: ${write.kind} cannot be used in a transaction`);
    }
    return new LazyCursor(
      async (state) => {
        const variables = variablesOf(options);
        checkHint(this.state(), options.hint);
        let rest = stages;
        let docs: Document[];
        const first = stages[0];
        if (first && isPlainObject(first.$match)) {
          docs = this.matching(first.$match, {}, owner, { let: options.let, collation: options.collation });
          rest = stages.slice(1);
        } else {
          const coll = this.state();
          docs = coll ? this.source(coll, owner) : (this.store.committedView(owner, this.dbName, this.collectionName) ?? []);
        }
        if (state.skip && !write) rest = [...rest, { $skip: state.skip }];
        const collation = this.collationOf(options.collation);
        const out = rest.length ? withCollation(collation, () => runPipeline(docs, rest, (name) => this.resolve(name), variables)) : docs;
        if (!write) return out.map((d) => cloneValue(d));
        const results = out.map((d) => cloneValue(d));
        await this.store.write(owner, (unit) => applyWriteStage(this.store, unit, write, results, collation), write.target);
        return [];
      },
      {},
      'aggregate',
    );
  }

  async count(query?: Document, options: CountOptions = {}): Promise<number> {
    return this.countDocuments(query, options);
  }

  async countDocuments(query?: Document, options: CountOptions = {}): Promise<number> {
    const filter = filterOf(query);
    const owner = ownerOf(options);
    const coll = this.state();
    const hidden = this.store.committedView(owner, this.dbName, this.collectionName) !== undefined;
    if (!coll && !hidden) return 0;
    checkHint(coll, options.hint);
    if (coll && !hidden && Object.keys(filter).length === 0 && !options.skip && !options.limit && !coll.view) return coll.records.size;
    return this.matching(filter, { skip: options.skip, limit: options.limit }, owner, options).length;
  }

  async estimatedDocumentCount(options?: SessionOption): Promise<number> {
    const committed = this.store.committedView(ownerOf(options), this.dbName, this.collectionName);
    if (committed) return committed.length;
    const coll = this.state();
    if (!coll) return 0;
    return coll.view ? this.viewDocuments(coll).length : coll.records.size;
  }

  async distinct(field: string, query?: Document, options?: QueryOptions): Promise<unknown[]> {
    const filter = filterOf(query);
    const owner = ownerOf(options);
    const parts = field.split('.');
    const seen = new Set<string>();
    const out: unknown[] = [];
    // Under a collation, strings equal by it are one value (the first one met, as MongoDB returns one of them).
    const compare = compileCollation(this.collationOf(options?.collation));
    const strings: string[] = [];
    for (const doc of this.matching(filter, {}, owner, options)) {
      for (const value of collectPathValues(doc, parts)) {
        for (const item of Array.isArray(value) ? value : [value]) {
          if (compare && typeof item === 'string') {
            if (strings.some((s) => compare(s, item) === 0)) continue;
            strings.push(item);
            out.push(item);
            continue;
          }
          const key = idKey(item) + (typeof item === 'number' ? '' : `:${typeof item}`);
          if (seen.has(key)) continue;
          seen.add(key);
          out.push(cloneValue(item));
        }
      }
    }
    return out;
  }

  // ---- indexes and lifecycle ----

  async createIndex(keys: Record<string, SortDirection>, options: IndexOptions = {}): Promise<string> {
    if (!isPlainObject(keys) || Object.keys(keys).length === 0) throw new DatastoreError('BadValue', 'index keys must be a non-empty object', { clientError: true });
    for (const [field, dir] of Object.entries(keys)) {
      if (dir !== 1 && dir !== -1) throw new DatastoreError('BadValue', `unsupported index type for field ${field}: only 1 and -1 are supported`);
    }
    return this.store.write(undefined, (unit) => this.store.createIndex(unit, this.writable(unit), keys, options));
  }

  async dropIndex(name: string): Promise<void> {
    await this.store.write(undefined, (unit) => {
      const coll = this.existingForWrite();
      if (!coll) throw new DatastoreError('NamespaceNotFound', `ns not found ${this.dbName}.${this.collectionName}`);
      this.store.dropIndex(unit, coll, name);
    });
  }

  async listIndexes(): Promise<IndexDescription[]> {
    const coll = this.state();
    return coll ? [...coll.indexes.values()].map((i) => i.describe()) : [];
  }

  async drop(): Promise<boolean> {
    return this.store.write(undefined, (unit) => this.store.dropCollection(unit, this.dbName, this.collectionName));
  }

  watch(pipeline: Document[] = [], options: WatchOptions = {}): ChangeStream {
    return new EmbeddedChangeStream(this.store, { db: this.dbName, coll: this.collectionName }, pipeline, options);
  }
}
