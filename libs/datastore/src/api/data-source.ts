/**
 * The data-access API (spec 4.4) that functions, rules, GraphQL, triggers and sync call. Both engines
 * (embedded and MongoDB) implement it; callers never learn which one serves them except through `engine`.
 * Documents are BSON-typed JS values from the `bson` package.
 */
import { type Timestamp, type UUID } from 'bson';
import { type Document } from '../bson/values';

export type { Document };

export type SortDirection = 1 | -1;
export type SortSpec = Record<string, SortDirection>;

export interface SessionOption {
  /** Runs the operation inside this session (and its transaction, if one is open). */
  session?: DataSession;
  /** Any value, attached to the operation for profiling and logs (MongoDB's `comment`); changes nothing. */
  comment?: unknown;
}

/** An index, by name or by key pattern; naming no index of the collection is MongoDB's BadValue. */
export type Hint = string | Record<string, SortDirection>;

/** What every query-shaped operation may add: an index hint and `let` variables (`$$name`). */
export interface QueryOptions extends SessionOption {
  hint?: Hint;
  let?: Document;
  /**
   * MongoDB's collation (`{locale, strength, caseLevel, caseFirst, numericOrdering, alternate, maxVariable}`):
   * strings in the filter, sort and distinct compared by the locale's rules; absent or `{locale: 'simple'}`: binary.
   */
  collation?: Document;
}

export interface FindOptions extends QueryOptions {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
  projection?: Document;
  /**
   * For trusted internal callers only (the rules read path): the embedded store hands out its stored
   * documents (or projections sharing their values) instead of copies. They are read-only: the caller
   * copies whatever it returns or keeps. Other stores ignore it (their documents are fresh anyway).
   */
  raw?: boolean;
}

export interface FindOneOptions extends QueryOptions {
  sort?: SortSpec;
  skip?: number;
  projection?: Document;
}

export interface FindOneAndModifyOptions extends QueryOptions {
  upsert?: boolean;
  /** Return the document after the change (default false: as it was before). */
  returnNewDocument?: boolean;
  sort?: SortSpec;
  projection?: Document;
  arrayFilters?: Document[];
}

export interface FindOneAndDeleteOptions extends QueryOptions {
  sort?: SortSpec;
  projection?: Document;
}

export interface UpdateOptions extends QueryOptions {
  upsert?: boolean;
  arrayFilters?: Document[];
  /**
   * updateOne only: which matching document to change, the first in this order (MongoDB 8.0 accepts it;
   * Tessera does too, on both engines, and ignores nothing silently: updateMany refuses it).
   */
  sort?: SortSpec;
}

export interface ReplaceOptions extends QueryOptions {
  upsert?: boolean;
  /** Which matching document to replace: the first in this order (as MongoDB 8.0). */
  sort?: SortSpec;
}

export interface InsertManyOptions extends SessionOption {
  /** Stop at the first failure (default true); false carries on and reports every failure. */
  ordered?: boolean;
}

export interface CountOptions extends QueryOptions {
  skip?: number;
  limit?: number;
}

/**
 * `$out` and `$merge` write at this level; the rules layer (libs/data-access) refuses them, and every stage
 * reading another collection, to callers other than system functions, as App Services did.
 */
export type AggregateOptions = QueryOptions;
export type DeleteOptions = QueryOptions;
export type DistinctOptions = QueryOptions;

export interface BulkWriteOptions extends SessionOption {
  ordered?: boolean;
  /** `let` variables for every operation of the batch. */
  let?: Document;
}

export interface IndexOptions {
  name?: string;
  unique?: boolean;
  /** Leave documents without the field out of the index (and out of its uniqueness). */
  sparse?: boolean;
  /**
   * The index's collation: it orders (and, unique, deduplicates) strings by it, and only queries with the
   * same collation use it for strings. Absent: the collection's default; `{locale: 'simple'}`: binary.
   */
  collation?: Document;
}

export interface CreateCollectionOptions {
  /** Makes a read-only view over another collection of the same database. */
  viewOn?: string;
  pipeline?: Document[];
  /** The collection's default collation (not on a view): every operation naming none uses it. */
  collation?: Document;
}

export interface InsertOneResult {
  insertedId: unknown;
}

export interface InsertManyResult {
  insertedIds: unknown[];
  insertedCount: number;
}

export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  upsertedCount: number;
  upsertedId?: unknown;
}

export interface DeleteResult {
  deletedCount: number;
}

export interface BulkWriteResult {
  insertedCount: number;
  matchedCount: number;
  modifiedCount: number;
  deletedCount: number;
  upsertedCount: number;
  /** Operation index -> inserted _id. */
  insertedIds: Record<number, unknown>;
  /** Operation index -> upserted _id. */
  upsertedIds: Record<number, unknown>;
}

export type BulkWriteOperation =
  | { insertOne: { document: Document } }
  | { updateOne: { filter: Document; update: Document | Document[]; upsert?: boolean; arrayFilters?: Document[]; hint?: Hint; sort?: SortSpec; collation?: Document } }
  | { updateMany: { filter: Document; update: Document | Document[]; upsert?: boolean; arrayFilters?: Document[]; hint?: Hint; collation?: Document } }
  | { replaceOne: { filter: Document; replacement: Document; upsert?: boolean; hint?: Hint; sort?: SortSpec; collation?: Document } }
  | { deleteOne: { filter: Document; hint?: Hint; collation?: Document } }
  | { deleteMany: { filter: Document; hint?: Hint; collation?: Document } };

export interface IndexDescription {
  name: string;
  key: Record<string, SortDirection>;
  unique?: boolean;
  sparse?: boolean;
  collation?: Document;
}

/** A read cursor. skip, limit and sort may only be called before the first document was retrieved. */
export interface DataCursor<T = Document> extends AsyncIterable<T> {
  next(): Promise<T | null>;
  toArray(): Promise<T[]>;
  skip(n: number): this;
  close(): Promise<void>;
}

export interface FindCursor<T = Document> extends DataCursor<T> {
  limit(n: number): this;
  sort(spec: SortSpec): this;
  project(projection: Document): this;
}

export type AggregateCursor<T = Document> = DataCursor<T>;

export interface ResumeToken {
  _data: string;
}

/**
 * `invalidate` ends a collection's stream at its drop or rename, a database's at its drop, as in MongoDB.
 * The catalog's changes (`create`, `createIndexes`, `dropIndexes`, `modify`) come only with showExpandedEvents.
 */
export type ChangeOperationType = 'insert' | 'update' | 'replace' | 'delete' | 'drop' | 'rename' | 'dropDatabase' | 'invalidate' | 'create' | 'createIndexes' | 'dropIndexes' | 'modify';

export interface ChangeEvent {
  _id: ResumeToken;
  operationType: ChangeOperationType;
  /** Commit time of the write. */
  wallTime: Date;
  /** Commit time as a BSON Timestamp (seconds, ordinal), as MongoDB reports it. */
  clusterTime?: Timestamp;
  ns: { db: string; coll?: string };
  /** Where a renamed collection went (`rename` events). */
  to?: { db: string; coll: string };
  /** The collection's UUID (with showExpandedEvents). */
  collectionUUID?: UUID;
  /** What a catalog change did (with showExpandedEvents): the index created, the rename's target... */
  operationDescription?: Document;
  documentKey?: { _id: unknown };
  fullDocument?: Document | null;
  fullDocumentBeforeChange?: Document | null;
  /** `disambiguatedPaths` comes with showExpandedEvents. */
  updateDescription?: { updatedFields: Document; removedFields: string[]; truncatedArrays: unknown[]; disambiguatedPaths?: Document };
}

export interface WatchOptions {
  /** Resume after this event: no event up to it is delivered again, none after it is missed. */
  resumeAfter?: ResumeToken;
  startAfter?: ResumeToken;
  /** `updateLookup`, `whenAvailable` or `required` add the document after an update. */
  fullDocument?: 'default' | 'updateLookup' | 'whenAvailable' | 'required';
  /** `whenAvailable` or `required` add the document before an update, replace or delete. */
  fullDocumentBeforeChange?: 'off' | 'whenAvailable' | 'required';
  /** Also report changes of the catalog (create, createIndexes, dropIndexes, modify) and collection UUIDs. */
  showExpandedEvents?: boolean;
}

export interface ChangeStream extends AsyncIterable<ChangeEvent> {
  /** Waits for the next event. */
  next(): Promise<ChangeEvent>;
  /** The next event if one is ready, else null. */
  tryNext(): Promise<ChangeEvent | null>;
  /** Token of the last event returned (resume from it after a restart). */
  readonly resumeToken: ResumeToken | undefined;
  close(): Promise<void>;
}

export interface CollectionHandle {
  readonly collectionName: string;
  readonly dbName: string;
  find(query?: Document, projection?: Document, options?: FindOptions): FindCursor;
  findOne(query?: Document, projection?: Document, options?: FindOneOptions): Promise<Document | null>;
  findOneAndUpdate(query: Document, update: Document | Document[], options?: FindOneAndModifyOptions): Promise<Document | null>;
  findOneAndReplace(query: Document, replacement: Document, options?: FindOneAndModifyOptions): Promise<Document | null>;
  findOneAndDelete(query: Document, options?: FindOneAndDeleteOptions): Promise<Document | null>;
  insertOne(document: Document, options?: SessionOption): Promise<InsertOneResult>;
  insertMany(documents: Document[], options?: InsertManyOptions): Promise<InsertManyResult>;
  updateOne(query: Document, update: Document | Document[], options?: UpdateOptions): Promise<UpdateResult>;
  updateMany(query: Document, update: Document | Document[], options?: UpdateOptions): Promise<UpdateResult>;
  replaceOne(query: Document, replacement: Document, options?: ReplaceOptions): Promise<UpdateResult>;
  deleteOne(query: Document, options?: DeleteOptions): Promise<DeleteResult>;
  deleteMany(query: Document, options?: DeleteOptions): Promise<DeleteResult>;
  aggregate(pipeline: Document[], options?: AggregateOptions): AggregateCursor;
  /** Number of matching documents (App Services' `count`). */
  count(query?: Document, options?: CountOptions): Promise<number>;
  countDocuments(query?: Document, options?: CountOptions): Promise<number>;
  estimatedDocumentCount(options?: SessionOption): Promise<number>;
  distinct(field: string, query?: Document, options?: DistinctOptions): Promise<unknown[]>;
  bulkWrite(operations: BulkWriteOperation[], options?: BulkWriteOptions): Promise<BulkWriteResult>;
  createIndex(keys: Record<string, SortDirection>, options?: IndexOptions): Promise<string>;
  dropIndex(name: string): Promise<void>;
  listIndexes(): Promise<IndexDescription[]>;
  drop(): Promise<boolean>;
  watch(pipeline?: Document[], options?: WatchOptions): ChangeStream;
}

export interface DatabaseHandle {
  readonly databaseName: string;
  getCollectionNames(): Promise<string[]>;
  collection(name: string): CollectionHandle;
  createCollection(name: string, options?: CreateCollectionOptions): Promise<CollectionHandle>;
  dropCollection(name: string): Promise<boolean>;
  dropDatabase(): Promise<void>;
  /**
   * A database-level aggregation (MongoDB's `aggregate: 1`): the pipeline starts with `$documents` and
   * reads no collection (it may still `$lookup` or `$unionWith` one, and end with `$out` or `$merge`).
   */
  aggregate(pipeline: Document[], options?: AggregateOptions): AggregateCursor;
  watch(pipeline?: Document[], options?: WatchOptions): ChangeStream;
}

export interface AdminHandle {
  getDBNames(): Promise<string[]>;
}

/** A session; a transaction is atomic across the collections of one data-source service. */
export interface DataSession {
  readonly id: string;
  inTransaction(): boolean;
  startTransaction(): void;
  commitTransaction(): Promise<void>;
  abortTransaction(): Promise<void>;
  /** Runs `fn` in a transaction, commits it, or aborts it and rethrows when `fn` throws. */
  withTransaction<T>(fn: (session: DataSession) => Promise<T>): Promise<T>;
  endSession(): Promise<void>;
}

export interface DataSourceClient {
  readonly engine: 'embedded' | 'mongodb';
  admin(): AdminHandle;
  db(name: string): DatabaseHandle;
  startSession(): DataSession;
  /** Changes of every database of the service. */
  watch(pipeline?: Document[], options?: WatchOptions): ChangeStream;
  close(): Promise<void>;
}
