/**
 * OpenTelemetry spans around the data-access API, for both engines: a client request's trace reaches the
 * datastore. Only `@opentelemetry/api` is used (the process registers an SDK or none). A span is opened only
 * inside a recording span (a request, a message, a trigger): background work (change feeds, bootstrap)
 * makes no root traces, and with tracing off an operation pays one context lookup.
 * The wrapper does not change results or errors; it must stay a thin pass-through.
 */
import { context, type Attributes, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  type AdminHandle,
  type AggregateOptions,
  type BulkWriteOperation,
  type BulkWriteOptions,
  type ChangeStream,
  type CollectionHandle,
  type CountOptions,
  type CreateCollectionOptions,
  type DataCursor,
  type DataSession,
  type DataSourceClient,
  type DatabaseHandle,
  type DeleteOptions,
  type DistinctOptions,
  type Document,
  type FindCursor,
  type FindOneAndDeleteOptions,
  type FindOneAndModifyOptions,
  type FindOneOptions,
  type FindOptions,
  type IndexOptions,
  type InsertManyOptions,
  type ReplaceOptions,
  type SessionOption,
  type SortDirection,
  type SortSpec,
  type UpdateOptions,
  type WatchOptions,
} from '../api/data-source';

interface Target {
  engine: 'embedded' | 'mongodb';
  cluster: string;
  db: string;
  collection?: string;
}

/** The active span when it records; datastore spans are only ever its children. */
function recordingParent(): boolean {
  return trace.getSpan(context.active())?.isRecording() === true;
}

function startSpan(target: Target, operation: string): Span {
  const attributes: Attributes = {
    'db.system': 'mongodb',
    'db.system.name': 'mongodb',
    'db.name': target.db,
    'db.namespace': target.db,
    'db.operation': operation,
    'db.operation.name': operation,
    'tessera.datastore.engine': target.engine,
    'tessera.datastore.cluster': target.cluster,
  };
  if (target.collection !== undefined) {
    attributes['db.collection.name'] = target.collection;
    attributes['db.mongodb.collection'] = target.collection;
  }
  // Looked up per span (only when tracing is on): a provider registered later, or again, is always the one used.
  return trace.getTracer('@tessera/datastore').startSpan(target.collection !== undefined ? `${operation} ${target.db}.${target.collection}` : `${operation} ${target.db}`, { kind: SpanKind.CLIENT, attributes });
}

function fail(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  if (error && typeof error === 'object' && 'codeName' in error && typeof error.codeName === 'string') span.setAttribute('db.response.status_code', error.codeName);
}

/** Runs `operation` in a span when a recording span is active; otherwise calls it straight. */
function traced<T>(target: Target, operation: string, run: () => Promise<T>): Promise<T> {
  if (!recordingParent()) return run();
  const span = startSpan(target, operation);
  let pending: Promise<T>;
  try {
    pending = run();
  } catch (error) {
    fail(span, error);
    span.end();
    throw error;
  }
  return pending.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      fail(span, error);
      span.end();
      throw error;
    },
  );
}

/**
 * A cursor whose query gets a span when its documents are first fetched (the query runs then, not at
 * `find()`): `toArray()` or the first `next()`. Later `next()` calls are in-memory or batched and not traced.
 */
class TracedCursor implements FindCursor {
  private fetched = false;

  constructor(
    private readonly inner: FindCursor,
    private readonly target: Target,
    private readonly operation: string,
  ) {}

  skip(n: number): this {
    this.inner.skip(n);
    return this;
  }

  limit(n: number): this {
    this.inner.limit(n);
    return this;
  }

  sort(spec: SortSpec): this {
    this.inner.sort(spec);
    return this;
  }

  project(projection: Document): this {
    this.inner.project(projection);
    return this;
  }

  next(): Promise<Document | null> {
    if (this.fetched) return this.inner.next();
    this.fetched = true;
    return traced(this.target, this.operation, () => this.inner.next());
  }

  toArray(): Promise<Document[]> {
    if (this.fetched) return this.inner.toArray();
    this.fetched = true;
    return traced(this.target, this.operation, () => this.inner.toArray());
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Document> {
    for (;;) {
      const document = await this.next();
      if (document === null) return;
      yield document;
    }
  }
}

/** An aggregate cursor has no limit/sort/project; the traced cursor only forwards what is called. */
function tracedAggregateCursor(inner: DataCursor, target: Target): DataCursor {
  return new TracedCursor(inner as FindCursor, target, 'aggregate');
}

class TracedCollection implements CollectionHandle {
  private readonly target: Target;

  constructor(
    private readonly inner: CollectionHandle,
    engine: Target['engine'],
    cluster: string,
  ) {
    this.target = { engine, cluster, db: inner.dbName, collection: inner.collectionName };
  }

  get collectionName(): string {
    return this.inner.collectionName;
  }

  get dbName(): string {
    return this.inner.dbName;
  }

  find(query?: Document, projection?: Document, options?: FindOptions): FindCursor {
    return new TracedCursor(this.inner.find(query, projection, options), this.target, 'find');
  }

  findOne(query?: Document, projection?: Document, options?: FindOneOptions) {
    return traced(this.target, 'findOne', () => this.inner.findOne(query, projection, options));
  }

  findOneAndUpdate(query: Document, update: Document | Document[], options?: FindOneAndModifyOptions) {
    return traced(this.target, 'findOneAndUpdate', () => this.inner.findOneAndUpdate(query, update, options));
  }

  findOneAndReplace(query: Document, replacement: Document, options?: FindOneAndModifyOptions) {
    return traced(this.target, 'findOneAndReplace', () => this.inner.findOneAndReplace(query, replacement, options));
  }

  findOneAndDelete(query: Document, options?: FindOneAndDeleteOptions) {
    return traced(this.target, 'findOneAndDelete', () => this.inner.findOneAndDelete(query, options));
  }

  insertOne(document: Document, options?: SessionOption) {
    return traced(this.target, 'insertOne', () => this.inner.insertOne(document, options));
  }

  insertMany(documents: Document[], options?: InsertManyOptions) {
    return traced(this.target, 'insertMany', () => this.inner.insertMany(documents, options));
  }

  updateOne(query: Document, update: Document | Document[], options?: UpdateOptions) {
    return traced(this.target, 'updateOne', () => this.inner.updateOne(query, update, options));
  }

  updateMany(query: Document, update: Document | Document[], options?: UpdateOptions) {
    return traced(this.target, 'updateMany', () => this.inner.updateMany(query, update, options));
  }

  replaceOne(query: Document, replacement: Document, options?: ReplaceOptions) {
    return traced(this.target, 'replaceOne', () => this.inner.replaceOne(query, replacement, options));
  }

  deleteOne(query: Document, options?: DeleteOptions) {
    return traced(this.target, 'deleteOne', () => this.inner.deleteOne(query, options));
  }

  deleteMany(query: Document, options?: DeleteOptions) {
    return traced(this.target, 'deleteMany', () => this.inner.deleteMany(query, options));
  }

  aggregate(pipeline: Document[], options?: AggregateOptions) {
    return tracedAggregateCursor(this.inner.aggregate(pipeline, options), this.target);
  }

  count(query?: Document, options?: CountOptions) {
    return traced(this.target, 'count', () => this.inner.count(query, options));
  }

  countDocuments(query?: Document, options?: CountOptions) {
    return traced(this.target, 'countDocuments', () => this.inner.countDocuments(query, options));
  }

  estimatedDocumentCount(options?: SessionOption) {
    return traced(this.target, 'estimatedDocumentCount', () => this.inner.estimatedDocumentCount(options));
  }

  distinct(field: string, query?: Document, options?: DistinctOptions) {
    return traced(this.target, 'distinct', () => this.inner.distinct(field, query, options));
  }

  bulkWrite(operations: BulkWriteOperation[], options?: BulkWriteOptions) {
    return traced(this.target, 'bulkWrite', () => this.inner.bulkWrite(operations, options));
  }

  createIndex(keys: Record<string, SortDirection>, options?: IndexOptions) {
    return traced(this.target, 'createIndexes', () => this.inner.createIndex(keys, options));
  }

  dropIndex(name: string) {
    return traced(this.target, 'dropIndexes', () => this.inner.dropIndex(name));
  }

  listIndexes() {
    return traced(this.target, 'listIndexes', () => this.inner.listIndexes());
  }

  drop() {
    return traced(this.target, 'drop', () => this.inner.drop());
  }

  watch(pipeline?: Document[], options?: WatchOptions): ChangeStream {
    return this.inner.watch(pipeline, options);
  }
}

class TracedDatabase implements DatabaseHandle {
  private readonly target: Target;

  constructor(
    private readonly inner: DatabaseHandle,
    private readonly engine: Target['engine'],
    private readonly cluster: string,
  ) {
    this.target = { engine, cluster, db: inner.databaseName };
  }

  get databaseName(): string {
    return this.inner.databaseName;
  }

  getCollectionNames() {
    return traced(this.target, 'listCollections', () => this.inner.getCollectionNames());
  }

  collection(name: string): CollectionHandle {
    return new TracedCollection(this.inner.collection(name), this.engine, this.cluster);
  }

  async createCollection(name: string, options?: CreateCollectionOptions): Promise<CollectionHandle> {
    const created = await traced({ ...this.target, collection: name }, 'create', () => this.inner.createCollection(name, options));
    return new TracedCollection(created, this.engine, this.cluster);
  }

  dropCollection(name: string) {
    return traced({ ...this.target, collection: name }, 'drop', () => this.inner.dropCollection(name));
  }

  dropDatabase() {
    return traced(this.target, 'dropDatabase', () => this.inner.dropDatabase());
  }

  aggregate(pipeline: Document[], options?: AggregateOptions) {
    return tracedAggregateCursor(this.inner.aggregate(pipeline, options), this.target);
  }

  watch(pipeline?: Document[], options?: WatchOptions): ChangeStream {
    return this.inner.watch(pipeline, options);
  }
}

class TracedDataSourceClient implements DataSourceClient {
  constructor(
    private readonly inner: DataSourceClient,
    private readonly cluster: string,
  ) {}

  get engine(): DataSourceClient['engine'] {
    return this.inner.engine;
  }

  admin(): AdminHandle {
    const admin = this.inner.admin();
    const target: Target = { engine: this.inner.engine, cluster: this.cluster, db: 'admin' };
    return { getDBNames: () => traced(target, 'listDatabases', () => admin.getDBNames()) };
  }

  db(name: string): DatabaseHandle {
    return new TracedDatabase(this.inner.db(name), this.inner.engine, this.cluster);
  }

  startSession(): DataSession {
    return this.inner.startSession();
  }

  watch(pipeline?: Document[], options?: WatchOptions): ChangeStream {
    return this.inner.watch(pipeline, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * The client with a CLIENT span per operation (`db.system`, `db.namespace`/`db.name`,
 * `db.collection.name`/`db.mongodb.collection`, `db.operation.name`, errors recorded), opened only under a
 * recording span. Sessions and change streams pass through: their operations are traced where they run.
 */
export function traceDataSource(client: DataSourceClient, cluster: string): DataSourceClient {
  return client instanceof TracedDataSourceClient ? client : new TracedDataSourceClient(client, cluster);
}
