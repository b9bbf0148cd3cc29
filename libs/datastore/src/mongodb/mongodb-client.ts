/**
 * The DataSourceClient over a real MongoDB deployment: a thin layer on the official driver that maps the
 * data-access API's call shapes (query, projection, options; returnNewDocument; sessions) to the driver's
 * and the driver's errors to DatastoreError. Change streams are MongoDB's own.
 */
import {
  type AnyBulkWriteOperation,
  type CollationOptions,
  type ChangeStream as DriverChangeStream,
  type ClientSession,
  type Collection,
  type Db,
  MongoClient,
  MongoError,
  MongoServerError,
  type ReadPreferenceMode,
} from 'mongodb';
import { ObjectId } from 'bson';
import { toStoredForm } from '../bson/values';
import { LazyCursor } from '../api/cursor';
import { DatastoreError, codeNameOf } from '../api/datastore.error';
import {
  type AdminHandle,
  type AggregateCursor,
  type BulkWriteOperation,
  type BulkWriteOptions,
  type BulkWriteResult,
  type ChangeEvent,
  type ChangeStream,
  type CollectionHandle,
  type CountOptions,
  type CreateCollectionOptions,
  type DataSession,
  type DataSourceClient,
  type DatabaseHandle,
  type DeleteResult,
  type Document,
  type FindCursor,
  type FindOneAndDeleteOptions,
  type FindOneAndModifyOptions,
  type FindOneOptions,
  type FindOptions,
  type QueryOptions,
  type IndexDescription,
  type IndexOptions,
  type InsertManyOptions,
  type InsertManyResult,
  type InsertOneResult,
  type ReplaceOptions,
  type ResumeToken,
  type SessionOption,
  type SortDirection,
  type UpdateOptions,
  type UpdateResult,
  type WatchOptions,
} from '../api/data-source';

export interface MongoClientOptions {
  readPreference?: ReadPreferenceMode;
  /** Sent in the connection handshake; the datastore service picks the embedded cluster by it. */
  appName?: string;
}

/**
 * MongoDB's errors for a malformed regex in a query (invalid pattern, options in both places, unknown
 * option, null bytes) carry location codes with no name: they are bad input, as BadValue is.
 */
const REGEX_ERROR_CODES = new Set([51091, 51074, 51075, 51108, 51109, 51110]);

function numberOrUndefined(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : value !== null && typeof value === 'object' ? Number(value) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
}

function translate(error: unknown): never {
  if (error instanceof DatastoreError) throw error;
  if (error instanceof MongoError) {
    // A reply read with the typed options (TYPED) carries its code as an Int32.
    const code = numberOrUndefined(error.code);
    const codeName = code !== undefined && REGEX_ERROR_CODES.has(code) ? 'BadValue' : codeNameOf(code);
    const out = new DatastoreError(codeName, error.message, { cause: error, code, clientError: !(error instanceof MongoServerError) });
    const details = error as MongoError & { writeErrors?: unknown; result?: unknown };
    if (Array.isArray(details.writeErrors)) out.writeErrors = (details.writeErrors as { index: number; code: number; errmsg?: string }[]).map((e) => ({ index: Number(e.index), code: Number(e.code), errmsg: e.errmsg ?? '' }));
    if (details.result !== undefined) out.result = details.result;
    throw out;
  }
  throw error;
}

/**
 * A document to insert with its `_id` first, generated here when it has none. The driver would also
 * replace an `_id: null` (which MongoDB stores as is), so it is told not to touch ids (forceServerObjectId).
 */
function withId(document: Document): Document {
  const { _id, ...rest } = document;
  return { _id: _id === undefined ? new ObjectId() : _id, ...rest };
}

/** Insert-one operations of a bulk write get their ids as insertOne does. */
function withIds(operations: BulkWriteOperation[]): BulkWriteOperation[] {
  return operations.map((operation) => ('insertOne' in operation && operation.insertOne?.document ? { insertOne: { document: withId(operation.insertOne.document) } } : operation));
}

async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    translate(error);
  }
}

/**
 * Orders a client's operations after the change streams opened before them. `watch()` answers at once but
 * the driver would open the server-side stream only when first read, missing the writes made meanwhile;
 * the embedded engine watches from the call. So each stream is opened right away, and operations issued
 * after `watch()` wait for that, as the engine's contract (and its callers) expect.
 */
class StartGate {
  private readonly pending = new Set<Promise<unknown>>();

  track(start: Promise<unknown>): void {
    this.pending.add(start);
    void start.finally(() => this.pending.delete(start));
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.pending.size > 0) await Promise.all([...this.pending]);
    return guard(work);
  }
}

class MongoSession implements DataSession {
  constructor(readonly inner: ClientSession) {}
  get id(): string {
    return JSON.stringify(this.inner.id);
  }
  inTransaction(): boolean {
    return this.inner.inTransaction();
  }
  startTransaction(): void {
    this.inner.startTransaction();
  }
  async commitTransaction(): Promise<void> {
    await guard(() => this.inner.commitTransaction());
  }
  async abortTransaction(): Promise<void> {
    await guard(() => this.inner.abortTransaction());
  }
  async withTransaction<T>(fn: (session: DataSession) => Promise<T>): Promise<T> {
    this.startTransaction();
    let result: T;
    try {
      result = await fn(this);
    } catch (error) {
      await this.abortTransaction();
      throw error;
    }
    await this.commitTransaction();
    return result;
  }
  async endSession(): Promise<void> {
    await this.inner.endSession();
  }
}

function sessionOf(options: SessionOption | undefined): { session?: ClientSession; comment?: unknown } {
  const session = options?.session;
  const out: { session?: ClientSession; comment?: unknown } = session instanceof MongoSession ? { session: session.inner } : {};
  if (options?.comment !== undefined) out.comment = options.comment;
  return out;
}

/**
 * Session, comment, hint and `let` as the driver takes them (absent ones left out, not sent as undefined).
 * The driver's findAndModify options type a hint as a document only, yet send an index name unchanged.
 */
function queryOf(options: QueryOptions | undefined): { session?: ClientSession; comment?: unknown; hint?: Document; let?: Document; collation?: CollationOptions } {
  const out: { session?: ClientSession; comment?: unknown; hint?: Document; let?: Document; collation?: CollationOptions } = sessionOf(options);
  if (options?.hint !== undefined) out.hint = options.hint as Document;
  if (options?.let !== undefined) out.let = options.let;
  if (options?.collation !== undefined) out.collation = options.collation as unknown as CollationOptions;
  return out;
}

/** The driver's (internal) eager start of a change stream's cursor: the one its unified test runner uses. */
interface StartableCursor {
  cursorInit?: () => Promise<void>;
}

class MongoChangeStream implements ChangeStream {
  /** Resolves once the server-side stream is open: undefined, or the error opening it failed with. */
  private readonly started: Promise<unknown>;

  constructor(
    private readonly inner: DriverChangeStream,
    gate: StartGate,
  ) {
    const cursor = (inner as unknown as { cursor?: StartableCursor }).cursor;
    this.started = cursor?.cursorInit
      ? cursor.cursorInit().then(
          () => undefined,
          (error: unknown) => error ?? new Error('the change stream failed to open'),
        )
      : Promise.resolve(undefined);
    gate.track(this.started);
  }

  private async open(): Promise<void> {
    const failure = await this.started;
    if (failure) translate(failure);
  }
  get resumeToken(): ResumeToken | undefined {
    return this.inner.resumeToken as ResumeToken | undefined;
  }
  async next(): Promise<ChangeEvent> {
    await this.open();
    return guard(async () => toStoredForm((await this.inner.next()) as unknown as Document) as unknown as ChangeEvent);
  }
  async tryNext(): Promise<ChangeEvent | null> {
    await this.open();
    return guard(async () => typed((await this.inner.tryNext()) as unknown as Document | null) as unknown as ChangeEvent | null);
  }
  async close(): Promise<void> {
    await this.inner.close();
  }
  async *[Symbol.asyncIterator](): AsyncIterator<ChangeEvent> {
    while (!this.inner.closed) yield await this.next();
  }
}

/**
 * Read options that keep every number's BSON type (the driver's default makes a double holding 1 and a
 * long JS numbers); typed() puts the documents in the embedded engine's stored form, so both engines hand
 * the same values up (a Double only for an integral double in int32 range, every Long).
 */
const TYPED = { promoteValues: false, promoteLongs: false } as const;

function typed<T extends Document | null>(doc: T): T {
  return doc === null ? doc : toStoredForm(doc);
}

function typedAll(docs: Document[]): Document[] {
  for (const doc of docs) toStoredForm(doc);
  return docs;
}

class MongoCollection implements CollectionHandle {
  constructor(
    private readonly inner: Collection,
    private readonly gate: StartGate,
  ) {}
  get collectionName(): string {
    return this.inner.collectionName;
  }
  get dbName(): string {
    return this.inner.dbName;
  }

  find(query: Document = {}, projection?: Document, options: FindOptions = {}): FindCursor {
    const state = { sort: options.sort, skip: options.skip, limit: options.limit, projection: projection ?? options.projection };
    return new LazyCursor(
      (s) =>
        this.gate.run(() =>
          this.inner
            .find(query, { ...queryOf(options), ...TYPED, projection: s.projection, sort: s.sort, skip: s.skip, limit: s.limit })
            .toArray()
            .then(typedAll),
        ),
      state,
    );
  }
  async findOne(query: Document = {}, projection?: Document, options: FindOneOptions = {}): Promise<Document | null> {
    return typed(await this.gate.run(() => this.inner.findOne(query, { ...queryOf(options), ...TYPED, projection: projection ?? options.projection, sort: options.sort, skip: options.skip })));
  }
  async findOneAndUpdate(query: Document, update: Document | Document[], options: FindOneAndModifyOptions = {}): Promise<Document | null> {
    return this.gate.run(async () =>
      typed(await this.inner.findOneAndUpdate(query, update, {
        ...queryOf(options),
        ...TYPED,
        upsert: options.upsert,
        sort: options.sort,
        projection: options.projection,
        arrayFilters: options.arrayFilters,
        returnDocument: options.returnNewDocument ? 'after' : 'before',
        includeResultMetadata: false,
      })),
    );
  }
  async findOneAndReplace(query: Document, replacement: Document, options: FindOneAndModifyOptions = {}): Promise<Document | null> {
    return this.gate.run(async () =>
      typed(await this.inner.findOneAndReplace(query, replacement, {
        ...queryOf(options),
        ...TYPED,
        upsert: options.upsert,
        sort: options.sort,
        projection: options.projection,
        returnDocument: options.returnNewDocument ? 'after' : 'before',
        includeResultMetadata: false,
      })),
    );
  }
  async findOneAndDelete(query: Document, options: FindOneAndDeleteOptions = {}): Promise<Document | null> {
    return typed(await this.gate.run(() => this.inner.findOneAndDelete(query, { ...queryOf(options), ...TYPED, sort: options.sort, projection: options.projection, includeResultMetadata: false })));
  }
  async insertOne(document: Document, options?: SessionOption): Promise<InsertOneResult> {
    const r = await this.gate.run(() => this.inner.insertOne(withId(document), { ...sessionOf(options), forceServerObjectId: true }));
    return { insertedId: r.insertedId };
  }
  async insertMany(documents: Document[], options: InsertManyOptions = {}): Promise<InsertManyResult> {
    const r = await this.gate.run(() => this.inner.insertMany(documents.map(withId), { ...sessionOf(options), ordered: options.ordered ?? true, forceServerObjectId: true }));
    const ids = Object.entries(r.insertedIds).sort(([a], [b]) => Number(a) - Number(b)).map(([, id]) => id as unknown);
    return { insertedIds: ids, insertedCount: r.insertedCount };
  }
  private static updateResult(r: { matchedCount: number; modifiedCount: number; upsertedCount: number; upsertedId: unknown }): UpdateResult {
    const out: UpdateResult = { matchedCount: r.matchedCount, modifiedCount: r.modifiedCount, upsertedCount: r.upsertedCount };
    if (r.upsertedCount) out.upsertedId = r.upsertedId;
    return out;
  }
  async updateOne(query: Document, update: Document | Document[], options: UpdateOptions = {}): Promise<UpdateResult> {
    return MongoCollection.updateResult(await this.gate.run(() => this.inner.updateOne(query, update, { ...queryOf(options), upsert: options.upsert, arrayFilters: options.arrayFilters, ...(options.sort ? { sort: options.sort } : {}) })));
  }
  async updateMany(query: Document, update: Document | Document[], options: UpdateOptions = {}): Promise<UpdateResult> {
    return MongoCollection.updateResult(await this.gate.run(() => this.inner.updateMany(query, update, { ...queryOf(options), upsert: options.upsert, arrayFilters: options.arrayFilters })));
  }
  async replaceOne(query: Document, replacement: Document, options: ReplaceOptions = {}): Promise<UpdateResult> {
    return MongoCollection.updateResult(await this.gate.run(() => this.inner.replaceOne(query, replacement, { ...queryOf(options), upsert: options.upsert, ...(options.sort ? { sort: options.sort } : {}) })));
  }
  async deleteOne(query: Document, options?: QueryOptions): Promise<DeleteResult> {
    const r = await this.gate.run(() => this.inner.deleteOne(query, queryOf(options)));
    return { deletedCount: r.deletedCount };
  }
  async deleteMany(query: Document, options?: QueryOptions): Promise<DeleteResult> {
    const r = await this.gate.run(() => this.inner.deleteMany(query, queryOf(options)));
    return { deletedCount: r.deletedCount };
  }
  aggregate(pipeline: Document[], options?: QueryOptions): AggregateCursor {
    return new LazyCursor(
      (s) => this.gate.run(() => this.inner.aggregate(s.skip ? [...pipeline, { $skip: s.skip }] : pipeline, { ...queryOf(options), ...TYPED }).toArray().then(typedAll)),
      {},
      'aggregate',
    );
  }
  async count(query: Document = {}, options: CountOptions = {}): Promise<number> {
    return this.countDocuments(query, options);
  }
  async countDocuments(query: Document = {}, options: CountOptions = {}): Promise<number> {
    return this.gate.run(() => this.inner.countDocuments(query, { ...queryOf(options), skip: options.skip, limit: options.limit }));
  }
  async estimatedDocumentCount(): Promise<number> {
    return this.gate.run(() => this.inner.estimatedDocumentCount());
  }
  async distinct(field: string, query: Document = {}, options?: QueryOptions): Promise<unknown[]> {
    return this.gate.run(() => this.inner.distinct(field, query, queryOf(options)));
  }
  async bulkWrite(operations: BulkWriteOperation[], options: BulkWriteOptions = {}): Promise<BulkWriteResult> {
    const r = await this.gate.run(() => this.inner.bulkWrite(withIds(operations) as AnyBulkWriteOperation[], { ...sessionOf(options), ...(options.let ? { let: options.let } : {}), ordered: options.ordered ?? true, forceServerObjectId: true }));
    return {
      insertedCount: r.insertedCount,
      matchedCount: r.matchedCount,
      modifiedCount: r.modifiedCount,
      deletedCount: r.deletedCount,
      upsertedCount: r.upsertedCount,
      insertedIds: r.insertedIds,
      upsertedIds: r.upsertedIds,
    };
  }
  async createIndex(keys: Record<string, SortDirection>, options: IndexOptions = {}): Promise<string> {
    const { collation, ...rest } = options;
    return this.gate.run(() => this.inner.createIndex(keys, { ...rest, ...(collation ? { collation: collation as unknown as CollationOptions } : {}) }));
  }
  async dropIndex(name: string): Promise<void> {
    await this.gate.run(() => this.inner.dropIndex(name));
  }
  async listIndexes(): Promise<IndexDescription[]> {
    // MongoDB refuses to list the indexes of a missing collection (26); the embedded engine lists none.
    const indexes = await this.gate.run(() => this.inner.listIndexes().toArray()).catch((error: unknown) => {
      if (error instanceof DatastoreError && error.code === 26) return [];
      throw error;
    });
    return (indexes as { name: string; key: Document; unique?: boolean; sparse?: boolean; collation?: Document }[]).map((i) => ({
      name: String(i.name),
      key: i.key as Record<string, SortDirection>,
      ...(i.unique ? { unique: true } : {}),
      ...(i.sparse ? { sparse: true } : {}),
      ...(i.collation ? { collation: i.collation } : {}),
    }));
  }
  async drop(): Promise<boolean> {
    return this.gate.run(() => this.inner.drop());
  }
  watch(pipeline: Document[] = [], options: WatchOptions = {}): ChangeStream {
    return new MongoChangeStream(this.inner.watch(pipeline, { ...options, ...TYPED }), this.gate);
  }
}

class MongoDatabase implements DatabaseHandle {
  constructor(
    private readonly inner: Db,
    private readonly gate: StartGate,
  ) {}
  get databaseName(): string {
    return this.inner.databaseName;
  }
  async getCollectionNames(): Promise<string[]> {
    const list = await this.gate.run(() => this.inner.listCollections({}, { nameOnly: true }).toArray());
    return list.map((c) => c.name);
  }
  collection(name: string): CollectionHandle {
    return new MongoCollection(this.inner.collection(name), this.gate);
  }
  aggregate(pipeline: Document[], options?: QueryOptions): AggregateCursor {
    return new LazyCursor(
      (s) => this.gate.run(() => this.inner.aggregate(s.skip ? [...pipeline, { $skip: s.skip }] : pipeline, { ...queryOf(options), ...TYPED }).toArray().then(typedAll)),
      {},
      'aggregate',
    );
  }
  async createCollection(name: string, options: CreateCollectionOptions = {}): Promise<CollectionHandle> {
    await this.gate.run(() => this.inner.createCollection(name, options.viewOn ? { viewOn: options.viewOn, pipeline: options.pipeline ?? [] } : {}));
    return this.collection(name);
  }
  async dropCollection(name: string): Promise<boolean> {
    try {
      return await this.gate.run(() => this.inner.dropCollection(name));
    } catch (error) {
      if (error instanceof DatastoreError && error.code === 26) return false;
      throw error;
    }
  }
  async dropDatabase(): Promise<void> {
    await this.gate.run(() => this.inner.dropDatabase());
  }
  watch(pipeline: Document[] = [], options: WatchOptions = {}): ChangeStream {
    return new MongoChangeStream(this.inner.watch(pipeline, { ...options, ...TYPED }), this.gate);
  }
}

export class MongoDataSourceClient implements DataSourceClient {
  readonly engine = 'mongodb' as const;
  private readonly client: MongoClient;
  private readonly gate = new StartGate();

  constructor(uri: string, options: MongoClientOptions = {}) {
    // bsonRegExp: stored regexes come back as BSON regexes, as the embedded engine gives them (a RegExp
    // would lose PCRE options such as x and s).
    this.client = new MongoClient(uri, { bsonRegExp: true, ...(options.readPreference ? { readPreference: options.readPreference } : {}), ...(options.appName ? { appName: options.appName } : {}) });
  }

  admin(): AdminHandle {
    return {
      getDBNames: async () => {
        const r = await this.gate.run(() => this.client.db('admin').admin().listDatabases({ nameOnly: true }));
        return r.databases.map((d) => d.name);
      },
    };
  }
  db(name: string): DatabaseHandle {
    return new MongoDatabase(this.client.db(name), this.gate);
  }
  startSession(): DataSession {
    return new MongoSession(this.client.startSession());
  }
  watch(pipeline: Document[] = [], options: WatchOptions = {}): ChangeStream {
    return new MongoChangeStream(this.client.watch(pipeline, { ...options, ...TYPED }), this.gate);
  }
  async close(): Promise<void> {
    await this.client.close();
  }
}
