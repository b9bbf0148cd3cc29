/**
 * The database commands the wire server answers, each mapped onto the embedded engine's data-access API
 * (no second query engine): handshake and topology, catalog (databases, collections, indexes), CRUD with
 * server-side cursors, sessions and transactions, and change streams. Replies follow MongoDB's shapes:
 * write failures as `writeErrors`, command failures as `{ok: 0, errmsg, code, codeName}`.
 */
import { readFileSync } from 'node:fs';
import { Long, ObjectId, Timestamp } from 'bson';
import {
  type BulkWriteOperation,
  type BulkWriteResult,
  type DataSession,
  type Hint,
  type QueryOptions,
  type Document,
  type SortSpec,
  type WatchOptions,
} from '../api/data-source';
import { DatastoreError, type WriteErrorDetail, writeErrorDetail } from '../api/datastore.error';
import { isPlainObject } from '../bson/values';
import { commitTimestamp, EmbeddedChangeStream, encodeToken } from '../embedded/change-stream';
import { type EmbeddedClient } from '../embedded/embedded-client';
import { type TransactionOwner } from '../embedded/service-store';
import { compileFilter } from '../engine/mingo';
import { checkSort, select, type SelectStats } from '../engine/query';
import { compileCollation, isSimpleCollation } from '../engine/collation';
import { ChangeStreamCursor, type CursorRegistry, DocumentCursor, newCursorId, type ServerCursor } from './cursors';
import { WireCommandError } from './errors';
import { type WireMetrics } from './metrics';
import { MAX_BSON_SIZE, MAX_MESSAGE_SIZE } from './protocol';
import { sessionKey, type SessionRegistry, SnapshotRead } from './sessions';
import { collectionStats, databaseStats, statsScale } from './stats';
import { type WireTraffic } from './wire-listener';

export { WireCommandError };

export interface WireConnection {
  readonly id: number;
  /** `host:port` the client reached this server at (reported as `me` and the replica set's host). */
  readonly me: string;
  cluster?: string;
}

/** What a command sees of the wire server (the server implements it; commands never import the server). */
export interface CommandServer {
  readonly cursors: CursorRegistry;
  readonly sessions: SessionRegistry;
  readonly replicaSetName: string;
  readonly defaultCluster: string;
  /** Commands counted (serverStatus's opcounters, top). */
  readonly metrics: WireMetrics;
  /** Bytes, requests and connections the listener carried. */
  traffic(): WireTraffic;
  clientFor(cluster: string): EmbeddedClient;
  clusterOf(handshake: Document): string;
}

export interface CommandContext {
  server: CommandServer;
  connection: WireConnection;
  db: string;
  command: Document;
}

interface Invocation extends CommandContext {
  name: string;
  client: EmbeddedClient;
  session?: DataSession;
  sessionKey?: string;
}

/** The server's version as far as drivers are concerned: MongoDB 7.0 (wire version 21). */
const serverVersion = '7.0.0';
const maxWireVersion = 21;
const defaultFirstBatch = 101;
const electionId = new ObjectId('7fffffff0000000000000001');

type Handler = (call: Invocation) => Promise<Document> | Document;

function fail(code: number, codeName: string, message: string): never {
  throw new WireCommandError(code, codeName, message);
}

function collectionName(call: Invocation): string {
  const name = call.command[call.name];
  if (typeof name !== 'string' || name.length === 0) fail(73, 'InvalidNamespace', `collection name must be a non-empty string for ${call.name}`);
  return name;
}

function collection(call: Invocation) {
  return call.client.db(call.db).collection(collectionName(call));
}

function documentField(command: Document, field: string): Document | undefined {
  const value = command[field];
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) fail(14, 'TypeMismatch', `'${field}' must be a document`);
  return value;
}

function numberField(command: Document, field: string): number | undefined {
  const value = command[field];
  if (value === undefined || value === null) return undefined;
  const n = value instanceof Long ? value.toNumber() : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) fail(14, 'TypeMismatch', `'${field}' must be a number`);
  return n;
}

/** A cursor's `batchSize`: absent, or a number of at least 0 (refused as MongoDB refuses it otherwise). */
function batchSizeField(options: Document): number | undefined {
  const n = numberField(options, 'batchSize');
  if (n !== undefined && n < 0) fail(51024, 'Location51024', `BSON field 'batchSize' value must be >= 0, actual value '${n}'`);
  return n;
}

/** Largest `maxTimeMS` MongoDB accepts; beyond it Node's timers would also fire at once instead of late. */
const maxTimeMSLimit = 2 ** 31 - 1;

/** Any command's `maxTimeMS`: absent, or an integer from 0 to 2^31-1 (BadValue otherwise, as MongoDB answers). */
function checkMaxTimeMS(command: Document): void {
  const n = numberField(command, 'maxTimeMS');
  if (n === undefined) return;
  if (n < 0) fail(2, 'BadValue', `BSON field 'maxTimeMS' value must be >= 0, actual value '${Math.floor(n)}'`);
  if (!Number.isInteger(n)) fail(2, 'BadValue', 'maxTimeMS has non-integral value');
  if (n > maxTimeMSLimit) fail(2, 'BadValue', `BSON field 'maxTimeMS' value must be <= ${maxTimeMSLimit}, actual value '${n}'`);
}

/**
 * A `collation`, validated as MongoDB validates it (see engine/collation.ts). The simple one is kept: it
 * overrides a collection's default collation.
 */
function checkCollation(value: unknown): Document {
  compileCollation(value);
  return value as Document;
}

/** Options the embedded engine cannot honour are refused rather than silently ignored. */
function refuse(command: Document, fields: string[]): void {
  for (const field of fields) {
    if (command[field] === undefined) continue;
    fail(115, 'CommandNotSupported', `'${field}' is not supported by the Tessera datastore`);
  }
}

function sessionOption(call: Invocation): { session?: DataSession } {
  return call.session ? { session: call.session } : {};
}

function hintField(source: Document): Hint | undefined {
  const hint = source.hint;
  if (hint === undefined) return undefined;
  if (typeof hint === 'string' || isPlainObject(hint)) return hint as Hint;
  fail(9, 'FailedToParse', 'hint must be a string or an object');
}

/** The session plus what a query-shaped command may carry: `hint` (from `source`), `let` and `comment`. */
function queryOption(call: Invocation, source: Document = call.command): QueryOptions {
  const out: QueryOptions = sessionOption(call);
  const hint = hintField(source);
  if (hint !== undefined) out.hint = hint;
  if (call.command.let !== undefined) out.let = documentField(call.command, 'let');
  if (call.command.comment !== undefined) out.comment = call.command.comment;
  const collation = source.collation === undefined ? undefined : checkCollation(source.collation);
  if (collation) out.collation = collation;
  return out;
}

// ---- handshake and server information ----

function hello(call: Invocation): Document {
  const { connection, server } = call;
  if (call.name === 'hello' || call.name === 'isMaster' || call.name === 'ismaster') {
    // The handshake names the cluster this connection serves (see WireServer.clusterOf).
    connection.cluster ??= server.clusterOf(call.command);
  }
  const legacy = call.name !== 'hello';
  return {
    helloOk: true,
    ...(legacy ? { ismaster: true } : { isWritablePrimary: true }),
    secondary: false,
    setName: server.replicaSetName,
    setVersion: 1,
    electionId,
    hosts: [connection.me],
    primary: connection.me,
    me: connection.me,
    maxBsonObjectSize: MAX_BSON_SIZE,
    maxMessageSizeBytes: MAX_MESSAGE_SIZE,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: connection.id,
    minWireVersion: 0,
    maxWireVersion,
    readOnly: false,
    ok: 1,
  };
}

function buildInfo(): Document {
  return { version: serverVersion, versionArray: [7, 0, 0, 0], gitVersion: 'tessera-datastore', modules: [], bits: 64, maxBsonObjectSize: MAX_BSON_SIZE, storageEngines: ['tessera-embedded'], ok: 1 };
}

function getParameter(call: Invocation): Document {
  // mongorestore asks before restoring MongoDB's users and roles (admin.system.users/roles), which the
  // datastore does not have: refused with what to do, rather than answered with nothing it understands.
  if (call.command.authSchemaVersion !== undefined) {
    fail(72, 'InvalidOptions', "the Tessera datastore keeps no MongoDB users or roles (authSchemaVersion): leave them out of the restore (mongorestore --nsExclude 'admin.system.*')");
  }
  return call.command.featureCompatibilityVersion ? { featureCompatibilityVersion: { version: '7.0' }, ok: 1 } : { ok: 1 };
}

// ---- server statistics (mongostat, mongotop) ----

/** The process's virtual memory size in bytes (Linux); the resident size where it cannot be read. */
function virtualBytes(fallback: number): number {
  try {
    const match = /^VmSize:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: the resident size stands in.
  }
  return fallback;
}

const mebibyte = 1024 * 1024;

/** Connections the server would accept beyond those open (MongoDB reports what its limit leaves). */
const connectionLimit = 1_000_000;

/**
 * `serverStatus` with the sections mongostat reads: the process, operation counters, connections, network,
 * memory (from the Node process), the storage engine, and this member of the replica set. There is no
 * `wiredTiger` section (mongostat then leaves out its cache columns) and no `locks` (no lock statistics).
 */
function serverStatus(call: Invocation): Document {
  const { metrics } = call.server;
  const traffic = call.server.traffic();
  const now = Date.now();
  const uptimeMillis = now - metrics.started;
  const memory = process.memoryUsage();
  const zeroCounters = { insert: Long.ZERO, query: Long.ZERO, update: Long.ZERO, delete: Long.ZERO, getmore: Long.ZERO, command: Long.ZERO };
  return {
    host: call.connection.me,
    version: serverVersion,
    process: 'mongod',
    pid: Long.fromNumber(process.pid),
    uptime: Math.floor(uptimeMillis / 1000),
    uptimeMillis: Long.fromNumber(uptimeMillis),
    uptimeEstimate: Long.fromNumber(Math.floor(uptimeMillis / 1000)),
    localTime: new Date(now),
    asserts: { regular: 0, warning: 0, msg: 0, user: 0, tripwire: 0, rollovers: 0 },
    connections: { current: traffic.currentConnections, available: Math.max(0, connectionLimit - traffic.currentConnections), totalCreated: traffic.totalConnections, active: traffic.currentConnections },
    globalLock: { totalTime: Long.fromNumber(uptimeMillis * 1000), currentQueue: { total: 0, readers: 0, writers: 0 }, activeClients: { total: 0, readers: 0, writers: 0 } },
    network: {
      bytesIn: Long.fromNumber(traffic.bytesIn),
      bytesOut: Long.fromNumber(traffic.bytesOut),
      physicalBytesIn: Long.fromNumber(traffic.bytesIn),
      physicalBytesOut: Long.fromNumber(traffic.bytesOut),
      numRequests: Long.fromNumber(traffic.numRequests),
    },
    opcounters: metrics.opcountersDocument(),
    opcountersRepl: zeroCounters,
    mem: { bits: 64, resident: Math.round(memory.rss / mebibyte), virtual: Math.round(virtualBytes(memory.rss) / mebibyte), supported: true },
    extra_info: { note: 'fields vary by platform', page_faults: 0 },
    repl: { setName: call.server.replicaSetName, isWritablePrimary: true, ismaster: true, secondary: false, hosts: [call.connection.me], primary: call.connection.me, me: call.connection.me },
    storageEngine: { name: 'tessera-embedded', supportsCommittedReads: true, persistent: true, readOnly: false },
    ok: 1,
  };
}

function adminOnly(call: Invocation): void {
  if (call.db !== 'admin') fail(13, 'Unauthorized', `${call.name} may only be run against the admin database.`);
}

/** `top`: per namespace of this connection's cluster, time (microseconds) and count of each kind of operation. */
function top(call: Invocation): Document {
  adminOnly(call);
  return { totals: call.server.metrics.totals(call.connection.cluster ?? call.server.defaultCluster), ok: 1 };
}

// ---- renameCollection, collMod ----

/** A `db.collection` namespace of renameCollection, checked as MongoDB checks it. */
function namespaceField(call: Invocation, field: string, role: 'source' | 'target'): { db: string; coll: string } {
  const value = call.command[field];
  if (typeof value !== 'string') fail(14, 'TypeMismatch', `BSON field 'renameCollection.${field}' is the wrong type '${value === null ? 'null' : typeof value}', expected type 'string'`);
  const dot = value.indexOf('.');
  const db = dot < 0 ? '' : value.slice(0, dot);
  const coll = dot < 0 ? '' : value.slice(dot + 1);
  const validDb = db.length > 0 && db.length < 64 && !/[/\\. "$\0]/.test(db);
  const validColl = coll.length > 0 && !coll.includes('\0') && !coll.includes('$') && !coll.startsWith('.') && Buffer.byteLength(value) <= 255;
  if (!validDb || !validColl) fail(73, 'InvalidNamespace', `Invalid ${role} namespace: ${value}`);
  if (coll.startsWith('system.')) fail(20, 'IllegalOperation', `error with ${role} namespace: cannot write to '${value}'`);
  return { db, coll };
}

async function renameCollection(call: Invocation): Promise<Document> {
  adminOnly(call);
  const from = namespaceField(call, 'renameCollection', 'source');
  const to = namespaceField(call, 'to', 'target');
  const dropTarget = call.command.dropTarget;
  if (dropTarget !== undefined && typeof dropTarget !== 'boolean') fail(14, 'TypeMismatch', "BSON field 'renameCollection.dropTarget' is the wrong type, expected type 'bool'");
  if (from.db === to.db && from.coll === to.coll) fail(20, 'IllegalOperation', "Can't rename a collection to itself");
  const store = call.client.store;
  const source = store.collection(from.db, from.coll);
  if (!source) fail(26, 'NamespaceNotFound', `Source collection ${from.db}.${from.coll} does not exist`);
  if (source.view) fail(166, 'CommandNotSupportedOnView', `cannot rename view: ${from.db}.${from.coll}`);
  const target = store.collection(to.db, to.coll);
  if (target && dropTarget !== true) fail(48, 'NamespaceExists', 'target namespace exists');
  if (target?.view) fail(166, 'CommandNotSupportedOnView', `cannot rename to a view: ${to.db}.${to.coll}`);
  await store.write(undefined, (unit) => store.renameCollection(unit, from, to, dropTarget === true));
  return { ok: 1 };
}

/** The options collMod takes; the rest are refused as MongoDB refuses an unknown field. */
const collModOptions = new Set(['collMod', 'viewOn', 'pipeline', 'index', 'changeStreamPreAndPostImages', 'validator', 'validationLevel', 'validationAction', 'writeConcern', 'comment', 'lsid', 'txnNumber', '$db', '$clusterTime', '$readPreference', 'maxTimeMS', 'apiVersion', 'apiStrict', 'apiDeprecationErrors']);

/**
 * `collMod`: a view's definition (`viewOn` and `pipeline`, logged as the view dropped and created again in
 * one record, which the change feed does not report); an index's `hidden: false` (every index is visible);
 * the rest the engine has no place for (validation rules, TTL, hidden indexes) are refused by name.
 */
async function collMod(call: Invocation): Promise<Document> {
  const name = collectionName(call);
  for (const field of Object.keys(call.command)) {
    if (!collModOptions.has(field)) fail(40415, 'Location40415', `BSON field 'collMod.${field}' is an unknown field.`);
  }
  const { command } = call;
  for (const field of ['validator', 'validationLevel', 'validationAction']) {
    if (command[field] !== undefined) fail(115, 'CommandNotSupported', `'${field}' is not supported by the Tessera datastore: it keeps no schema validation rules`);
  }
  const store = call.client.store;
  const state = store.collection(call.db, name);
  if (!state) fail(26, 'NamespaceNotFound', `ns does not exist: ${call.db}.${name}`);
  const reply: Document = { ok: 1 };
  if (command.viewOn !== undefined || command.pipeline !== undefined) {
    if (!state.view) fail(72, 'InvalidOptions', `'viewOn' and 'pipeline' are valid only for a view: ${call.db}.${name} is a collection`);
    const viewOn = command.viewOn ?? state.view.viewOn;
    const pipeline = command.pipeline ?? state.view.pipeline;
    if (typeof viewOn !== 'string' || viewOn.length === 0) fail(14, 'TypeMismatch', "'viewOn' must be a non-empty string");
    if (!Array.isArray(pipeline) || !pipeline.every((stage) => isPlainObject(stage))) fail(14, 'TypeMismatch', "'pipeline' must be an array of stage documents");
    if (viewOn === name) fail(72, 'InvalidOptions', `a view cannot be defined on itself: ${call.db}.${name}`);
    for (let on = store.collection(call.db, viewOn), depth = 0; on?.view; on = store.collection(call.db, on.view.viewOn), depth++) {
      if (on.view.viewOn === name || depth > 20) fail(72, 'InvalidOptions', `the view ${call.db}.${name} would be defined on itself through ${viewOn}`);
    }
    await store.write(undefined, (unit) => {
      const first = unit.ops.length;
      store.dropCollection(unit, call.db, name);
      store.createCollection(unit, call.db, name, { viewOn, pipeline }, state.collation);
      for (let i = first; i < unit.ops.length; i++) unit.ops[i].m = true;
    });
  }
  const index = command.index;
  if (index !== undefined) {
    if (state.view) fail(166, 'CommandNotSupportedOnView', `Namespace ${call.db}.${name} is a view, not a collection`);
    if (!isPlainObject(index)) fail(14, 'TypeMismatch', "BSON field 'collMod.index' is the wrong type, expected type 'object'");
    const byName = typeof index.name === 'string' ? state.indexes.get(index.name) : undefined;
    const byKey = isPlainObject(index.keyPattern) ? [...state.indexes.values()].find((i) => JSON.stringify(i.spec) === JSON.stringify(index.keyPattern)) : undefined;
    if (index.name === undefined && index.keyPattern === undefined) fail(2, 'BadValue', "collMod 'index' requires either 'name' or 'keyPattern'");
    const found = byName ?? byKey;
    if (!found) fail(27, 'IndexNotFound', `cannot find index ${JSON.stringify(index.name ?? index.keyPattern)} for ns ${call.db}.${name}`);
    for (const option of Object.keys(index)) {
      if (option === 'name' || option === 'keyPattern') continue;
      if (option === 'hidden' && index.hidden === false) continue;
      if (option === 'hidden' || option === 'expireAfterSeconds' || option === 'unique' || option === 'prepareUnique') {
        fail(115, 'CommandNotSupported', `collMod 'index.${option}' ${option === 'hidden' ? 'true ' : ''}is not supported by the Tessera datastore`);
      }
      fail(40415, 'Location40415', `BSON field 'collMod.index.${option}' is an unknown field.`);
    }
  }
  const images = command.changeStreamPreAndPostImages;
  if (images !== undefined) {
    if (state.view) fail(166, 'CommandNotSupportedOnView', `Namespace ${call.db}.${name} is a view, not a collection`);
    if (!isPlainObject(images) || typeof images.enabled !== 'boolean') fail(14, 'TypeMismatch', "BSON field 'collMod.changeStreamPreAndPostImages.enabled' is missing or not a boolean");
  }
  if (!state.view) {
    // Logged even when it changes nothing kept here: change streams report every collMod (`modify`).
    const options = images === undefined ? {} : { changeStreamPreAndPostImages: { enabled: images.enabled } };
    await store.write(undefined, (unit) => store.modifyCollection(unit, state, options));
  }
  return reply;
}

// ---- cursors ----

async function cursorReply(call: Invocation, cursor: ServerCursor, batchSize: number | undefined, field: 'firstBatch' | 'nextBatch', waitMs = 0, keepOpen = true): Promise<Document> {
  const batch = await cursor.next(batchSize, waitMs);
  const exhausted = batch.exhausted || !keepOpen;
  if (exhausted) await call.server.cursors.remove(cursor.id);
  else cursor.lastUsed = Date.now();
  const reply: Document = { id: exhausted ? Long.ZERO : cursor.id, ns: cursor.ns, [field]: batch.docs };
  if (batch.postBatchResumeToken) reply.postBatchResumeToken = batch.postBatchResumeToken;
  return { cursor: reply, ok: 1 };
}

async function documentsReply(call: Invocation, ns: string, docs: Document[], batchSize: number | undefined, singleBatch = false): Promise<Document> {
  const cursor = new DocumentCursor(newCursorId(), ns, call.connection.cluster ?? call.server.defaultCluster, docs);
  // batchSize 0 asks for a cursor and no documents yet.
  const first = batchSize === 0 && !singleBatch ? { docs: [], exhausted: false } : await cursor.next(batchSize ?? defaultFirstBatch);
  // Most results fit the first batch: only a cursor with more to hand out is registered.
  if (first.exhausted || singleBatch) return { cursor: { id: Long.ZERO, ns, firstBatch: first.docs }, ok: 1 };
  call.server.cursors.add(cursor);
  return { cursor: { id: cursor.id, ns, firstBatch: first.docs }, ok: 1 };
}

async function getMore(call: Invocation): Promise<Document> {
  const id = call.command.getMore;
  if (!(id instanceof Long) && typeof id !== 'number') fail(14, 'TypeMismatch', 'getMore requires a cursor id');
  const cursor = call.server.cursors.get(id);
  if (!cursor || cursor.cluster !== (call.connection.cluster ?? call.server.defaultCluster)) fail(43, 'CursorNotFound', `cursor id ${String(id)} not found`);
  const expected = `${call.db}.${String(call.command.collection)}`;
  if (cursor.ns !== expected && !cursor.ns.endsWith('.$cmd.aggregate')) fail(13, 'Unauthorized', `Requested getMore on namespace '${expected}', but cursor belongs to a different namespace ${cursor.ns}`);
  const batchSize = batchSizeField(call.command);
  if (cursor.busy) fail(292, 'CursorInUse', `cursor id ${String(id)} is already in use`);
  cursor.busy = true;
  try {
    // An awaitData (change stream) cursor waits up to maxTimeMS, 1 s by default, for the next change.
    const maxTimeMS = numberField(call.command, 'maxTimeMS');
    if (maxTimeMS !== undefined && !(cursor instanceof ChangeStreamCursor)) fail(2, 'BadValue', 'cannot set maxTimeMS on getMore command for a non-awaitData cursor');
    const waitMs = cursor instanceof ChangeStreamCursor ? (maxTimeMS ?? 1000) : 0;
    return await cursorReply(call, cursor, batchSize, 'nextBatch', waitMs);
  } finally {
    cursor.busy = false;
  }
}

async function killCursors(call: Invocation): Promise<Document> {
  const ids = call.command.cursors;
  if (!Array.isArray(ids)) fail(14, 'TypeMismatch', "killCursors requires a 'cursors' array");
  const killed: unknown[] = [];
  const notFound: unknown[] = [];
  for (const id of ids as (Long | number)[]) ((await call.server.cursors.remove(id)) ? killed : notFound).push(Long.fromNumber(Number(id)));
  return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
}

// ---- reads ----

async function find(call: Invocation): Promise<Document> {
  const { command } = call;
  refuse(command, ['tailable', 'min', 'max', 'returnKey', 'showRecordId']);
  const limitField = numberField(command, 'limit') ?? 0;
  const singleBatch = command.singleBatch === true || limitField < 0;
  const limit = Math.abs(limitField);
  const skip = numberField(command, 'skip');
  if (skip !== undefined && skip < 0) fail(51024, 'BadValue', 'skip must be a non-negative number');
  const batchSize = batchSizeField(command);
  const docs = await collection(call)
    .find(documentField(command, 'filter') ?? {}, documentField(command, 'projection'), {
      sort: documentField(command, 'sort') as SortSpec | undefined,
      skip,
      limit: limit || undefined,
      ...queryOption(call),
    })
    .toArray();
  return documentsReply(call, `${call.db}.${collectionName(call)}`, docs, batchSize ?? (limit ? Math.min(limit, defaultFirstBatch) : undefined), singleBatch);
}

async function count(call: Invocation): Promise<Document> {
  const { command } = call;
  const limit = numberField(command, 'limit');
  const n = await collection(call).countDocuments(documentField(command, 'query') ?? {}, { skip: numberField(command, 'skip'), limit: limit ? Math.abs(limit) : undefined, ...queryOption(call) });
  return { n, ok: 1 };
}

/** The plan stage MongoDB names for one of the planner's plans (`IXSCAN <index>`, `COLLSCAN`, `IDHACK`, `OR (...)`). */
function planStage(description: string, indexes: Map<string, { spec: Document; multikey: boolean }>, direction: 'forward' | 'backward'): Document {
  if (description === 'COLLSCAN') return { stage: 'COLLSCAN', direction: 'forward' };
  if (description === 'IDHACK') return { stage: 'IDHACK' };
  if (description.startsWith('OR (')) {
    const branches = description.slice(4, -1).split(', ');
    return { stage: 'FETCH', inputStage: { stage: 'OR', inputStages: branches.map((branch) => planStage(branch, indexes, 'forward').inputStage as Document) } };
  }
  const name = description.replace(/^IXSCAN /, '').replace(/ \(sort\)$/, '');
  const index = indexes.get(name);
  return { stage: 'FETCH', inputStage: { stage: 'IXSCAN', keyPattern: index?.spec ?? {}, indexName: name, isMultiKey: index?.multikey ?? false, direction } };
}

/** What an explained command reads: its filter and options, the write it would do, the stages after it. */
interface Explained {
  name: unknown;
  filter: Document;
  sort?: SortSpec;
  skip?: number;
  limit?: number;
  /** UPDATE or DELETE: the write stage MongoDB puts above the read; explain never performs it. */
  write?: 'UPDATE' | 'DELETE';
  /** For aggregate: the stages after the leading `$match` the planner answers. */
  stages?: Document[];
}

function firstStatement(inner: Document, field: string): Document {
  const list = inner[field];
  if (!Array.isArray(list) || !isPlainObject(list[0])) fail(9, 'FailedToParse', `explain of ${field === 'updates' ? 'update' : 'delete'} requires a '${field}' array with one statement`);
  return list[0];
}

function explained(kind: string, inner: Document): Explained {
  const name = inner[kind];
  switch (kind) {
    case 'find':
      return { name, filter: documentField(inner, 'filter') ?? {}, sort: checkSort(documentField(inner, 'sort')), skip: numberField(inner, 'skip'), limit: numberField(inner, 'limit') };
    case 'count':
      return { name, filter: documentField(inner, 'query') ?? {}, skip: numberField(inner, 'skip'), limit: numberField(inner, 'limit') };
    case 'distinct':
      return { name, filter: documentField(inner, 'query') ?? {} };
    case 'update': {
      const statement = firstStatement(inner, 'updates');
      return { name, filter: documentField(statement, 'q') ?? {}, limit: statement.multi === true ? undefined : 1, write: 'UPDATE' };
    }
    case 'delete': {
      const statement = firstStatement(inner, 'deletes');
      return { name, filter: documentField(statement, 'q') ?? {}, limit: statement.limit === 1 ? 1 : undefined, write: 'DELETE' };
    }
    case 'findAndModify':
    case 'findandmodify':
      return { name, filter: documentField(inner, 'query') ?? {}, sort: checkSort(documentField(inner, 'sort')), limit: 1, write: inner.remove === true ? 'DELETE' : 'UPDATE' };
    case 'aggregate': {
      if (name === 1) fail(115, 'CommandNotSupported', 'explain of a database-level aggregate is not supported by the Tessera datastore');
      const pipeline = inner.pipeline;
      if (!Array.isArray(pipeline)) fail(14, 'TypeMismatch', "aggregate requires a 'pipeline' array");
      const first = pipeline[0] as unknown;
      const leading = isPlainObject(first) && isPlainObject(first.$match) ? first.$match : undefined;
      return { name, filter: leading ?? {}, stages: (leading ? pipeline.slice(1) : pipeline) as Document[] };
    }
    default:
      fail(115, 'CommandNotSupported', `explain of '${kind}' is not supported by the Tessera datastore (find, count, distinct, aggregate, update, delete and findAndModify are)`);
  }
}

/**
 * `explain` of reads and writes: the plan the embedded planner picks for the command's filter, run once to
 * report what it examined (MongoDB's `queryPlanner.winningPlan` and `executionStats` shapes, one plan, no
 * rejected ones). An update, delete or findAndModify is planned and counted, never performed, as in
 * MongoDB; an aggregate reports its leading `$match` as the `$cursor` stage and its other stages after it.
 */
async function explain(call: Invocation): Promise<Document> {
  const inner = documentField(call.command, 'explain');
  if (!inner) fail(2, 'BadValue', "explain requires a command document");
  const verbosity = call.command.verbosity ?? 'allPlansExecution';
  if (verbosity !== 'queryPlanner' && verbosity !== 'executionStats' && verbosity !== 'allPlansExecution') fail(2, 'BadValue', `verbosity string must be one of {'queryPlanner', 'executionStats', 'allPlansExecution'}`);
  const kind = Object.keys(inner)[0] ?? '';
  const target = explained(kind, inner);
  const collation = inner.collation === undefined ? undefined : checkCollation(inner.collation);
  const name = target.name;
  if (typeof name !== 'string' || name.length === 0) fail(73, 'InvalidNamespace', `collection name must be a non-empty string for ${kind}`);
  const { filter, sort } = target;
  const options = { sort, skip: target.skip, limit: target.limit ? Math.abs(target.limit) : undefined, variables: documentField(inner, 'let'), collation };
  const state = call.client.store.collection(call.db, name);
  const stats: SelectStats = { plan: 'EOF', keysExamined: 0, docsExamined: 0 };
  const started = Date.now();
  // A view or a missing collection has no plan of the planner's: reported as MongoDB reports an empty one.
  const returned = state && !state.view ? select(state, filter, { ...options, collation: collation ?? state.collation }, stats).length : 0;
  const indexes = new Map([...(state?.indexes.values() ?? [])].map((index) => [index.name, { spec: index.spec, multikey: index.multikey }]));
  const sortField = sort ? Object.keys(sort)[0] : undefined;
  const read = stats.plan === 'EOF' ? { stage: 'EOF' } : planStage(stats.plan, indexes, sortField !== undefined && sort?.[sortField] === -1 && stats.plan.endsWith('(sort)') ? 'backward' : 'forward');
  const winningPlan = target.write ? { stage: target.write, inputStage: read } : read;
  const queryPlanner = { namespace: `${call.db}.${name}`, indexFilterSet: false, parsedQuery: filter, winningPlan, rejectedPlans: [] };
  const executionStats = {
    executionSuccess: true,
    nReturned: target.write ? 0 : returned,
    executionTimeMillis: Date.now() - started,
    totalKeysExamined: stats.keysExamined,
    totalDocsExamined: stats.docsExamined,
    ...(target.write ? { executionStages: { stage: target.write, nMatched: returned, ...(target.write === 'DELETE' ? { nWouldDelete: returned } : {}), inputStage: read } } : {}),
  };
  const plan = { queryPlanner, ...(verbosity === 'queryPlanner' ? {} : { executionStats }) };
  return {
    explainVersion: '1',
    ...(target.stages ? { stages: [{ $cursor: plan }, ...target.stages] } : plan),
    command: { ...inner, $db: call.db },
    serverInfo: { host: call.connection.me, version: serverVersion },
    ok: 1,
  };
}

async function distinct(call: Invocation): Promise<Document> {
  const { command } = call;
  if (typeof command.key !== 'string') fail(14, 'TypeMismatch', "distinct requires a string 'key'");
  const values = await collection(call).distinct(command.key, documentField(command, 'query') ?? {}, queryOption(call));
  return { values, ok: 1 };
}

async function aggregate(call: Invocation): Promise<Document> {
  const { command } = call;
  refuse(command, ['explain']);
  const pipeline = command.pipeline;
  if (!Array.isArray(pipeline)) fail(14, 'TypeMismatch', "aggregate requires a 'pipeline' array");
  const cursorOptions = documentField(command, 'cursor');
  const batchSize = cursorOptions ? batchSizeField(cursorOptions) : undefined;
  const first = pipeline[0] as Document | undefined;
  if (first && isPlainObject(first) && '$changeStream' in first) return changeStream(call, first.$changeStream as Document, pipeline.slice(1) as Document[], batchSize);
  for (const stage of pipeline as Document[]) {
    if (isPlainObject(stage) && '$changeStream' in stage) fail(40602, 'Location40602', '$changeStream is only valid as the first stage in a pipeline');
  }
  if (command.aggregate === 1) {
    const docs = await call.client.db(call.db).aggregate(pipeline as Document[], queryOption(call)).toArray();
    return documentsReply(call, `${call.db}.$cmd.aggregate`, docs, batchSize);
  }
  const docs = await collection(call).aggregate(pipeline as Document[], queryOption(call)).toArray();
  return documentsReply(call, `${call.db}.${collectionName(call)}`, docs, batchSize);
}

/** The stages MongoDB allows after `$changeStream` (each event passes them one at a time). */
const changeStreamStages = new Set(['$match', '$project', '$addFields', '$set', '$unset', '$replaceRoot', '$replaceWith', '$redact']);

/** Aggregation stages MongoDB knows but refuses in a change stream; any other name is no stage at all. */
const otherStages = new Set(['$group', '$sort', '$limit', '$skip', '$lookup', '$graphLookup', '$unionWith', '$unwind', '$out', '$merge', '$facet', '$count', '$sample', '$bucket', '$bucketAuto', '$sortByCount', '$densify', '$fill', '$geoNear', '$setWindowFields', '$documents', '$collStats', '$indexStats', '$changeStream']);

/** Checks a change stream's stages when it opens, as MongoDB does, rather than at its first event. */
function checkChangeStreamStages(stages: Document[]): void {
  for (const stage of stages) {
    const names = isPlainObject(stage) ? Object.keys(stage) : [];
    if (names.length !== 1) fail(40323, 'Location40323', 'A pipeline stage specification object must contain exactly one field.');
    const name = names[0];
    if (changeStreamStages.has(name)) continue;
    if (otherStages.has(name)) fail(20, 'IllegalOperation', `${name} is not permitted in a $changeStream pipeline`);
    fail(40324, 'Location40324', `Unrecognized pipeline stage name: '${name}'`);
  }
}

async function changeStream(call: Invocation, spec: Document, rest: Document[], batchSize: number | undefined): Promise<Document> {
  if (!isPlainObject(spec)) fail(14, 'TypeMismatch', '$changeStream requires a document');
  checkChangeStreamStages(rest);
  if (call.session) fail(263, 'OperationNotSupportedInTransaction', 'Operation not permitted in transaction :: caused by :: Cannot run $changeStream in a transaction');
  const options: WatchOptions = {};
  if (spec.fullDocument !== undefined) options.fullDocument = spec.fullDocument as WatchOptions['fullDocument'];
  if (spec.fullDocumentBeforeChange !== undefined) options.fullDocumentBeforeChange = spec.fullDocumentBeforeChange as WatchOptions['fullDocumentBeforeChange'];
  if (spec.resumeAfter !== undefined) options.resumeAfter = spec.resumeAfter as WatchOptions['resumeAfter'];
  if (spec.startAfter !== undefined) options.startAfter = spec.startAfter as WatchOptions['startAfter'];
  if (spec.showExpandedEvents !== undefined) {
    if (typeof spec.showExpandedEvents !== 'boolean') fail(14, 'TypeMismatch', "BSON field '$changeStream.showExpandedEvents' is the wrong type, expected type 'bool'");
    options.showExpandedEvents = spec.showExpandedEvents;
  }
  if (spec.startAtOperationTime !== undefined) {
    // Event times carry the commit's sequence number as the Timestamp's increment.
    const increment = Number((spec.startAtOperationTime as { i?: number; low?: number }).i ?? 0);
    options.resumeAfter ??= encodeToken(Math.max(0, increment - 1), 0xffffffff);
  }
  let scope: { db?: string; coll?: string };
  let ns: string;
  if (call.command.aggregate === 1) {
    if (call.db === 'admin') {
      if (spec.allChangesForCluster !== true) fail(73, 'InvalidNamespace', "$changeStream may not be opened on the internal admin database unless allChangesForCluster is true");
      scope = {};
    } else {
      scope = { db: call.db };
    }
    ns = `${call.db}.$cmd.aggregate`;
  } else {
    scope = { db: call.db, coll: collectionName(call) };
    ns = `${call.db}.${collectionName(call)}`;
  }
  const client = call.client;
  const stream = new EmbeddedChangeStream(client.store, scope, rest, options);
  const cursor = new ChangeStreamCursor(newCursorId(), ns, call.connection.cluster ?? call.server.defaultCluster, stream, client.store);
  call.server.cursors.add(cursor);
  try {
    return await cursorReply(call, cursor, batchSize, 'firstBatch');
  } catch (error) {
    await call.server.cursors.remove(cursor.id);
    throw error;
  }
}

// ---- writes ----

function writeErrorsReply(n: number, writeErrors: WriteErrorDetail[], extra: Document = {}): Document {
  const reply: Document = { n, ...extra };
  if (writeErrors.length > 0) reply.writeErrors = writeErrors.map((e) => ({ index: e.index, code: e.code, errmsg: e.errmsg, ...(e.keyPattern ? { keyPattern: e.keyPattern, keyValue: e.keyValue } : {}) }));
  reply.ok = 1;
  return reply;
}

function statements(command: Document, field: string): Document[] {
  const list = command[field];
  if (!Array.isArray(list)) fail(14, 'TypeMismatch', `'${field}' must be an array`);
  if (list.length === 0) fail(16, 'InvalidLength', `Write batch sizes must be between 1 and 100000. Got 0 operations.`);
  for (const item of list) if (!isPlainObject(item)) fail(14, 'TypeMismatch', `every entry of '${field}' must be a document`);
  return list as Document[];
}

function isDetailed(error: unknown): error is DatastoreError & { writeErrors: WriteErrorDetail[] } {
  return error instanceof DatastoreError && Array.isArray(error.writeErrors);
}

function writeErrorOf(error: unknown, index: number): WriteErrorDetail {
  if (error instanceof DatastoreError) return writeErrorDetail(error, index);
  if (error instanceof WireCommandError) return { index, code: error.code, errmsg: error.message };
  throw error;
}

/**
 * Gives documents without an `_id` one here, as MongoDB's server does, so that running the batch again one
 * document at a time (below) cannot insert a document twice.
 */
function withIds(docs: Document[]): Document[] {
  return docs.map((doc) => (doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc));
}

async function insert(call: Invocation): Promise<Document> {
  const docs = withIds(statements(call.command, 'documents'));
  const ordered = call.command.ordered !== false;
  const coll = collection(call);
  try {
    // Errors escaping the bulk insert were raised before anything was written, or are reported per
    // document by the fallback (ids are fixed, so what was written already comes back as a duplicate).
    const result = await coll.insertMany(docs, { ordered, ...sessionOption(call) });
    return writeErrorsReply(result.insertedCount, []);
  } catch (error) {
    if (isDetailed(error)) return writeErrorsReply((error.result as BulkWriteResult | undefined)?.insertedCount ?? 0, error.writeErrors);
    // A document refused before anything was written (e.g. an array _id): insert one by one so the
    // others are written as MongoDB would, and the refused one is reported at its index.
    if (!(error instanceof DatastoreError) || call.session) throw error;
  }
  let n = 0;
  const writeErrors: WriteErrorDetail[] = [];
  for (let i = 0; i < docs.length; i++) {
    try {
      await coll.insertOne(docs[i]);
      n++;
    } catch (error) {
      writeErrors.push(writeErrorOf(error, i));
      if (ordered) break;
    }
  }
  return writeErrorsReply(n, writeErrors);
}

function isReplacement(u: unknown): u is Document {
  return isPlainObject(u) && !Object.keys(u).some((key) => key.startsWith('$'));
}

/** `hint` and (single-document statements only, as MongoDB 8.0) `sort` of one update or delete statement. */
function statementOptions(statement: Document, single: boolean): { hint?: Hint; sort?: SortSpec; collation?: Document } {
  const out: { hint?: Hint; sort?: SortSpec; collation?: Document } = {};
  const hint = hintField(statement);
  if (hint !== undefined) out.hint = hint;
  const collation = statement.collation === undefined ? undefined : checkCollation(statement.collation);
  if (collation) out.collation = collation;
  if (statement.sort !== undefined) {
    if (!single) fail(72, 'InvalidOptions', 'Cannot specify sort with multi=true');
    out.sort = documentField(statement, 'sort') as SortSpec;
  }
  return out;
}

function updateOperation(statement: Document): BulkWriteOperation {
  refuse(statement, ['c']);
  const filter = (statement.q ?? {}) as Document;
  const u = statement.u;
  const upsert = statement.upsert === true;
  const arrayFilters = statement.arrayFilters as Document[] | undefined;
  const options = statementOptions(statement, statement.multi !== true);
  if (isReplacement(u)) {
    if (statement.multi === true) fail(9, 'FailedToParse', 'multi update is not supported for replacement-style update');
    return { replaceOne: { filter, replacement: u, upsert, ...options } };
  }
  if (!isPlainObject(u) && !Array.isArray(u)) fail(9, 'FailedToParse', 'Update argument must be either an object or an array');
  const spec = { filter, update: u as Document | Document[], upsert, ...(arrayFilters ? { arrayFilters } : {}), ...options };
  return statement.multi === true ? { updateMany: spec } : { updateOne: spec };
}

function deleteOperation(statement: Document): BulkWriteOperation {
  refuse(statement, ['sort']);
  const limit = Number(statement.limit ?? 0);
  if (limit !== 0 && limit !== 1) fail(9, 'FailedToParse', `The limit field in delete objects must be 0 or 1. Got ${limit}`);
  const filter = (statement.q ?? {}) as Document;
  const { hint, collation } = statementOptions(statement, false);
  const spec = { filter, ...(hint === undefined ? {} : { hint }), ...(collation === undefined ? {} : { collation }) };
  return limit === 1 ? { deleteOne: spec } : { deleteMany: spec };
}

/**
 * Runs write statements as one bulk write of the embedded engine (one commit); when a statement is refused
 * before anything is written, runs them one at a time so the others still apply and the refusal is
 * reported at its own index.
 */
async function runStatements(call: Invocation, list: Document[], toOperation: (statement: Document) => BulkWriteOperation): Promise<{ result: BulkWriteResult; writeErrors: WriteErrorDetail[] }> {
  const ordered = call.command.ordered !== false;
  const coll = collection(call);
  const { let: variables, ...bulkOptions } = queryOption(call);
  if (variables) Object.assign(bulkOptions, { let: variables });
  let operations: BulkWriteOperation[] | undefined;
  try {
    operations = list.map(toOperation);
    return { result: await coll.bulkWrite(operations, { ordered, ...bulkOptions }), writeErrors: [] };
  } catch (error) {
    if (isDetailed(error) && error.result) return { result: error.result as BulkWriteResult, writeErrors: error.writeErrors };
    if (!(error instanceof DatastoreError || error instanceof WireCommandError) || call.session) throw error;
  }
  const total: BulkWriteResult = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0, insertedIds: {}, upsertedIds: {} };
  const writeErrors: WriteErrorDetail[] = [];
  for (let i = 0; i < list.length; i++) {
    try {
      const r = await coll.bulkWrite([toOperation(list[i])], variables ? { let: variables } : {});
      total.matchedCount += r.matchedCount;
      total.modifiedCount += r.modifiedCount;
      total.deletedCount += r.deletedCount;
      total.upsertedCount += r.upsertedCount;
      if (r.upsertedCount) total.upsertedIds[i] = r.upsertedIds[0];
    } catch (error) {
      writeErrors.push(isDetailed(error) ? { ...error.writeErrors[0], index: i } : writeErrorOf(error, i));
      if (ordered) break;
    }
  }
  return { result: total, writeErrors };
}

async function update(call: Invocation): Promise<Document> {
  const list = statements(call.command, 'updates');
  const { result, writeErrors } = await runStatements(call, list, updateOperation);
  const upserted = Object.entries(result.upsertedIds).map(([index, _id]) => ({ index: Number(index), _id }));
  return writeErrorsReply(result.matchedCount + result.upsertedCount, writeErrors, { nModified: result.modifiedCount, ...(upserted.length ? { upserted } : {}) });
}

async function remove(call: Invocation): Promise<Document> {
  const list = statements(call.command, 'deletes');
  const { result, writeErrors } = await runStatements(call, list, deleteOperation);
  return writeErrorsReply(result.deletedCount, writeErrors);
}

async function findAndModify(call: Invocation): Promise<Document> {
  const { command } = call;
  const coll = collection(call);
  const query = documentField(command, 'query') ?? {};
  const sort = documentField(command, 'sort') as SortSpec | undefined;
  const projection = documentField(command, 'fields');
  const session = queryOption(call);
  if (command.remove === true) {
    if (command.update !== undefined) fail(9, 'FailedToParse', 'Cannot specify both an update and remove=true');
    if (command.new === true) fail(9, 'FailedToParse', 'Cannot specify both new=true and remove=true; \'remove\' always returns the deleted document');
    const value = await coll.findOneAndDelete(query, { sort, projection, ...session });
    return { lastErrorObject: { n: value ? 1 : 0 }, value, ok: 1 };
  }
  const u = command.update;
  if (u === undefined) fail(9, 'FailedToParse', 'Either an update or remove=true must be specified');
  const upsert = command.upsert === true;
  const returnNewDocument = command.new === true;
  // Whether a document matched decides lastErrorObject.updatedExisting; only an upsert needs asking.
  const existed = upsert ? (await coll.findOne(query, { _id: 1 }, { sort, ...session })) !== null : true;
  const options = { upsert, returnNewDocument, sort, projection, arrayFilters: command.arrayFilters as Document[] | undefined, ...session };
  const value = isReplacement(u) ? await coll.findOneAndReplace(query, u, options) : await coll.findOneAndUpdate(query, u as Document | Document[], options);
  const upserted = upsert && !existed;
  const lastErrorObject: Document = { n: value !== null || upserted ? 1 : 0, updatedExisting: !upserted && value !== null };
  if (upserted && value && '_id' in value) lastErrorObject.upserted = value._id;
  return { lastErrorObject, value, ok: 1 };
}

// ---- catalog ----

async function listDatabases(call: Invocation): Promise<Document> {
  const names = await call.client.admin().getDBNames();
  const filter = documentField(call.command, 'filter');
  const matches = filter ? compileFilter(filter) : undefined;
  const databases = names.map((name) => (call.command.nameOnly === true ? { name } : { name, sizeOnDisk: 0, empty: false })).filter((d) => !matches || matches(d));
  return call.command.nameOnly === true ? { databases, ok: 1 } : { databases, totalSize: 0, totalSizeMb: 0, ok: 1 };
}

async function listCollections(call: Invocation): Promise<Document> {
  const names = await call.client.db(call.db).getCollectionNames();
  const filter = documentField(call.command, 'filter');
  const matches = filter ? compileFilter(filter) : undefined;
  const infos = names.map((name) => {
    const state = call.client.store.collection(call.db, name);
    const view = state?.view;
    const info: Document = view
      ? { name, type: 'view', options: { viewOn: view.viewOn, pipeline: view.pipeline, ...(state.collation ? { collation: state.collation } : {}) }, info: { readOnly: true } }
      : { name, type: 'collection', options: state?.collation ? { collation: state.collation } : {}, info: { readOnly: false }, idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } };
    return info;
  });
  const selected = infos.filter((info) => !matches || matches(info)).map((info) => (call.command.nameOnly === true ? { name: info.name, type: info.type } : info));
  const cursorOptions = documentField(call.command, 'cursor');
  return documentsReply(call, `${call.db}.$cmd.listCollections`, selected, cursorOptions ? batchSizeField(cursorOptions) : undefined);
}

/** The open transaction a command runs in, as the embedded store knows it (the wire server's sessions are embedded ones). */
function transactionOwner(call: Invocation): TransactionOwner | undefined {
  return call.session;
}

async function create(call: Invocation): Promise<Document> {
  const { command } = call;
  refuse(command, ['capped', 'timeseries', 'clusteredIndex', 'validator', 'expireAfterSeconds']);
  const viewOn = command.viewOn;
  if (viewOn !== undefined && typeof viewOn !== 'string') fail(14, 'TypeMismatch', "'viewOn' must be a string");
  const collation = command.collation === undefined ? undefined : checkCollation(command.collation);
  const images = command.changeStreamPreAndPostImages;
  if (images !== undefined) {
    if (!isPlainObject(images) || typeof images.enabled !== 'boolean') fail(14, 'TypeMismatch', "BSON field 'create.changeStreamPreAndPostImages.enabled' is missing or not a boolean");
    if (viewOn) fail(72, 'InvalidOptions', 'changeStreamPreAndPostImages is an option of a collection, not of a view');
    // Created with the setting in its one log record (a `modify` event would follow the `create` otherwise).
    const store = call.client.store;
    const options = { changeStreamPreAndPostImages: { enabled: images.enabled } };
    await store.write(transactionOwner(call), (unit) => {
      const state = store.createCollection(unit, call.db, collectionName(call), undefined, collation && !isSimpleCollation(collation) ? collation : undefined);
      state.changeStreamImages = images.enabled as boolean;
      unit.ops[unit.ops.length - 1].options = options;
    });
    return { ok: 1 };
  }
  const owner = transactionOwner(call);
  if (owner) {
    // In a transaction (MongoDB 4.4+): a collection, not a view, seen by others once the transaction commits.
    if (viewOn) fail(263, 'OperationNotSupportedInTransaction', 'Cannot create a view in a multi-document transaction.');
    const store = call.client.store;
    const name = collectionName(call);
    await store.write(owner, (unit) => store.createCollection(unit, call.db, name, undefined, collation && !isSimpleCollation(collation) ? collation : undefined));
    return { ok: 1 };
  }
  await call.client.db(call.db).createCollection(collectionName(call), {
    ...(viewOn ? { viewOn, pipeline: (command.pipeline as Document[] | undefined) ?? [] } : {}),
    ...(collation && !isSimpleCollation(collation) ? { collation } : {}),
  });
  return { ok: 1 };
}

async function drop(call: Invocation): Promise<Document> {
  const name = collectionName(call);
  const state = call.client.store.collection(call.db, name);
  const nIndexesWas = state?.indexes.size ?? 0;
  // MongoDB 7.0 answers ok for a collection that does not exist.
  await call.client.db(call.db).dropCollection(name);
  return { nIndexesWas, ns: `${call.db}.${name}`, ok: 1 };
}

async function dropDatabase(call: Invocation): Promise<Document> {
  await call.client.db(call.db).dropDatabase();
  return { dropped: call.db, ok: 1 };
}

// `ns` is accepted when it names the collection, and not kept (as MongoDB 4.4+): mongorestore sends it.
const supportedIndexOptions = new Set(['key', 'name', 'unique', 'sparse', 'v', 'background', 'ns', 'collation']);

async function createIndexes(call: Invocation): Promise<Document> {
  const indexes = call.command.indexes;
  if (!Array.isArray(indexes) || indexes.length === 0) fail(2, 'BadValue', "createIndexes requires a non-empty 'indexes' array");
  const name = collectionName(call);
  const store = call.client.store;
  const existed = store.collection(call.db, name) !== undefined;
  const numIndexesBefore = store.collection(call.db, name)?.indexes.size ?? 1;
  const coll = collection(call);
  const owner = transactionOwner(call);
  if (owner && existed && !store.createdInTransaction(owner, call.db, name)) {
    fail(263, 'OperationNotSupportedInTransaction', `Cannot create new indexes on existing collection ${call.db}.${name} in a multi-document transaction.`);
  }
  for (const spec of indexes as Document[]) {
    if (!isPlainObject(spec) || !isPlainObject(spec.key)) fail(9, 'FailedToParse', "every index needs a 'key' document");
    for (const option of Object.keys(spec)) {
      if (!supportedIndexOptions.has(option)) fail(197, 'InvalidIndexSpecificationOption', `The index option '${option}' is not supported by the Tessera datastore`);
    }
    if (typeof spec.name !== 'string' || !spec.name) fail(9, 'FailedToParse', "every index needs a 'name'");
    // An index's collation: absent, the collection's; the simple one, binary (kept, as it overrides that default).
    const collation = spec.collation === undefined ? undefined : checkCollation(spec.collation);
    if (spec.ns !== undefined) {
      if (typeof spec.ns !== 'string') fail(14, 'TypeMismatch', "The field 'ns' must be a string");
      if (spec.ns !== `${call.db}.${name}`) fail(2, 'BadValue', `The value of the field 'ns' (${spec.ns}) doesn't match the namespace '${call.db}.${name}'`);
    }
    const options = { name: spec.name, unique: spec.unique === true, sparse: spec.sparse === true, ...(collation ? { collation } : {}) };
    const key = spec.key as Record<string, 1 | -1>;
    // In a transaction the index (and a collection it creates) is the transaction's, seen once it commits.
    if (owner) await store.write(owner, (unit) => store.createIndex(unit, store.collectionForWrite(unit, call.db, name), key, options));
    else await coll.createIndex(key, options);
  }
  const numIndexesAfter = call.client.store.collection(call.db, name)?.indexes.size ?? numIndexesBefore;
  return { createdCollectionAutomatically: !existed, numIndexesBefore, numIndexesAfter, ok: 1 };
}

async function listIndexes(call: Invocation): Promise<Document> {
  const name = collectionName(call);
  if (!call.client.store.collection(call.db, name)) fail(26, 'NamespaceNotFound', `ns does not exist: ${call.db}.${name}`);
  const indexes = (await collection(call).listIndexes()).map((index) => ({ v: 2, ...index }));
  const cursorOptions = documentField(call.command, 'cursor');
  return documentsReply(call, `${call.db}.$cmd.listIndexes.${name}`, indexes, cursorOptions ? batchSizeField(cursorOptions) : undefined);
}

async function dropIndexes(call: Invocation): Promise<Document> {
  const name = collectionName(call);
  const state = call.client.store.collection(call.db, name);
  if (!state) fail(26, 'NamespaceNotFound', `ns not found ${call.db}.${name}`);
  const nIndexesWas = state.indexes.size;
  const coll = collection(call);
  const current = await coll.listIndexes();
  const which = call.command.index;
  let names: string[];
  if (which === '*') names = current.map((i) => i.name).filter((n) => n !== '_id_');
  else if (typeof which === 'string') names = [which];
  else if (Array.isArray(which)) names = which.map(String);
  else if (isPlainObject(which)) {
    const found = current.find((i) => JSON.stringify(i.key) === JSON.stringify(which));
    if (!found) fail(27, 'IndexNotFound', `can't find index with key: ${JSON.stringify(which)}`);
    names = [found.name];
  } else fail(14, 'TypeMismatch', "dropIndexes requires 'index'");
  for (const index of names) {
    if (index === '_id_') fail(72, 'InvalidOptions', 'cannot drop _id index');
    if (!current.some((i) => i.name === index)) fail(27, 'IndexNotFound', `index not found with name [${index}]`);
  }
  for (const index of names) await coll.dropIndex(index);
  return { nIndexesWas, ok: 1 };
}

function collStats(call: Invocation): Promise<Document> {
  const name = collectionName(call);
  return collectionStats(`${call.db}.${name}`, call.client.store.collection(call.db, name), statsScale(call.command));
}

async function dbStats(call: Invocation): Promise<Document> {
  const scale = statsScale(call.command);
  const names = await call.client.db(call.db).getCollectionNames();
  const states = names.map((name) => call.client.store.collection(call.db, name)).filter((state) => state !== undefined);
  return databaseStats(call.db, states, scale);
}

// ---- sessions and transactions ----

async function endSessions(call: Invocation): Promise<Document> {
  const list = call.command[call.name];
  if (Array.isArray(list)) {
    for (const lsid of list) {
      const key = sessionKey(call.connection.cluster ?? call.server.defaultCluster, lsid);
      if (key) await call.server.sessions.end(key);
    }
  }
  return { ok: 1 };
}

async function commitTransaction(call: Invocation): Promise<Document> {
  await call.server.sessions.commit(call.sessionKey, call.command);
  return { ok: 1 };
}

async function abortTransaction(call: Invocation): Promise<Document> {
  await call.server.sessions.abort(call.sessionKey, call.command);
  return { ok: 1 };
}

const handlers: Record<string, Handler> = {
  hello,
  isMaster: hello,
  ismaster: hello,
  ping: () => ({ ok: 1 }),
  buildInfo,
  buildinfo: buildInfo,
  getParameter,
  whatsmyuri: (call) => ({ you: call.connection.me, ok: 1 }),
  connectionStatus: () => ({ authInfo: { authenticatedUsers: [], authenticatedUserRoles: [] }, ok: 1 }),
  hostInfo: () => ({ system: { currentTime: new Date() }, os: {}, extra: {}, ok: 1 }),
  endSessions,
  killCursors,
  getMore,
  listDatabases,
  listCollections,
  create,
  drop,
  dropDatabase,
  createIndexes,
  listIndexes,
  dropIndexes,
  collStats,
  dbStats,
  serverStatus,
  top,
  renameCollection,
  collMod,
  find,
  insert,
  update,
  delete: remove,
  findAndModify,
  findandmodify: findAndModify,
  aggregate,
  count,
  distinct,
  explain,
  commitTransaction,
  abortTransaction,
};

/**
 * Commands allowed inside a multi-document transaction (the rest are refused there, as MongoDB does).
 * `count` is not one of them in MongoDB either: drivers count in a transaction with an aggregate
 * (countDocuments).
 */
const transactional = new Set(['find', 'getMore', 'insert', 'update', 'delete', 'findAndModify', 'findandmodify', 'aggregate', 'distinct', 'killCursors', 'create', 'createIndexes']);

/**
 * A find, aggregate or distinct at read concern `snapshot` outside a transaction: it reads as of its
 * `atClusterTime` (an event's or reply's time: the increment is the commit's sequence number), or as of
 * now, whose time the reply reports so the session's next reads see the same snapshot.
 */
function snapshotRead(call: Invocation): { read: SnapshotRead; atClusterTime: Timestamp } | undefined {
  const readConcern = call.command.readConcern;
  if (!isPlainObject(readConcern) || readConcern.level !== 'snapshot' || !['find', 'aggregate', 'distinct'].includes(call.name)) return undefined;
  const store = call.client.store;
  const last = store.lastCommit();
  const at = readConcern.atClusterTime;
  if (at !== undefined && !(at instanceof Timestamp)) fail(14, 'TypeMismatch', "BSON field 'readConcern.atClusterTime' is the wrong type, expected type 'timestamp'");
  // A time after the last commit reads the last commit: nothing else can be there yet.
  const seq = at ? Math.min(at.i, last.seq) : last.seq;
  if (call.name === 'aggregate' && Array.isArray(call.command.pipeline) && (call.command.pipeline as unknown[]).some((stage) => isPlainObject(stage) && ('$out' in stage || '$merge' in stage))) {
    fail(72, 'InvalidOptions', '$out and $merge cannot run at read concern snapshot outside a transaction');
  }
  return { read: new SnapshotRead(seq), atClusterTime: at ?? commitTimestamp(seq, store.commitTime(seq) ?? last.time) };
}

/** The commands MongoDB runs at read concern `snapshot` outside a transaction (snapshot reads). */
const snapshotReads = new Set(['find', 'aggregate', 'distinct', 'getMore', 'killCursors']);

/**
 * Read concern `snapshot` outside a transaction is for reads only: a write, a catalog listing or any other
 * command refuses it, as MongoDB's do (InvalidOptions), rather than running at another read concern.
 */
function checkSnapshotReadConcern(name: string, command: Document): void {
  const readConcern = command.readConcern;
  if (command.autocommit === false || !isPlainObject(readConcern) || readConcern.level !== 'snapshot' || snapshotReads.has(name)) return;
  fail(72, 'InvalidOptions', `Command ${name} does not support { readConcern: { level: "snapshot" } } :: caused by :: read concern snapshot is supported only by find, aggregate and distinct outside a transaction`);
}

/**
 * A write concern asking for more members than this one-member replica set has: the write is done here,
 * and the reply says the concern cannot be met, as MongoDB's primary answers (UnsatisfiableWriteConcern).
 */
function withWriteConcernError(command: Document, reply: Document): Document {
  const concern = command.writeConcern;
  const w = isPlainObject(concern) ? concern.w : undefined;
  const members = w instanceof Long ? w.toNumber() : w;
  if (reply.ok !== 1 || typeof members !== 'number' || members <= 1) return reply;
  return { ...reply, writeConcernError: { code: 100, codeName: 'UnsatisfiableWriteConcern', errmsg: 'Not enough data-bearing nodes', errInfo: { writeConcern: concern } } };
}

/** Runs one command and answers its reply document (errors are thrown; the server turns them into replies). */
export async function runCommand(context: CommandContext): Promise<Document> {
  const name = Object.keys(context.command)[0];
  // Own properties only: `constructor`, `toString` and the like are not commands.
  const handler = name !== undefined && Object.hasOwn(handlers, name) ? handlers[name] : undefined;
  if (!handler || name === undefined) fail(59, 'CommandNotFound', `no such command: '${name ?? ''}'`);
  checkMaxTimeMS(context.command);
  if (!context.db && name !== 'hello' && name !== 'isMaster' && name !== 'ismaster') fail(73, 'InvalidNamespace', "the command names no database ($db)");
  const { server, connection, command } = context;
  const cluster = connection.cluster ?? (name === 'hello' || name === 'isMaster' || name === 'ismaster' ? server.clusterOf(command) : server.defaultCluster);
  const client = server.clientFor(cluster);
  const key = sessionKey(cluster, command.lsid);
  const call: Invocation = { ...context, name, client, sessionKey: key };
  checkSnapshotReadConcern(name, command);
  if (name !== 'commitTransaction' && name !== 'abortTransaction') {
    if (command.autocommit === false && !transactional.has(name)) fail(263, 'OperationNotSupportedInTransaction', `Cannot run '${name}' in a multi-document transaction.`);
    call.session = await server.sessions.forCommand(client, key, command);
  }
  const snapshot = call.session ? undefined : snapshotRead(call);
  if (snapshot) call.session = snapshot.read;
  const started = performance.now();
  try {
    const reply = withWriteConcernError(command, await handler(call));
    if (!snapshot) return reply;
    // Where the driver finds the snapshot's time for the session's next reads: the cursor, or (distinct) the reply.
    if (isPlainObject(reply.cursor)) return { ...reply, cursor: { ...reply.cursor, atClusterTime: snapshot.atClusterTime } };
    return { ...reply, atClusterTime: snapshot.atClusterTime };
  } finally {
    server.metrics.count(cluster, context.db, command, (performance.now() - started) * 1000);
  }
}
