/**
 * The commands of the apps' wire endpoint, each turned into one remote data-access call as the
 * authenticated user (the same calls, rules and refusals as a client's `functions/call` on the data-source
 * service): find, aggregate, count, distinct, insert, update, delete, findAndModify, and cursors over their
 * results. Catalog commands list only the namespaces the service's rules name. Anything else (admin,
 * users, eval, index and collection management) is MongoDB's Unauthorized (13). This module must not
 * authenticate nor reach a store.
 */
import type { AppService } from '@tessera/app-config';
import { type Document, isPlainObject, WireCommandError } from '@tessera/datastore';
import { Long } from 'bson';

/** One call of the data-source service as the connection's user (action by its wire name). */
export type UserDataCall = (action: string, args: Document) => Promise<unknown>;

/** What a command runs with: the user's data calls, the service's rules, the connection's cursors. */
export interface AppWireCall {
  db: string;
  command: Document;
  service: AppService;
  call: UserDataCall;
  cursors: ConnectionCursors;
  /** The authenticated user, for connectionStatus. */
  userName: string;
}

/** Results waiting for getMore, per connection (a cursor never outlives or leaves its connection). */
export class ConnectionCursors {
  private readonly open = new Map<string, { ns: string; docs: unknown[]; at: number }>();
  private next = 1n;

  static readonly limit = 100;

  /** The first batch; the rest stays behind a cursor id (0 when nothing is left). */
  first(ns: string, docs: unknown[], batchSize: number | undefined): Document {
    const size = batchSize === undefined || batchSize <= 0 ? 101 : batchSize;
    if (docs.length <= size) return { cursor: { id: Long.ZERO, ns, firstBatch: docs }, ok: 1 };
    if (this.open.size >= ConnectionCursors.limit) fail(2, 'BadValue', `a connection may keep at most ${ConnectionCursors.limit} open cursors`);
    const id = this.next++;
    this.open.set(id.toString(), { ns, docs, at: size });
    return { cursor: { id: Long.fromBigInt(id), ns, firstBatch: docs.slice(0, size) }, ok: 1 };
  }

  more(id: unknown, ns: string, batchSize: number | undefined): Document {
    const key = id instanceof Long ? id.toString() : String(id);
    const cursor = this.open.get(key);
    if (!cursor) fail(43, 'CursorNotFound', `cursor id ${key} not found`);
    if (cursor.ns !== ns) fail(13, 'Unauthorized', `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`);
    const size = batchSize === undefined || batchSize <= 0 ? cursor.docs.length : batchSize;
    const batch = cursor.docs.slice(cursor.at, cursor.at + size);
    cursor.at += batch.length;
    const done = cursor.at >= cursor.docs.length;
    if (done) this.open.delete(key);
    return { cursor: { id: done ? Long.ZERO : Long.fromString(key), ns: cursor.ns, nextBatch: batch }, ok: 1 };
  }

  kill(ids: unknown[]): Document {
    const killed: Long[] = [];
    const notFound: Long[] = [];
    for (const id of ids) {
      const key = id instanceof Long ? id.toString() : String(id);
      (this.open.delete(key) ? killed : notFound).push(Long.fromString(key));
    }
    return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
  }
}

function fail(code: number, codeName: string, message: string): never {
  throw new WireCommandError(code, codeName, message);
}

function collectionOf(call: AppWireCall, name: string): string {
  const value = call.command[name];
  if (typeof value !== 'string' || value.length === 0) fail(73, 'InvalidNamespace', `collection name must be a non-empty string for ${name}`);
  return value;
}

function optionalDocument(command: Document, field: string): Document | undefined {
  const value = command[field];
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) fail(14, 'TypeMismatch', `'${field}' must be a document`);
  return value;
}

function optionalNumber(command: Document, field: string): number | undefined {
  const value = command[field];
  if (value === undefined || value === null) return undefined;
  const n = value instanceof Long ? value.toNumber() : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) fail(14, 'TypeMismatch', `'${field}' must be a number`);
  return n;
}

function list(command: Document, field: string): Document[] {
  const value = command[field];
  if (!Array.isArray(value)) fail(14, 'TypeMismatch', `'${field}' must be an array`);
  return value as Document[];
}

/** A count or id the data-access layer answers as Int32, Long or number. */
function toNumber(value: unknown): number {
  if (value instanceof Long) return value.toNumber();
  if (typeof value === 'object' && value !== null && 'valueOf' in value) return Number(value.valueOf());
  return Number(value ?? 0);
}

function isReplacement(update: unknown): update is Document {
  return isPlainObject(update) && !Object.keys(update).some((key) => key.startsWith('$'));
}

/** A failure of one write statement, as `writeErrors` reports it (see `wireError`). */
export type WriteFailure = (error: unknown) => { code: number; errmsg: string };

async function find(call: AppWireCall): Promise<Document> {
  const { command } = call;
  const collection = collectionOf(call, 'find');
  const limit = optionalNumber(command, 'limit');
  const args: Document = { database: call.db, collection, query: optionalDocument(command, 'filter') ?? {} };
  const projection = optionalDocument(command, 'projection');
  if (projection) args.project = projection;
  const sort = optionalDocument(command, 'sort');
  if (sort) args.sort = sort;
  const skip = optionalNumber(command, 'skip');
  if (skip) args.skip = skip;
  if (limit) args.limit = Math.abs(limit);
  const docs = (await call.call('find', args)) as Document[];
  const batchSize = command.singleBatch === true || (limit !== undefined && limit < 0) ? docs.length || 1 : optionalNumber(command, 'batchSize');
  return call.cursors.first(`${call.db}.${collection}`, docs, batchSize);
}

async function aggregate(call: AppWireCall): Promise<Document> {
  const { command } = call;
  const collection = collectionOf(call, 'aggregate');
  const pipeline = list(command, 'pipeline');
  if (pipeline.some((stage) => isPlainObject(stage) && '$changeStream' in stage)) fail(13, 'Unauthorized', 'change streams are not available on the app wire endpoint');
  const docs = (await call.call('aggregate', { database: call.db, collection, pipeline })) as Document[];
  const cursor = optionalDocument(command, 'cursor');
  return call.cursors.first(`${call.db}.${collection}`, docs, cursor ? optionalNumber(cursor, 'batchSize') : undefined);
}

async function count(call: AppWireCall): Promise<Document> {
  const { command } = call;
  const collection = collectionOf(call, 'count');
  const limit = optionalNumber(command, 'limit');
  const skip = optionalNumber(command, 'skip') ?? 0;
  const query = optionalDocument(command, 'query') ?? {};
  const n = toNumber(await call.call('count', { database: call.db, collection, query, ...(limit ? { limit: Math.abs(limit) + skip } : {}) }));
  return { n: Math.max(0, n - skip), ok: 1 };
}

async function distinct(call: AppWireCall): Promise<Document> {
  const { command } = call;
  const collection = collectionOf(call, 'distinct');
  if (typeof command.key !== 'string') fail(14, 'TypeMismatch', "distinct requires a string 'key'");
  const values = await call.call('distinct', { database: call.db, collection, key: command.key, query: optionalDocument(command, 'query') ?? {} });
  return { values, ok: 1 };
}

/** Runs write statements one at a time, so each refusal is reported at its own index (ordered stops there). */
async function statements(call: AppWireCall, field: string, failure: WriteFailure, run: (statement: Document, index: number) => Promise<void>): Promise<Document[]> {
  const writeErrors: Document[] = [];
  const ordered = call.command.ordered !== false;
  const each = list(call.command, field);
  for (let index = 0; index < each.length; index += 1) {
    try {
      if (!isPlainObject(each[index])) fail(14, 'TypeMismatch', `${field}.${index} must be a document`);
      await run(each[index], index);
    } catch (error) {
      writeErrors.push({ index, ...failure(error) });
      if (ordered) break;
    }
  }
  return writeErrors;
}

function writeReply(n: number, writeErrors: Document[], extra: Document = {}): Document {
  return { n, ...extra, ...(writeErrors.length ? { writeErrors } : {}), ok: 1 };
}

async function insert(call: AppWireCall, failure: WriteFailure): Promise<Document> {
  const collection = collectionOf(call, 'insert');
  let n = 0;
  const writeErrors = await statements(call, 'documents', failure, async (document) => {
    await call.call('insertOne', { database: call.db, collection, document });
    n += 1;
  });
  return writeReply(n, writeErrors);
}

async function update(call: AppWireCall, failure: WriteFailure): Promise<Document> {
  const collection = collectionOf(call, 'update');
  let n = 0;
  let nModified = 0;
  const upserted: Document[] = [];
  const writeErrors = await statements(call, 'updates', failure, async (statement, index) => {
    const query = optionalDocument(statement, 'q') ?? {};
    const upsert = statement.upsert === true;
    if (isReplacement(statement.u)) {
      if (statement.multi === true) fail(9, 'FailedToParse', 'multi update is not supported for replacement-style update');
      const existed = upsert ? toNumber(await call.call('count', { database: call.db, collection, query, limit: 1 })) > 0 : true;
      const value = (await call.call('findOneAndReplace', { database: call.db, collection, filter: query, update: statement.u, upsert, returnNewDocument: true })) as Document | null;
      if (value && !existed) upserted.push({ index, _id: value._id });
      else if (value) {
        n += 1;
        nModified += 1;
      }
      return;
    }
    if (!isPlainObject(statement.u) && !Array.isArray(statement.u)) fail(9, 'FailedToParse', 'Update argument must be either an object or an array');
    const args: Document = { database: call.db, collection, query, update: statement.u, upsert };
    if (statement.arrayFilters !== undefined) args.arrayFilters = statement.arrayFilters;
    const result = (await call.call(statement.multi === true ? 'updateMany' : 'updateOne', args)) as Document;
    n += toNumber(result.matchedCount);
    nModified += toNumber(result.modifiedCount);
    if (result.upsertedId !== undefined) upserted.push({ index, _id: result.upsertedId });
  });
  return writeReply(n + upserted.length, writeErrors, { nModified, ...(upserted.length ? { upserted } : {}) });
}

async function remove(call: AppWireCall, failure: WriteFailure): Promise<Document> {
  const collection = collectionOf(call, 'delete');
  let n = 0;
  const writeErrors = await statements(call, 'deletes', failure, async (statement) => {
    const limit = toNumber(statement.limit);
    if (limit !== 0 && limit !== 1) fail(9, 'FailedToParse', `The limit field in delete objects must be 0 or 1. Got ${limit}`);
    const result = (await call.call(limit === 1 ? 'deleteOne' : 'deleteMany', { database: call.db, collection, query: optionalDocument(statement, 'q') ?? {} })) as Document;
    n += toNumber(result.deletedCount);
  });
  return writeReply(n, writeErrors);
}

async function findAndModify(call: AppWireCall): Promise<Document> {
  const { command } = call;
  const collection = collectionOf(call, Object.keys(command)[0]);
  const args: Document = { database: call.db, collection, filter: optionalDocument(command, 'query') ?? {} };
  const sort = optionalDocument(command, 'sort');
  if (sort) args.sort = sort;
  const projection = optionalDocument(command, 'fields');
  if (projection) args.projection = projection;
  if (command.remove === true) {
    if (command.update !== undefined) fail(9, 'FailedToParse', 'Cannot specify both an update and remove=true');
    const value = (await call.call('findOneAndDelete', args)) as Document | null;
    return { lastErrorObject: { n: value ? 1 : 0 }, value, ok: 1 };
  }
  const u = command.update;
  if (u === undefined) fail(9, 'FailedToParse', 'Either an update or remove=true must be specified');
  const upsert = command.upsert === true;
  const existed = upsert ? toNumber(await call.call('count', { database: call.db, collection, query: args.filter, limit: 1 })) > 0 : true;
  Object.assign(args, { update: u, upsert, returnNewDocument: command.new === true });
  const value = (await call.call(isReplacement(u) ? 'findOneAndReplace' : 'findOneAndUpdate', args)) as Document | null;
  const upsertedNow = upsert && !existed;
  const lastErrorObject: Document = { n: value !== null || upsertedNow ? 1 : 0, updatedExisting: !upsertedNow && value !== null };
  if (upsertedNow && value && '_id' in value) lastErrorObject.upserted = value._id;
  return { lastErrorObject, value, ok: 1 };
}

/** The databases and collections the service's collection rules name (all a user can be given access to). */
function ruledNamespaces(service: AppService): { database: string; collection: string }[] {
  return service.collectionRules.map((rule) => ({ database: rule.database, collection: rule.collection }));
}

function listDatabases(call: AppWireCall): Document {
  const names = [...new Set(ruledNamespaces(call.service).map((ns) => ns.database))].sort();
  const nameOnly = call.command.nameOnly === true;
  const databases = names.map((name) => (nameOnly ? { name } : { name, sizeOnDisk: 0, empty: false }));
  return nameOnly ? { databases, ok: 1 } : { databases, totalSize: 0, totalSizeMb: 0, ok: 1 };
}

function listCollections(call: AppWireCall): Document {
  const names = [...new Set(ruledNamespaces(call.service).filter((ns) => ns.database === call.db).map((ns) => ns.collection))].sort();
  const filterName = optionalDocument(call.command, 'filter')?.name;
  const infos = names
    .filter((name) => filterName === undefined || name === filterName)
    .map((name) => (call.command.nameOnly === true ? { name, type: 'collection' } : { name, type: 'collection', options: {}, info: { readOnly: false } }));
  const cursor = optionalDocument(call.command, 'cursor');
  return call.cursors.first(`${call.db}.$cmd.listCollections`, infos, cursor ? optionalNumber(cursor, 'batchSize') : undefined);
}

/** Runs one command of an authenticated connection (handshake and SASL are the endpoint's). */
export async function runAppCommand(name: string, call: AppWireCall, failure: WriteFailure): Promise<Document> {
  switch (name) {
    case 'find':
      return find(call);
    case 'aggregate':
      return aggregate(call);
    case 'count':
      return count(call);
    case 'distinct':
      return distinct(call);
    case 'insert':
      return insert(call, failure);
    case 'update':
      return update(call, failure);
    case 'delete':
      return remove(call, failure);
    case 'findAndModify':
    case 'findandmodify':
      return findAndModify(call);
    case 'getMore':
      return call.cursors.more(call.command.getMore, `${call.db}.${String(call.command.collection)}`, optionalNumber(call.command, 'batchSize'));
    case 'killCursors':
      return call.cursors.kill(list(call.command, 'cursors'));
    case 'listDatabases':
      return listDatabases(call);
    case 'listCollections':
      return listCollections(call);
    case 'connectionStatus':
      return { authInfo: { authenticatedUsers: [{ user: call.userName, db: '$external' }], authenticatedUserRoles: [] }, ok: 1 };
    case 'whatsmyuri':
    case 'getParameter':
    case 'endSessions':
      return { ok: 1 };
    default:
      // Everything else needs privileges no app user has: admin, users and roles, eval, index and collection management.
      fail(13, 'Unauthorized', `not authorized on ${call.db} to execute command { ${name}: ... }`);
  }
}
