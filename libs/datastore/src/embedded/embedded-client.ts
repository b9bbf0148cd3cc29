/**
 * The DataSourceClient of the embedded engine, and the registry that shares one ServiceStore per data
 * directory inside a process (functions, rules, GraphQL and sync all see the same state and change feed).
 */
import { resolve } from 'node:path';
import { LazyCursor } from '../api/cursor';
import { DatastoreError } from '../api/datastore.error';
import {
  type AdminHandle,
  type ChangeStream,
  type CollectionHandle,
  type CreateCollectionOptions,
  type DataSession,
  type DataSourceClient,
  type DatabaseHandle,
  type AggregateCursor,
  type AggregateOptions,
  type Document,
  type WatchOptions,
} from '../api/data-source';
import { normalizeStored } from '../bson/values';
import { compileCollation, sameCollation } from '../engine/collation';
import { EmbeddedChangeStream } from './change-stream';
import { EmbeddedCollection } from './embedded-collection';
import { EmbeddedSession } from './embedded-session';
import { describeError, reportDatastore } from './embedded-reporting';
import { ServiceStore, type ServiceStoreOptions } from './service-store';

function checkName(kind: 'database' | 'collection', name: string): void {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\0') || (kind === 'database' && /[/\\. "$]/.test(name)) || (kind === 'collection' && name.startsWith('$'))) {
    throw new DatastoreError('BadValue', `Invalid ${kind} name: '${String(name)}'`, { clientError: true });
  }
}

class EmbeddedDatabase implements DatabaseHandle {
  constructor(
    private readonly store: ServiceStore,
    readonly databaseName: string,
  ) {}

  async getCollectionNames(): Promise<string[]> {
    return this.store.collectionNames(this.databaseName);
  }

  collection(name: string): CollectionHandle {
    checkName('collection', name);
    return new EmbeddedCollection(this.store, this.databaseName, name);
  }

  async createCollection(name: string, options: CreateCollectionOptions = {}): Promise<CollectionHandle> {
    checkName('collection', name);
    const view = options.viewOn ? { viewOn: options.viewOn, pipeline: normalizeStored(options.pipeline ?? []) as Document[] } : undefined;
    const collation = options.collation !== undefined && compileCollation(options.collation) ? options.collation : undefined;
    // A view on a view has its collation (MongoDB refuses another one).
    const source = view ? this.store.collection(this.databaseName, view.viewOn) : undefined;
    if (source?.view && !sameCollation(source.collation, collation)) {
      throw new DatastoreError('OptionNotSupportedOnView', `View ${this.databaseName}.${name} has a different collation than the view ${this.databaseName}.${view?.viewOn} it is defined on`, { clientError: true });
    }
    await this.store.write(undefined, (unit) => this.store.createCollection(unit, this.databaseName, name, view, collation));
    return this.collection(name);
  }

  async dropCollection(name: string): Promise<boolean> {
    return this.store.write(undefined, (unit) => this.store.dropCollection(unit, this.databaseName, name));
  }

  async dropDatabase(): Promise<void> {
    await this.store.write(undefined, (unit) => this.store.dropDatabase(unit, this.databaseName));
  }

  aggregate(pipeline: Document[], options: AggregateOptions = {}): AggregateCursor {
    const refusal = databasePipelineRefusal(pipeline);
    // Refused when read, as every aggregation's errors are.
    if (refusal) return new LazyCursor(() => Promise.reject(refusal), {}, 'aggregate');
    // The pipeline reads no collection: it runs over an empty source named as MongoDB names its cursor.
    return new EmbeddedCollection(this.store, this.databaseName, '$cmd.aggregate').aggregate(pipeline, options);
  }

  watch(pipeline: Document[] = [], options: WatchOptions = {}): ChangeStream {
    return new EmbeddedChangeStream(this.store, { db: this.databaseName }, pipeline, options);
  }
}

/**
 * Stages reporting on the server itself (its operations, sessions, settings): MongoDB runs them at
 * database level, and App Services never let an app see them.
 */
const SERVER_STAGES = new Set(['$currentOp', '$listLocalSessions', '$listSessions', '$querySettings', '$listSampledQueries', '$shardedDataDistribution']);

/** A database-level pipeline must start with a stage that reads no collection, as in MongoDB. */
function databasePipelineRefusal(pipeline: unknown): DatastoreError | undefined {
  if (!Array.isArray(pipeline)) return new DatastoreError('TypeMismatch', "aggregate requires a 'pipeline' array", { clientError: true });
  const first = pipeline[0] as Document | undefined;
  const stage = first && typeof first === 'object' ? Object.keys(first)[0] : undefined;
  if (stage === '$documents') return undefined;
  if (stage && SERVER_STAGES.has(stage)) return new DatastoreError('CommandNotSupported', `${stage} is not supported by the Tessera datastore: it reports on the server, not on an app's data`);
  return new DatastoreError('InvalidNamespace', `{aggregate: 1} is not valid for '${stage ?? 'an empty pipeline'}'; a collection is required.`);
}

export class EmbeddedClient implements DataSourceClient {
  readonly engine = 'embedded' as const;
  private closed = false;

  constructor(
    readonly store: ServiceStore,
    private readonly onClose: () => Promise<void>,
  ) {}

  admin(): AdminHandle {
    return { getDBNames: async () => this.store.databaseNames() };
  }

  db(name: string): DatabaseHandle {
    checkName('database', name);
    return new EmbeddedDatabase(this.store, name);
  }

  startSession(): DataSession {
    return new EmbeddedSession(this.store);
  }

  /** A wire client's session: its transactions meet others' writes as MongoDB's do (TransactionOwner.failOnConflict). */
  startWireSession(): DataSession {
    return new EmbeddedSession(this.store, undefined, true);
  }

  watch(pipeline: Document[] = [], options: WatchOptions = {}): ChangeStream {
    return new EmbeddedChangeStream(this.store, {}, pipeline, options);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.onClose();
  }
}

const open = new Map<string, { store: ServiceStore; refs: number }>();
/** Directories whose store could not be opened, with the reason last reported. */
const refused = new Map<string, string>();

/** A client over the embedded store in `dir`, shared with every other client of that directory in this process. */
export function openEmbeddedClient(dir: string, options?: ServiceStoreOptions): EmbeddedClient {
  const key = resolve(dir);
  let entry = open.get(key);
  if (!entry) {
    let store: ServiceStore;
    try {
      store = new ServiceStore(key, options);
    } catch (error) {
      // Refused (a corrupt log, a live lock): said once in the log, not once per request that asks again.
      const message = describeError(error);
      if (refused.get(key) !== message) reportDatastore('error', `the embedded datastore ${key} was not opened: ${message}`);
      refused.set(key, message);
      throw error;
    }
    refused.delete(key);
    entry = { store, refs: 0 };
    open.set(key, entry);
  }
  entry.refs++;
  const held = entry;
  return new EmbeddedClient(held.store, async () => {
    held.refs--;
    if (held.refs === 0) {
      open.delete(key);
      await held.store.close();
    }
  });
}

/** One line per embedded store of this process that refuses writes (its log failed), naming the cause. */
export function embeddedStoreProblems(): string[] {
  const problems: string[] = [];
  for (const { store } of open.values()) {
    const problem = store.problem();
    if (problem) problems.push(problem);
  }
  return problems;
}
