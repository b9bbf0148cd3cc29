/**
 * The state of one embedded data-source service (one cluster): its databases and collections in memory,
 * made durable by the write-ahead log, with transactions across its collections and the stream of
 * committed records the change feed reads. Every write runs synchronously against memory inside a
 * WriteUnit and is acknowledged once its commit record (one per unit) is fsynced.
 */
import { randomUUID } from 'node:crypto';
import { DatastoreError } from '../api/datastore.error';
import { type IndexOptions, type SortDirection } from '../api/data-source';
import { type Document, idKey, isPlainObject } from '../bson/values';
import { CollectionState, type IndexState, type StoredRecord } from '../engine/collection-state';
import { sameCollation } from '../engine/collation';
import { type UpdatePaths } from '../engine/update-description';
import { DirectoryLock, type DirectoryLockOptions } from './directory-lock';
import { describeError, reportDatastore } from './embedded-reporting';
import { type CommitRecord, type LogOp, LogFiles, type SnapshotCollection } from './log-files';

/** The changes of one statement or transaction, with what it takes to undo them. */
export class WriteUnit {
  readonly ops: LogOp[] = [];
  readonly undo: (() => void)[] = [];
}

/** Whoever holds the service's transaction lock (an open transaction). */
export interface LockOwner {
  readonly id: string;
}

/**
 * A reader at read concern `snapshot`, or a transaction (its snapshot is taken when it starts): it sees
 * every collection as it was right after commit `atSeq`. A transaction sees its own writes once it holds
 * the lock (from its first write on, it reads the live state).
 */
export interface SnapshotReader extends LockOwner {
  atSeq?: number;
}

function isSnapshotReader(owner: LockOwner | undefined): owner is SnapshotReader & { atSeq: number } {
  return owner !== undefined && typeof (owner as SnapshotReader).atSeq === 'number';
}

/** How long commits stay readable at a snapshot: MongoDB's minSnapshotHistoryWindowInSeconds (300 s). */
const SNAPSHOT_HISTORY_MS = 300_000;
/**
 * Beyond the last TRANSACTION_HISTORY_MS, at most this many operations (documents written, with their
 * before-images) are kept for snapshot reads, however many a busy five minutes make: the history is memory
 * (the old versions of updated and deleted documents). Past it the oldest commits go, and a snapshot read from
 * before them is SnapshotTooOld, as a MongoDB server under cache pressure answers one older than the history
 * it could keep.
 */
const SNAPSHOT_HISTORY_OPS = 50_000;
/**
 * The history every open transaction needs, whatever its size: a transaction reads the snapshot it started
 * with and lives at most 60 s (transactionLifetimeLimitSeconds, EmbeddedSession), so it never meets
 * SnapshotTooOld because another client wrote much.
 */
const TRANSACTION_HISTORY_MS = 60_000;

export interface ServiceStoreOptions {
  /** Snapshot and start a new log segment once the active one is this large (bytes). */
  compactBytes?: number;
  /** Sealed log segments kept after a snapshot, as change-feed history. */
  keepSegments?: number;
  /** Heartbeat and staleness of the data directory lock. */
  lock?: DirectoryLockOptions;
}

export interface CommitListener {
  /** A record became durable (called in sequence order). Throwing ends this listener, nothing else. */
  commit(record: CommitRecord): void;
  /** The listener's own commit threw: it is unsubscribed and gets no more records. */
  fail(error: unknown): void;
  /** The store closed: no more records will come. */
  close(): void;
}

export class ServiceStore {
  private readonly dbs = new Map<string, Map<string, CollectionState>>();
  private readonly log: LogFiles;
  private seq = 0;
  /** When the last commit (`seq`) was made, in ms; the opening time until there is one. */
  private seqTime = Date.now();
  /** Highest sequence number known to be on disk. */
  durableSeq = 0;
  private readonly listeners = new Set<CommitListener>();
  private lockOwner?: LockOwner;
  private lockWaiters: (() => void)[] = [];
  /** The open transaction's unit, and what it changed: `db.coll` -> (_id key -> document before it). */
  private txnUnit?: WriteUnit;
  private readonly hidden = new Map<string, Map<string, Document | undefined>>();
  /** The last commits (their before-images), newest last: what snapshot reads undo to see the past. */
  private readonly recent: CommitRecord[] = [];
  /** Operations in `recent`. */
  private recentOps = 0;
  /** Collections (`db.coll`) the open transaction created: no one else sees them until it commits. */
  private readonly txnCreated = new Set<string>();
  private readonly compactBytes: number;
  /** The log grows to at least the size of the last snapshot before the next one (bounds rewriting). */
  private compactAt: number;
  private readonly keepSegments: number;
  private readonly lock: DirectoryLock;
  private closed = false;

  constructor(
    readonly dir: string,
    options: ServiceStoreOptions = {},
  ) {
    this.compactBytes = options.compactBytes ?? 64 * 1024 * 1024;
    this.compactAt = this.compactBytes;
    this.keepSegments = options.keepSegments ?? 2;
    this.log = new LogFiles(dir);
    this.lock = DirectoryLock.acquire(dir, options.lock);
    try {
      this.recover();
      this.log.openForAppend(this.seq + 1);
    } catch (error) {
      // A cluster that cannot be opened (a corrupt log) leaves no lock behind for the next attempt.
      this.lock.release();
      throw error;
    }
    this.log.afterFlush = () => this.maybeCompact();
    this.log.onFailure = (error) => reportDatastore('error', describeError(error));
  }

  /** Why the store refuses writes (its log failed), for the readiness probe; undefined while healthy. */
  problem(): string | undefined {
    const failure = this.log.failure;
    return failure ? describeError(failure) : undefined;
  }

  /** Refuses a write before it touches memory once the log failed (what memory holds is already ahead of disk). */
  private checkWritable(): void {
    if (this.closed) throw new DatastoreError('IllegalOperation', 'the datastore is closed');
    const failure = this.log.failure;
    if (failure) throw new DatastoreError('InternalError', failure.message, { cause: failure.cause });
  }

  /**
   * Hands a durable record to every listener (change streams). A listener that throws (a stream whose
   * pipeline cannot run on the event, say) is closed with its error; the write and the other listeners
   * go on.
   */
  private publish(record: CommitRecord): void {
    for (const listener of this.listeners) {
      try {
        listener.commit(record);
      } catch (error) {
        this.listeners.delete(listener);
        reportDatastore('warn', `a change stream on ${this.dir} failed and was closed: ${describeError(error)}`);
        try {
          listener.fail(error);
        } catch (failError) {
          reportDatastore('warn', `closing a failed change stream on ${this.dir} failed: ${describeError(failError)}`);
        }
      }
    }
  }

  private recover(): void {
    const snapshot = this.log.loadSnapshot();
    if (snapshot) {
      for (const coll of snapshot.collections) {
        const state = new CollectionState(coll.d, coll.c, coll.view as CollectionState['view'], coll.collation);
        state.uuid = coll.uuid;
        state.changeStreamImages = coll.images;
        for (const spec of coll.indexes) {
          const desc = spec as { name: string; key: Record<string, SortDirection>; unique?: boolean; sparse?: boolean; collation?: Document };
          state.indexes.set(desc.name, state.createIndex(desc.name, desc.key, desc.unique ?? false, desc.sparse ?? false, desc.collation));
        }
        state.bulkLoad(coll.docs);
        this.database(coll.d, true).set(coll.c, state);
      }
    }
    const from = snapshot?.seq ?? 0;
    const first = this.log.segments()[0];
    if (first && first.start > from + 1) {
      throw new DatastoreError('InternalError', `the data directory ${this.dir} lacks the log records between ${from} and ${first.start}`);
    }
    this.seq = this.log.replay(from, (record) => this.applyRecord(record));
    this.durableSeq = this.seq;
  }

  private applyRecord(record: CommitRecord): void {
    this.seqTime = record.time;
    for (const op of record.ops) {
      const coll = op.c === undefined ? undefined : this.collection(op.d, op.c);
      switch (op.k) {
        case 'cc':
        {
          const created = new CollectionState(op.d, op.c as string, op.view as CollectionState['view'], isPlainObject(op.collation) ? op.collation : undefined);
          created.uuid = op.uuid;
          applyModify(created, op.options);
          this.database(op.d, true).set(op.c as string, created);
          break;
        }
        case 'dc':
          this.dbs.get(op.d)?.delete(op.c as string);
          break;
        case 'dd':
          this.dbs.delete(op.d);
          break;
        case 'ci': {
          const spec = op.spec as { name: string; key: Record<string, SortDirection>; unique?: boolean; sparse?: boolean; collation?: Document };
          // The spec logged names the index's collation (one inherited from the collection included).
          if (coll) coll.indexes.set(spec.name, coll.createIndex(spec.name, spec.key, spec.unique ?? false, spec.sparse ?? false, spec.collation));
          break;
        }
        case 'di':
          coll?.indexes.delete(op.name as string);
          break;
        case 'cm':
          if (coll) applyModify(coll, op.options);
          break;
        case 'i':
          this.ensure(op.d, op.c as string).insert(op.doc as Document);
          break;
        case 'u':
        case 'r': {
          const rec = coll?.get((op.doc as Document)._id);
          if (rec) coll?.replace(rec, op.doc as Document);
          break;
        }
        case 'd': {
          const rec = coll?.get((op.pre as Document)._id);
          if (rec) coll?.delete(rec);
          break;
        }
        default:
          break;
      }
    }
  }

  private ensure(db: string, name: string): CollectionState {
    let coll = this.collection(db, name);
    if (!coll) {
      coll = new CollectionState(db, name);
      this.database(db, true).set(name, coll);
    }
    return coll;
  }

  private database(name: string, create: true): Map<string, CollectionState>;
  private database(name: string, create?: boolean): Map<string, CollectionState> | undefined;
  private database(name: string, create = false): Map<string, CollectionState> | undefined {
    let db = this.dbs.get(name);
    if (!db && create) {
      db = new Map();
      this.dbs.set(name, db);
    }
    return db;
  }

  /** Databases with a committed collection (what an open transaction created is not listed). */
  databaseNames(): string[] {
    return [...this.dbs.keys()].filter((name) => this.collectionNames(name).length > 0);
  }

  /** A database's committed collections: one an open transaction created is listed once it commits. */
  collectionNames(db: string): string[] {
    const names = [...(this.dbs.get(db)?.keys() ?? [])];
    return this.txnCreated.size === 0 ? names : names.filter((name) => !this.txnCreated.has(`${db}.${name}`));
  }

  /** Whether `owner`'s open transaction created the collection (MongoDB builds indexes in a transaction only on such). */
  createdInTransaction(owner: LockOwner, db: string, name: string): boolean {
    return this.lockOwner === owner && this.txnCreated.has(`${db}.${name}`);
  }

  collection(db: string, name: string): CollectionState | undefined {
    return this.dbs.get(db)?.get(name);
  }

  // ---- what an open transaction hides from other sessions ----

  private remember(unit: WriteUnit, db: string, coll: string, key?: string, before?: Document): void {
    if (unit !== this.txnUnit) return;
    const name = `${db}.${coll}`;
    let changed = this.hidden.get(name);
    if (!changed) {
      changed = new Map();
      this.hidden.set(name, changed);
    }
    if (key !== undefined && !changed.has(key)) changed.set(key, before);
  }

  /**
   * For a reader outside the open transaction, the committed documents of a collection the transaction
   * changed (its before-images in place of its changes); undefined when nothing is hidden from `owner`.
   */
  committedView(owner: LockOwner | undefined, db: string, name: string): Document[] | undefined {
    // A snapshot read, or a transaction that has not written yet: what was committed at its snapshot (when a
    // commit since changed this collection; else the committed state below is the same, and cheaper to read).
    if (isSnapshotReader(owner) && this.lockOwner !== owner && owner.atSeq < this.seq && this.changedSince(db, name, owner.atSeq)) {
      return this.snapshotView(db, name, owner.atSeq);
    }
    if (!this.lockOwner || this.lockOwner === owner) return undefined;
    const changed = this.hidden.get(`${db}.${name}`);
    if (!changed) return undefined;
    const docs: Document[] = [];
    const coll = this.collection(db, name);
    for (const rec of coll?.records.values() ?? []) {
      if (!changed.has(rec.key)) docs.push(rec.doc);
      else {
        const before = changed.get(rec.key);
        if (before) docs.push(before);
      }
    }
    for (const [key, before] of changed) if (before && !coll?.records.has(key)) docs.push(before);
    return docs;
  }

  /** The time of commit `seq` while it is kept for snapshot reads (else undefined). */
  commitTime(seq: number): number | undefined {
    if (seq === this.seq) return this.seqTime;
    return this.recent.find((record) => record.seq === seq)?.time;
  }

  /**
   * Whether a commit after `seq` touched collection `db.name` (or its database's catalog), or the history no
   * longer reaches back to `seq` (so that the snapshot view refuses it): else the collection as committed now
   * is the collection at `seq`.
   */
  private changedSince(db: string, name: string, seq: number): boolean {
    const oldest = this.recent[0];
    if (!oldest || seq < oldest.seq - 1) return true;
    for (let r = this.recent.length - 1; r >= 0 && this.recent[r].seq > seq; r--) {
      for (const op of this.recent[r].ops) if (op.d === db && (op.c === undefined || op.c === name)) return true;
    }
    return false;
  }

  /**
   * A collection's committed documents as they were right after commit `seq`: today's, with every later
   * commit undone from its before-images (kept in memory for five minutes). Older than that, or across a
   * drop or rename of the collection, the snapshot is refused (SnapshotTooOld, SnapshotUnavailable).
   */
  snapshotView(db: string, name: string, seq: number): Document[] {
    const oldest = this.recent[0];
    if (seq < this.seq && (!oldest || seq < oldest.seq - 1)) {
      throw new DatastoreError('SnapshotTooOld', `Read timestamp is older than the oldest available timestamp (commit ${seq}; snapshot reads reach back five minutes)`);
    }
    const { versions, created, dropped } = this.versionsAt(db, name, seq, true);
    if (dropped) {
      throw new DatastoreError('SnapshotUnavailable', `Unable to read from a snapshot due to pending collection catalog changes; please retry the operation. Snapshot timestamp is before the drop of ${db}.${name}`);
    }
    // Created since: it did not exist at the snapshot.
    if (created) return [];
    const now = this.committedView(undefined, db, name) ?? [...(this.collection(db, name)?.records.values() ?? [])].map((rec) => rec.doc);
    const docs = new Map(now.map((doc) => [idKey(doc._id), doc]));
    for (const [key, version] of versions) {
      if (version) docs.set(key, version);
      else docs.delete(key);
    }
    return [...docs.values()];
  }

  /**
   * What the commits after `seq` did to collection `db.coll`: the documents they changed, each as it was at
   * `seq` (undefined: absent then), and whether one created the collection or dropped it or its database.
   * Walked newest first, so a document changed twice keeps its oldest before-image. `withMoves`: the
   * documents a rename moved count as changed.
   */
  private versionsAt(db: string, coll: string, seq: number, withMoves: boolean): { versions: Map<string, Document | undefined>; created: boolean; dropped: boolean } {
    const versions = new Map<string, Document | undefined>();
    let created = false;
    let dropped = false;
    for (let r = this.recent.length - 1; r >= 0 && this.recent[r].seq > seq; r--) {
      const ops = this.recent[r].ops;
      for (let i = ops.length - 1; i >= 0; i--) {
        const op = ops[i];
        if (op.d !== db || (op.c !== undefined && op.c !== coll) || (op.m && !withMoves)) continue;
        switch (op.k) {
          case 'i':
            versions.set(idKey((op.doc as Document)._id), undefined);
            break;
          case 'u':
          case 'r':
          case 'd':
            versions.set(idKey((op.pre as Document)._id), op.pre);
            break;
          case 'cc':
            created = true;
            break;
          case 'dc':
          case 'dd':
            dropped = true;
            break;
          case 'ci':
          case 'di':
          case 'cm':
            // Indexes and options change no document.
            break;
        }
      }
    }
    return { versions, created, dropped };
  }

  private hides(db: string, name: string): boolean {
    return this.hidden.has(`${db}.${name}`);
  }

  // ---- writes (synchronous, inside a unit) ----

  /** The collection, created (and logged) on first write as MongoDB does. */
  collectionForWrite(unit: WriteUnit, db: string, name: string): CollectionState {
    const existing = this.collection(db, name);
    if (existing) {
      if (existing.view) throw new DatastoreError('CommandNotSupportedOnView', `Namespace ${db}.${name} is a view, not a collection`);
      return existing;
    }
    return this.createCollection(unit, db, name);
  }

  createCollection(unit: WriteUnit, db: string, name: string, view?: CollectionState['view'], collation?: Document): CollectionState {
    if (this.collection(db, name)) throw new DatastoreError('NamespaceExists', `Collection ${db}.${name} already exists.`);
    this.remember(unit, db, name);
    if (unit === this.txnUnit) this.txnCreated.add(`${db}.${name}`);
    const coll = new CollectionState(db, name, view, collation);
    coll.uuid = randomUUID();
    this.database(db, true).set(name, coll);
    unit.ops.push({ k: 'cc', d: db, c: name, uuid: coll.uuid, ...(view ? { view: view as unknown as Document } : {}), ...(collation ? { collation } : {}) });
    unit.undo.push(() => this.dbs.get(db)?.delete(name));
    return coll;
  }

  dropCollection(unit: WriteUnit, db: string, name: string): boolean {
    const coll = this.collection(db, name);
    if (!coll) return false;
    this.remember(unit, db, name);
    this.dbs.get(db)?.delete(name);
    unit.ops.push({ k: 'dc', d: db, c: name });
    unit.undo.push(() => this.database(db, true).set(name, coll));
    return true;
  }

  /**
   * Renames a collection, within its database or to another one, as existing log operations in this unit:
   * the target dropped (`dropTarget`), created with the source's collation, its indexes built, the documents
   * inserted, the source dropped. The moved operations are marked (`m`): the change feed reports them as one
   * `rename` event on the source (the drop names `to`), not as inserts. A restart replays them like any
   * other record. Checks are the caller's (names valid, source a collection, target free unless dropped).
   */
  renameCollection(unit: WriteUnit, from: { db: string; coll: string }, to: { db: string; coll: string }, dropTarget: boolean): CollectionState {
    const source = this.collection(from.db, from.coll);
    if (!source || source.view) throw new DatastoreError('NamespaceNotFound', `Source collection ${from.db}.${from.coll} does not exist`);
    const existing = this.collection(to.db, to.coll);
    if (existing) {
      if (!dropTarget) throw new DatastoreError('NamespaceExists', 'target namespace exists');
      this.dropCollection(unit, to.db, to.coll);
    }
    const first = unit.ops.length;
    const target = this.createCollection(unit, to.db, to.coll, undefined, source.collation);
    // The collection keeps its UUID and its change stream settings under the new name, as in MongoDB.
    target.uuid = source.uuid;
    unit.ops[first].uuid = source.uuid;
    if (source.changeStreamImages !== undefined) this.modifyCollection(unit, target, { changeStreamPreAndPostImages: { enabled: source.changeStreamImages } });
    for (const index of source.indexes.values()) {
      if (index.name === '_id_') continue;
      // An index made binary on a collection with a collation stays binary.
      const collation = index.collation ?? (source.collation ? { locale: 'simple' } : undefined);
      this.createIndex(unit, target, index.spec, { name: index.name, unique: index.unique, sparse: index.sparse, ...(collation ? { collation } : {}) });
    }
    for (const rec of source.records.values()) this.insert(unit, target, rec.doc);
    for (let i = first; i < unit.ops.length; i++) unit.ops[i].m = true;
    this.dropCollection(unit, from.db, from.coll);
    const drop = unit.ops[unit.ops.length - 1];
    drop.to = { db: to.db, coll: to.coll };
    if (existing?.uuid) drop.dropTarget = existing.uuid;
    return target;
  }

  dropDatabase(unit: WriteUnit, db: string): void {
    const colls = this.dbs.get(db);
    if (!colls) return;
    for (const name of colls.keys()) this.remember(unit, db, name);
    this.dbs.delete(db);
    unit.ops.push({ k: 'dd', d: db });
    unit.undo.push(() => this.dbs.set(db, colls));
  }

  createIndex(unit: WriteUnit, coll: CollectionState, key: Record<string, SortDirection>, options: IndexOptions = {}): string {
    const name = options.name ?? Object.entries(key).map(([f, d]) => `${f}_${d}`).join('_');
    // An index naming no collation gets the collection's; `{locale: 'simple'}` makes it binary.
    const collation = options.collation ?? coll.collation;
    const existing = coll.indexes.get(name);
    if (existing) {
      if (JSON.stringify(existing.spec) !== JSON.stringify(key) || existing.unique !== Boolean(options.unique) || !sameCollation(existing.collation, collation)) {
        throw new DatastoreError('IndexNotFound', `An existing index has the same name as the requested index: ${name}`);
      }
      return name;
    }
    this.remember(unit, coll.dbName, coll.name);
    const index: IndexState = coll.createIndex(name, key, Boolean(options.unique), Boolean(options.sparse), collation);
    coll.indexes.set(name, index);
    unit.ops.push({ k: 'ci', d: coll.dbName, c: coll.name, spec: index.describe() as unknown as Document });
    unit.undo.push(() => coll.indexes.delete(name));
    return name;
  }

  /**
   * A collMod, logged even when it changes nothing the engine keeps (MongoDB's change streams report it as
   * a `modify` event): `changeStreamPreAndPostImages` is the one option it records.
   */
  modifyCollection(unit: WriteUnit, coll: CollectionState, options: Document): void {
    const before = coll.changeStreamImages;
    applyModify(coll, options);
    unit.ops.push({ k: 'cm', d: coll.dbName, c: coll.name, options });
    unit.undo.push(() => {
      coll.changeStreamImages = before;
    });
  }

  dropIndex(unit: WriteUnit, coll: CollectionState, name: string): void {
    const index = coll.indexes.get(name);
    if (!index || name === '_id_') throw new DatastoreError('IndexNotFound', `index not found with name [${name}]`);
    coll.indexes.delete(name);
    unit.ops.push({ k: 'di', d: coll.dbName, c: coll.name, name });
    unit.undo.push(() => coll.indexes.set(name, index));
  }

  insert(unit: WriteUnit, coll: CollectionState, doc: Document): StoredRecord {
    const key = idKey(doc._id);
    coll.checkUnique(doc, undefined, key);
    this.remember(unit, coll.dbName, coll.name, key, undefined);
    const rec = coll.insert(doc, key);
    unit.ops.push({ k: 'i', d: coll.dbName, c: coll.name, doc });
    unit.undo.push(() => coll.delete(rec));
    return rec;
  }

  /** `up`: the paths of an operator update, for its change event (see LogOp). */
  replace(unit: WriteUnit, coll: CollectionState, rec: StoredRecord, doc: Document, kind: 'u' | 'r', up?: UpdatePaths): void {
    coll.checkUnique(doc, rec);
    this.remember(unit, coll.dbName, coll.name, rec.key, rec.doc);
    const pre = rec.doc;
    coll.replace(rec, doc);
    unit.ops.push(up ? { k: kind, d: coll.dbName, c: coll.name, doc, pre, up } : { k: kind, d: coll.dbName, c: coll.name, doc, pre });
    unit.undo.push(() => coll.replace(rec, pre));
  }

  delete(unit: WriteUnit, coll: CollectionState, rec: StoredRecord): void {
    this.remember(unit, coll.dbName, coll.name, rec.key, rec.doc);
    coll.delete(rec);
    unit.ops.push({ k: 'd', d: coll.dbName, c: coll.name, pre: rec.doc });
    unit.undo.push(() => coll.restore(rec));
  }

  rollback(unit: WriteUnit): void {
    for (let i = unit.undo.length - 1; i >= 0; i--) unit.undo[i]();
    unit.undo.length = 0;
    unit.ops.length = 0;
  }

  // ---- commit, durability, locking ----

  /** Writes one commit record for the unit; resolves once it is on disk. */
  async commit(unit: WriteUnit): Promise<void> {
    if (unit.ops.length === 0) return;
    try {
      this.checkWritable();
    } catch (error) {
      // A transaction that ran while the log failed: its changes must not stay in memory either.
      this.rollback(unit);
      throw error;
    }
    const record: CommitRecord = { seq: this.seq + 1, time: Date.now(), ops: unit.ops.slice() };
    let durable: Promise<void>;
    try {
      // Encoded into the write queue synchronously, in sequence order, with the change to memory.
      durable = this.log.append(record, () => {
        this.durableSeq = record.seq;
        this.publish(record);
      });
    } catch (error) {
      // Nothing was logged: take the changes back out of memory too.
      this.rollback(unit);
      throw new DatastoreError('BadValue', 'document to write is larger than the maximum BSON size (16 MB)', { cause: error, code: 10334 });
    }
    this.seq = record.seq;
    this.seqTime = record.time;
    this.recent.push(record);
    this.recentOps += record.ops.length;
    let drop = 0;
    for (let ops = this.recentOps; drop < this.recent.length - 1; drop++) {
      const first = this.recent[drop];
      if (first.time >= record.time - SNAPSHOT_HISTORY_MS && (ops <= SNAPSHOT_HISTORY_OPS || first.time >= record.time - TRANSACTION_HISTORY_MS)) break;
      ops -= first.ops.length;
    }
    if (drop > 0) {
      for (const gone of this.recent.splice(0, drop)) this.recentOps -= gone.ops.length;
    }
    await durable;
  }

  /**
   * Runs a write. Outside a transaction it commits on its own (what ran before a failure stays, as in
   * MongoDB); it waits only while an open transaction has changed the same collection (`scope`; without
   * one, for any open transaction). Inside a transaction it joins the transaction's unit, and a failure
   * aborts the transaction.
   */
  async write<T>(owner: TransactionOwner | undefined, fn: (unit: WriteUnit) => T, scope?: { db: string; coll: string }, conflicts?: ConflictProbe): Promise<T> {
    this.checkWritable();
    if (owner?.unit) {
      this.checkConflict(owner, scope, conflicts);
      await this.acquire(owner);
      this.checkSnapshotConflict(owner, scope, conflicts);
      const unit = owner.unit;
      this.txnUnit = unit;
      try {
        return fn(unit);
      } catch (error) {
        this.rollback(unit);
        owner.unit = undefined;
        owner.aborted = true;
        owner.atSeq = undefined;
        this.release(owner);
        throw error;
      }
    }
    while (this.lockOwner && this.lockOwner !== owner && (!scope || this.hides(scope.db, scope.coll))) {
      await new Promise<void>((resolve) => this.lockWaiters.push(resolve));
    }
    this.checkWritable();
    const unit = new WriteUnit();
    let result: T;
    try {
      result = fn(unit);
    } catch (error) {
      await this.commit(unit);
      throw error;
    }
    await this.commit(unit);
    return result;
  }

  /**
   * A wire client's transactional write (TransactionOwner.failOnConflict) meeting a document another open
   * transaction changed fails at once with WriteConflict, and aborts its transaction, as MongoDB's does (the driver retries the whole
   * transaction: TransientTransactionError). A write that touches none of them waits for the other
   * transaction instead, as the engine writes one transaction at a time.
   */
  private checkConflict(owner: TransactionOwner, scope: { db: string; coll: string } | undefined, conflicts: ConflictProbe | undefined): void {
    if (!owner.failOnConflict || !conflicts || !scope || !this.lockOwner || this.lockOwner === owner) return;
    const changed = this.hidden.get(`${scope.db}.${scope.coll}`);
    if (!changed || !conflicts(changed)) return;
    this.failWithWriteConflict(owner);
  }

  /**
   * A wire client's transactional write meeting a document committed after the transaction's snapshot
   * (`atSeq`) fails with WriteConflict and aborts the transaction, as MongoDB's snapshot isolation does: the
   * write would otherwise change a version the transaction never read. The documents are those the recent
   * commits (kept for snapshot reads) wrote in the write's collection, each as it was at the snapshot.
   */
  private checkSnapshotConflict(owner: TransactionOwner, scope: { db: string; coll: string } | undefined, conflicts: ConflictProbe | undefined): void {
    if (!owner.failOnConflict || !conflicts || !scope || owner.atSeq === undefined || owner.atSeq >= this.seq) return;
    // The documents as the transaction's snapshot had them (a rename's moves are not writes of the collection).
    const atSnapshot = this.versionsAt(scope.db, scope.coll, owner.atSeq, false).versions;
    if (atSnapshot.size > 0 && conflicts(atSnapshot)) this.failWithWriteConflict(owner);
  }

  private failWithWriteConflict(owner: TransactionOwner): never {
    if (owner.unit) this.rollback(owner.unit);
    owner.unit = undefined;
    owner.aborted = true;
    owner.atSeq = undefined;
    this.release(owner);
    const error = new DatastoreError('WriteConflict', 'Write conflict during plan execution and yielding is disabled. :: Please retry your operation or multi-document transaction.');
    error.errorResponse = { errorLabels: ['TransientTransactionError'] };
    throw error;
  }

  async acquire(owner: LockOwner): Promise<void> {
    while (this.lockOwner && this.lockOwner !== owner) await new Promise<void>((resolve) => this.lockWaiters.push(resolve));
    this.lockOwner = owner;
  }

  release(owner: LockOwner): void {
    if (this.lockOwner !== owner) return;
    this.lockOwner = undefined;
    this.txnUnit = undefined;
    this.hidden.clear();
    this.txnCreated.clear();
    const waiters = this.lockWaiters.splice(0);
    for (const wake of waiters) wake();
  }

  /**
   * The last commit: its sequence number and time. Change events carry the same pair as their
   * clusterTime, so a reply's operationTime and the events compare as MongoDB's do.
   */
  lastCommit(): { seq: number; time: number } {
    return { seq: this.seq, time: this.seqTime };
  }

  subscribe(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Committed records after `afterSeq`, up to what is on disk now, read from the log. */
  history(afterSeq: number): Iterable<CommitRecord> {
    const first = this.log.firstRetainedSeq();
    if (first > 1 && afterSeq + 1 < first) {
      throw new DatastoreError('ChangeStreamHistoryLost', 'Resume of change stream was not possible, as the resume point may no longer be in the oplog.');
    }
    return this.log.history(afterSeq, this.durableSeq);
  }

  private maybeCompact(): void {
    if (this.log.activeSize < this.compactAt || this.lockOwner) return;
    try {
      this.compact();
    } catch (error) {
      // Not after every flush from now on: once the log has grown by another compaction's worth.
      this.compactAt = this.log.activeSize + this.compactBytes;
      throw error;
    }
  }

  /**
   * Snapshot of the state now, then a fresh log segment. Runs synchronously: queued records are written
   * first so the snapshot and the log agree, and no write can start meanwhile. Not while a transaction
   * holds uncommitted changes in memory.
   */
  private compact(): void {
    this.log.flushNow();
    const collections: SnapshotCollection[] = [];
    for (const [d, colls] of this.dbs) {
      for (const [c, state] of colls) {
        collections.push({
          d,
          c,
          view: state.view as unknown as Document | undefined,
          ...(state.collation ? { collation: state.collation } : {}),
          ...(state.uuid ? { uuid: state.uuid } : {}),
          ...(state.changeStreamImages === undefined ? {} : { images: state.changeStreamImages }),
          indexes: [...state.indexes.values()].filter((i) => i.name !== '_id_').map((i) => i.describe() as unknown as Document),
          docs: [...state.records.values()].map((r) => r.doc),
        });
      }
    }
    const size = this.log.writeSnapshot(this.seq, collections, this.keepSegments);
    this.compactAt = Math.max(this.compactBytes, size);
  }

  /** Forces a snapshot now (tests and tools); waits for an open transaction to finish first. */
  async snapshot(): Promise<void> {
    const owner: LockOwner = { id: 'snapshot' };
    await this.acquire(owner);
    try {
      // Only while no flush is in flight: checked and compacted in the same synchronous step.
      while (!this.log.idle) await this.log.drain();
      this.compact();
    } finally {
      this.release(owner);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.log.close();
    for (const listener of [...this.listeners]) listener.close();
    this.listeners.clear();
    this.lock.release();
  }
}

/** Applies what a logged collMod recorded to the collection. */
function applyModify(coll: CollectionState, options: Document | undefined): void {
  const images = options?.changeStreamPreAndPostImages;
  if (isPlainObject(images) && typeof images.enabled === 'boolean') coll.changeStreamImages = images.enabled;
}

/**
 * Whether a write would touch one of the documents another open transaction changed, given those
 * documents (`_id` key -> the committed document, undefined for one it inserted).
 */
export type ConflictProbe = (changed: ReadonlyMap<string, Document | undefined>) => boolean;

/** A session's transaction state, as the store sees it. */
export interface TransactionOwner extends SnapshotReader {
  unit?: WriteUnit;
  aborted?: boolean;
  /**
   * A write meeting a document another open transaction changed fails at once with WriteConflict (a wire
   * client's transaction, as MongoDB answers a driver); otherwise it waits for that transaction to end, as
   * every write waits while the engine runs one transaction at a time (the engine's own callers: sync, data
   * access, functions), which spares them running the transaction again.
   */
  readonly failOnConflict?: boolean;
}
