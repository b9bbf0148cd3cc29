/**
 * The DataSourceClient over a real MongoDB deployment: a thin layer on the official driver that maps the
 * data-access API's call shapes (query, projection, options; returnNewDocument; sessions) to the driver's
 * and the driver's errors to DatastoreError. Change streams are MongoDB's own.
 */
import {
  type ChangeStream as DriverChangeStream,
  type ClientSession,
  type Collection,
  type Db,
  MongoClient,
  MongoError,
  MongoServerError,
  type ReadPreferenceMode,
} from 'mongodb';
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

function translate(error: unknown): never {
  if (error instanceof DatastoreError) throw error;
  if (error instanceof MongoError) {
    const code = typeof error.code === 'number' ? error.code : undefined;
    const out = new DatastoreError(codeNameOf(code), error.message, { cause: error, code, clientError: !(error instanceof MongoServerError) });
    const details = error as MongoError & { writeErrors?: unknown; result?: unknown };
    if (Array.isArray(details.writeErrors)) out.writeErrors = (details.writeErrors as { index: number; code: number; errmsg?: string }[]).map((e) => ({ index: e.index, code: e.code, errmsg: e.errmsg ?? '' }));
    if (details.result !== undefined) out.result = details.result;
    throw out;
  }
  throw error;
}

async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    translate(error);
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

function sessionOf(options: SessionOption | undefined): { session?: ClientSession } {
  const session = options?.session;
  return session instanceof MongoSession ? { session: session.inner } : {};
}

class MongoChangeStream implements ChangeStream {
  constructor(private readonly inner: DriverChangeStream) {}
  get resumeToken(): ResumeToken | undefined {
    return this.inner.resumeToken as ResumeToken | undefined;
  }
  async next(): Promise<ChangeEvent> {
    return guard(async () => (await this.inner.next()) as unknown as ChangeEvent);
  }
  async tryNext(): Promise<ChangeEvent | null> {
    return guard(async () => (await this.inner.tryNext()) as unknown as ChangeEvent | null);
  }
  async close(): Promise<void> {
    await this.inner.close();
  }
  async *[Symbol.asyncIterator](): AsyncIterator<ChangeEvent> {
    while (!this.inner.closed) yield await this.next();
  }
}

class MongoCollection implements CollectionHandle {
  constructor(private readonly inner: Collection) {}
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
        guard(() =>
          this.inner
            .find(query, { ...sessionOf(options), projection: s.projection, sort: s.sort, skip: s.skip, limit: s.limit })
            .toArray(),
        ),
      state,
    );
  }
  async findOne(query: Document = {}, projection?: Document, options: FindOneOptions = {}): Promise<Document | null> {
    return guard(() => this.inner.findOne(query, { ...sessionOf(options), projection: projection ?? options.projection, sort: options.sort, skip: options.skip }));
  }
  async findOneAndUpdate(query: Document, update: Document | Document[], options: FindOneAndModifyOptions = {}): Promise<Document | null> {
    return guard(() =>
      this.inner.findOneAndUpdate(query, update, {
        ...sessionOf(options),
        upsert: options.upsert,
        sort: options.sort,
        projection: options.projection,
        arrayFilters: options.arrayFilters,
        returnDocument: options.returnNewDocument ? 'after' : 'before',
        includeResultMetadata: false,
      }),
    );
  }
  async findOneAndReplace(query: Document, replacement: Document, options: FindOneAndModifyOptions = {}): Promise<Document | null> {
    return guard(() =>
      this.inner.findOneAndReplace(query, replacement, {
        ...sessionOf(options),
        upsert: options.upsert,
        sort: options.sort,
        projection: options.projection,
        returnDocument: options.returnNewDocument ? 'after' : 'before',
        includeResultMetadata: false,
      }),
    );
  }
  async findOneAndDelete(query: Document, options: FindOneAndDeleteOptions = {}): Promise<Document | null> {
    return guard(() => this.inner.findOneAndDelete(query, { ...sessionOf(options), sort: options.sort, projection: options.projection, includeResultMetadata: false }));
  }
  async insertOne(document: Document, options?: SessionOption): Promise<InsertOneResult> {
    const r = await guard(() => this.inner.insertOne({ ...document }, sessionOf(options)));
    return { insertedId: r.insertedId };
  }
  async insertMany(documents: Document[], options: InsertManyOptions = {}): Promise<InsertManyResult> {
    const r = await guard(() => this.inner.insertMany(documents.map((d) => ({ ...d })), { ...sessionOf(options), ordered: options.ordered ?? true }));
    const ids = Object.entries(r.insertedIds).sort(([a], [b]) => Number(a) - Number(b)).map(([, id]) => id as unknown);
    return { insertedIds: ids, insertedCount: r.insertedCount };
  }
  private static updateResult(r: { matchedCount: number; modifiedCount: number; upsertedCount: number; upsertedId: unknown }): UpdateResult {
    const out: UpdateResult = { matchedCount: r.matchedCount, modifiedCount: r.modifiedCount, upsertedCount: r.upsertedCount };
    if (r.upsertedCount) out.upsertedId = r.upsertedId;
    return out;
  }
  async updateOne(query: Document, update: Document | Document[], options: UpdateOptions = {}): Promise<UpdateResult> {
    return MongoCollection.updateResult(await guard(() => this.inner.updateOne(query, update, { ...sessionOf(options), upsert: options.upsert, arrayFilters: options.arrayFilters })));
  }
  async updateMany(query: Document, update: Document | Document[], options: UpdateOptions = {}): Promise<UpdateResult> {
    return MongoCollection.updateResult(await guard(() => this.inner.updateMany(query, update, { ...sessionOf(options), upsert: options.upsert, arrayFilters: options.arrayFilters })));
  }
  async replaceOne(query: Document, replacement: Document, options: ReplaceOptions = {}): Promise<UpdateResult> {
    return MongoCollection.updateResult(await guard(() => this.inner.replaceOne(query, replacement, { ...sessionOf(options), upsert: options.upsert })));
  }
  async deleteOne(query: Document, options?: SessionOption): Promise<DeleteResult> {
    const r = await guard(() => this.inner.deleteOne(query, sessionOf(options)));
    return { deletedCount: r.deletedCount };
  }
  async deleteMany(query: Document, options?: SessionOption): Promise<DeleteResult> {
    const r = await guard(() => this.inner.deleteMany(query, sessionOf(options)));
    return { deletedCount: r.deletedCount };
  }
  aggregate(pipeline: Document[], options?: SessionOption): AggregateCursor {
    return new LazyCursor(
      (s) => guard(() => this.inner.aggregate(s.skip ? [...pipeline, { $skip: s.skip }] : pipeline, sessionOf(options)).toArray()),
      {},
      'aggregate',
    );
  }
  async count(query: Document = {}, options: CountOptions = {}): Promise<number> {
    return this.countDocuments(query, options);
  }
  async countDocuments(query: Document = {}, options: CountOptions = {}): Promise<number> {
    return guard(() => this.inner.countDocuments(query, { ...sessionOf(options), skip: options.skip, limit: options.limit }));
  }
  async estimatedDocumentCount(): Promise<number> {
    return guard(() => this.inner.estimatedDocumentCount());
  }
  async distinct(field: string, query: Document = {}, options?: SessionOption): Promise<unknown[]> {
    return guard(() => this.inner.distinct(field, query, sessionOf(options)));
  }
  async bulkWrite(operations: BulkWriteOperation[], options: BulkWriteOptions = {}): Promise<BulkWriteResult> {
    const r = await guard(() => this.inner.bulkWrite(operations, { ...sessionOf(options), ordered: options.ordered ?? true }));
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
    return guard(() => this.inner.createIndex(keys, options));
  }
  async dropIndex(name: string): Promise<void> {
    await guard(() => this.inner.dropIndex(name));
  }
  async listIndexes(): Promise<IndexDescription[]> {
    const indexes = await guard(() => this.inner.listIndexes().toArray());
    return (indexes as { name: string; key: Document; unique?: boolean; sparse?: boolean }[]).map((i) => ({ name: String(i.name), key: i.key as Record<string, SortDirection>, ...(i.unique ? { unique: true } : {}), ...(i.sparse ? { sparse: true } : {}) }));
  }
  async drop(): Promise<boolean> {
    return guard(() => this.inner.drop());
  }
  watch(pipeline: Document[] = [], options: WatchOptions = {}): ChangeStream {
    return new MongoChangeStream(this.inner.watch(pipeline, options));
  }
}

class MongoDatabase implements DatabaseHandle {
  constructor(private readonly inner: Db) {}
  get databaseName(): string {
    return this.inner.databaseName;
  }
  async getCollectionNames(): Promise<string[]> {
    const list = await guard(() => this.inner.listCollections({}, { nameOnly: true }).toArray());
    return list.map((c) => c.name);
  }
  collection(name: string): CollectionHandle {
    return new MongoCollection(this.inner.collection(name));
  }
  async createCollection(name: string, options: CreateCollectionOptions = {}): Promise<CollectionHandle> {
    await guard(() => this.inner.createCollection(name, options.viewOn ? { viewOn: options.viewOn, pipeline: options.pipeline ?? [] } : {}));
    return this.collection(name);
  }
  async dropCollection(name: string): Promise<boolean> {
    try {
      return await this.inner.dropCollection(name);
    } catch (error) {
      if (error instanceof MongoServerError && error.code === 26) return false;
      translate(error);
    }
  }
  async dropDatabase(): Promise<void> {
    await guard(() => this.inner.dropDatabase());
  }
  watch(pipeline: Document[] = [], options: WatchOptions = {}): ChangeStream {
    return new MongoChangeStream(this.inner.watch(pipeline, options));
  }
}

export class MongoDataSourceClient implements DataSourceClient {
  readonly engine = 'mongodb' as const;
  private readonly client: MongoClient;

  constructor(uri: string, options: MongoClientOptions = {}) {
    this.client = new MongoClient(uri, { ...(options.readPreference ? { readPreference: options.readPreference } : {}), ...(options.appName ? { appName: options.appName } : {}) });
  }

  admin(): AdminHandle {
    return {
      getDBNames: async () => {
        const r = await guard(() => this.client.db('admin').admin().listDatabases({ nameOnly: true }));
        return r.databases.map((d) => d.name);
      },
    };
  }
  db(name: string): DatabaseHandle {
    return new MongoDatabase(this.client.db(name));
  }
  startSession(): DataSession {
    return new MongoSession(this.client.startSession());
  }
  watch(pipeline: Document[] = [], options: WatchOptions = {}): ChangeStream {
    return new MongoChangeStream(this.client.watch(pipeline, options));
  }
  async close(): Promise<void> {
    await this.client.close();
  }
}
