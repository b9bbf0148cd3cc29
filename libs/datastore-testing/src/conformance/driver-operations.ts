/**
 * The unified format's operations, called through the official driver as a user's application calls them
 * (every argument passed on, batchSize and allowDiskUse included): CRUD, index and collection management,
 * runCommand and command cursors, sessions and transactions (withTransaction's callback runs the case's own
 * operations), change streams, and the test runner's assertions on sessions, collections and indexes. What
 * the runner cannot do is a Skip naming it.
 */
import {
  type AbstractCursor,
  type AnyBulkWriteOperation,
  ChangeStream,
  type ClientSession,
  type Collection,
  type Db,
  type IndexSpecification,
  type MongoClient,
  type MongoClientOptions,
  type RunCommandCursor,
} from 'mongodb';
import { type Document } from '@tessera/datastore';
import { addDriverEntities, type DriverEntities, handleOptions, Skip } from './driver-entities';

/** A failed assertion of the test runner's own operations (assertCollectionExists...): the case fails. */
export class CaseFailure extends Error {}

/** What an operation needs besides the entities: the runner's nested execution and an internal client. */
export interface DriverContext {
  uri: string;
  /** Runs one operation of a withTransaction callback with the case's own checks (CaseFailure otherwise). */
  runNested(op: DriverOperation): Promise<void>;
  /** A client outside the case's entities, for the runner's assertions (its commands are not observed). */
  internalClient(): MongoClient;
  readConcernUnsupported(level: unknown): string | undefined;
  /** The target has no secondary to select (a one-member replica set). */
  noSecondary: boolean;
}

export interface DriverOperation {
  name: string;
  object: string;
  arguments?: Document;
  saveResultAsEntity?: string;
}

/**
 * Where the Node.js driver is known not to do what the unified tests expect of a driver (its own unified
 * runner lists them): what the server does is still checked, the driver's part is set aside, with why.
 */
export const DRIVER_DEVIATIONS: Record<string, { clientOptions?: MongoClientOptions; uncheckedEvents?: string }> = {};
for (const via of ['insertOne', 'insertMany', 'bulkWrite']) {
  // The driver gives a null _id a new ObjectId before sending unless forceServerObjectId is set (NODE-6468).
  DRIVER_DEVIATIONS[`inserting _id with type null via ${via}`] = { clientOptions: { forceServerObjectId: true } };
}
for (const op of ['InsertMany', 'FindOneAndUpdate', 'FindOneAndReplace', 'BulkWrite', 'Aggregate with $out']) {
  DRIVER_DEVIATIONS[`${op} passes bypassDocumentValidation: false`] = {
    uncheckedEvents: 'command monitoring events: the Node.js driver sends bypassDocumentValidation only when true (NODE-6484)',
  };
}

/** Operations of the Atlas Search index API: Atlas's search nodes, which neither App Services nor Tessera serve. */
const SEARCH_INDEX_OPERATIONS = new Set(['createSearchIndex', 'createSearchIndexes', 'dropSearchIndex', 'listSearchIndexes', 'updateSearchIndex']);

function sessionOf(entities: DriverEntities, id: unknown): ClientSession | undefined {
  if (id === undefined) return undefined;
  const session = typeof id === 'string' ? entities.sessions.get(id) : undefined;
  if (!session) throw new Skip(`session ${JSON.stringify(id)} is no session entity this runner built`);
  return session;
}

/** The operation's arguments as the driver's options: everything but what names its subject, the session resolved. */
function optionsOf(a: Document, subject: string[], entities: DriverEntities): Document {
  const out: Document = {};
  for (const [key, value] of Object.entries(a)) if (!subject.includes(key) && key !== 'session') out[key] = value;
  const session = sessionOf(entities, a.session);
  if (session) out.session = session;
  if (out.readPreference) out.readPreference = handleOptions({ readPreference: out.readPreference }).readPreference;
  return out;
}

/**
 * Opens a change stream as the format asks: its `aggregate` is sent now (the driver's own is lazy, sent at
 * the first iteration), so an error opening it is the operation's and its events come in order.
 */
async function openChangeStream(stream: ChangeStream): Promise<ChangeStream> {
  const cursor = stream as unknown as { cursor: { cursorInit(): Promise<void> } };
  await cursor.cursor.cursorInit();
  return stream;
}

async function openCursor(cursor: AbstractCursor): Promise<AbstractCursor> {
  await (cursor as unknown as { cursorInit(): Promise<void> }).cursorInit();
  return cursor;
}

const TRANSACTION_STATES: Record<string, string> = {
  NO_TRANSACTION: 'none',
  STARTING_TRANSACTION: 'starting',
  TRANSACTION_IN_PROGRESS: 'in_progress',
  TRANSACTION_COMMITTED: 'committed',
  TRANSACTION_COMMITTED_EMPTY: 'committed',
  TRANSACTION_ABORTED: 'aborted',
};

function expect(condition: boolean, message: string): void {
  if (!condition) throw new CaseFailure(message);
}

function lastTwoLsids(entities: DriverEntities, client: string): [unknown, unknown] {
  const started = entities.clients.get(client)?.started ?? [];
  expect(started.length >= 2, `${client} started fewer than two commands`);
  const [a, b] = started.slice(-2).map((e) => (e.command.lsid as Document | undefined)?.id as { toString(encoding: string): string } | undefined);
  return [a?.toString('hex'), b?.toString('hex')];
}

async function collectionNames(client: MongoClient, database: string): Promise<string[]> {
  return (await client.db(database).listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
}

async function indexNames(client: MongoClient, database: string, collection: string): Promise<string[]> {
  if (!(await collectionNames(client, database)).includes(collection)) return [];
  return (await client.db(database).collection(collection).listIndexes().toArray()).map((i: Document) => String(i.name));
}

async function executeOnTestRunner(name: string, a: Document, entities: DriverEntities, context: DriverContext): Promise<unknown> {
  switch (name) {
    case 'createEntities':
      addDriverEntities(entities, context.uri, a.entities as Document[], (level) => context.readConcernUnsupported(level), {}, context.noSecondary);
      return undefined;
    case 'assertSessionTransactionState': {
      const state = TRANSACTION_STATES[(sessionOf(entities, a.session) as unknown as { transaction: { state: string } }).transaction.state];
      expect(state === a.state, `session ${String(a.session)} is in transaction state ${state}, expected ${String(a.state)}`);
      return undefined;
    }
    case 'assertSessionPinned':
    case 'assertSessionUnpinned': {
      const pinned = sessionOf(entities, a.session)?.isPinned === true;
      expect(pinned === (name === 'assertSessionPinned'), `session ${String(a.session)} is ${pinned ? '' : 'not '}pinned`);
      return undefined;
    }
    case 'assertSessionDirty':
    case 'assertSessionNotDirty': {
      const dirty = (sessionOf(entities, a.session) as unknown as { serverSession?: { isDirty: boolean } }).serverSession?.isDirty === true;
      expect(dirty === (name === 'assertSessionDirty'), `session ${String(a.session)} is ${dirty ? '' : 'not '}dirty`);
      return undefined;
    }
    case 'assertSameLsidOnLastTwoCommands':
    case 'assertDifferentLsidOnLastTwoCommands': {
      const [x, y] = lastTwoLsids(entities, String(a.client));
      expect(x !== undefined && y !== undefined && (x === y) === (name === 'assertSameLsidOnLastTwoCommands'), `the last two commands of ${String(a.client)} sent lsids ${String(x)} and ${String(y)}`);
      return undefined;
    }
    case 'assertCollectionExists':
    case 'assertCollectionNotExists': {
      const exists = (await collectionNames(context.internalClient(), String(a.databaseName))).includes(String(a.collectionName));
      expect(exists === (name === 'assertCollectionExists'), `collection ${String(a.databaseName)}.${String(a.collectionName)} ${exists ? 'exists' : 'does not exist'}`);
      return undefined;
    }
    case 'assertIndexExists':
    case 'assertIndexNotExists': {
      const exists = (await indexNames(context.internalClient(), String(a.databaseName), String(a.collectionName))).includes(String(a.indexName));
      expect(exists === (name === 'assertIndexExists'), `index ${String(a.indexName)} of ${String(a.databaseName)}.${String(a.collectionName)} ${exists ? 'exists' : 'does not exist'}`);
      return undefined;
    }
    case 'assertNumberConnectionsCheckedOut':
      throw new Skip('assertNumberConnectionsCheckedOut: connection pool (CMAP) bookkeeping is the driver\'s, not the server\'s');
    default:
      throw new Skip(`test runner operation ${name} is not supported`);
  }
}

async function executeOnSession(session: ClientSession, name: string, a: Document, context: DriverContext): Promise<unknown> {
  switch (name) {
    case 'startTransaction':
      session.startTransaction(handleOptions(a));
      return undefined;
    case 'commitTransaction':
      return session.commitTransaction().then(() => undefined);
    case 'abortTransaction':
      return session.abortTransaction().then(() => undefined);
    case 'endSession':
      return session.endSession();
    case 'withTransaction': {
      const callback = (a.callback as DriverOperation[] | undefined) ?? [];
      await session.withTransaction(async () => {
        for (const op of callback) await context.runNested(op);
      }, handleOptions(a));
      return undefined;
    }
    case 'getSnapshotTime':
      return (session as unknown as { snapshotTime?: unknown }).snapshotTime;
    default:
      throw new Skip(`session operation ${name} is not supported`);
  }
}

async function executeOnClient(client: MongoClient, name: string, a: Document, entities: DriverEntities): Promise<unknown> {
  switch (name) {
    case 'listDatabases':
    case 'listDatabaseObjects':
      return (await client.db('admin').admin().listDatabases(optionsOf(a, [], entities))).databases;
    case 'listDatabaseNames':
      return (await client.db('admin').admin().listDatabases({ ...optionsOf(a, [], entities), nameOnly: true })).databases.map((d) => d.name);
    case 'createChangeStream':
      return openChangeStream(client.watch((a.pipeline as Document[] | undefined) ?? [], optionsOf(a, ['pipeline'], entities)));
    default:
      throw new Skip(`client operation ${name} is not supported`);
  }
}

/**
 * A command cursor as the format defines runCursorCommand's and createCommandCursor's arguments: the
 * command goes as given; `batchSize` and `maxTimeMS` are its getMores' (the driver's setBatchSize and
 * setMaxTimeMS), not options of the command.
 */
function commandCursor(database: Db, a: Document, entities: DriverEntities): RunCommandCursor {
  const cursor = database.runCursorCommand(a.command as Document, optionsOf(a, ['command', 'commandName', 'batchSize', 'maxTimeMS'], entities));
  if (typeof a.batchSize === 'number') cursor.setBatchSize(a.batchSize);
  if (typeof a.maxTimeMS === 'number') cursor.setMaxTimeMS(a.maxTimeMS);
  return cursor;
}

async function executeOnDatabase(database: Db, name: string, a: Document, entities: DriverEntities): Promise<unknown> {
  switch (name) {
    case 'dropCollection':
      return database.dropCollection(String(a.collection), optionsOf(a, ['collection'], entities));
    case 'createCollection':
      return database.createCollection(String(a.collection), optionsOf(a, ['collection'], entities)).then(() => undefined);
    case 'modifyCollection': {
      // The Node.js driver has no helper for collMod: its own unified runner sends the command, as here.
      const { collection, session, ...changes } = a;
      const options = optionsOf({ session }, [], entities);
      return database.command({ collMod: String(collection), ...changes }, options).then(() => undefined);
    }
    case 'aggregate':
      return database.aggregate(a.pipeline as Document[], optionsOf(a, ['pipeline'], entities)).toArray();
    case 'listCollections':
    case 'listCollectionObjects':
      return database.listCollections((a.filter as Document | undefined) ?? {}, optionsOf(a, ['filter'], entities)).toArray();
    case 'listCollectionNames':
      return (await database.listCollections((a.filter as Document | undefined) ?? {}, { ...optionsOf(a, ['filter'], entities), nameOnly: true }).toArray()).map((c) => c.name);
    case 'runCommand':
      return database.command(a.command as Document, optionsOf(a, ['command', 'commandName'], entities));
    case 'runCursorCommand':
      return commandCursor(database, a, entities).toArray();
    case 'createCommandCursor': {
      if (a.cursorType !== undefined) throw new Skip(`createCommandCursor with cursorType ${JSON.stringify(a.cursorType)}: tailable cursors are not offered by the datastore`);
      return openCursor(commandCursor(database, a, entities));
    }
    case 'createChangeStream':
      return openChangeStream(database.watch((a.pipeline as Document[] | undefined) ?? [], optionsOf(a, ['pipeline'], entities)));
    default:
      throw new Skip(`database operation ${name} is not supported`);
  }
}

async function executeOnCollection(collection: Collection, name: string, a: Document, entities: DriverEntities): Promise<unknown> {
  const filter = (a.filter as Document | undefined) ?? {};
  const options = (...subject: string[]) => optionsOf(a, subject, entities);
  switch (name) {
    case 'find':
      return collection.find(filter, options('filter')).toArray();
    case 'findOne':
      return collection.findOne(filter, options('filter'));
    case 'aggregate':
      return collection.aggregate(a.pipeline as Document[], options('pipeline')).toArray();
    case 'countDocuments':
      return collection.countDocuments(filter, options('filter'));
    case 'count':
      return collection.count(filter, options('filter'));
    case 'estimatedDocumentCount':
      return collection.estimatedDocumentCount(options());
    case 'distinct':
      return collection.distinct(String(a.fieldName), filter, options('fieldName', 'filter'));
    case 'insertOne':
      return collection.insertOne(a.document as Document, options('document'));
    case 'insertMany':
      return collection.insertMany(a.documents as Document[], options('documents'));
    case 'updateOne':
      return collection.updateOne(filter, a.update as Document, options('filter', 'update'));
    case 'updateMany':
      return collection.updateMany(filter, a.update as Document, options('filter', 'update'));
    case 'replaceOne':
      return collection.replaceOne(filter, a.replacement as Document, options('filter', 'replacement'));
    case 'deleteOne':
      return collection.deleteOne(filter, options('filter'));
    case 'deleteMany':
      return collection.deleteMany(filter, options('filter'));
    case 'findOneAndUpdate':
    case 'findOneAndReplace': {
      const o = { ...options('filter', 'update', 'replacement', 'returnDocument'), ...(typeof a.returnDocument === 'string' ? { returnDocument: a.returnDocument.toLowerCase() as 'before' | 'after' } : {}) };
      return name === 'findOneAndUpdate' ? collection.findOneAndUpdate(filter, a.update as Document, o) : collection.findOneAndReplace(filter, a.replacement as Document, o);
    }
    case 'findOneAndDelete':
      return collection.findOneAndDelete(filter, options('filter'));
    case 'bulkWrite':
      return collection.bulkWrite(a.requests as AnyBulkWriteOperation[], options('requests'));
    case 'createIndex':
      return collection.createIndex(a.keys as IndexSpecification, options('keys'));
    case 'listIndexes':
      return collection.listIndexes(options()).toArray();
    case 'listIndexNames':
      return (await collection.listIndexes(options()).toArray()).map((i: Document) => String(i.name));
    case 'dropIndex':
      return collection.dropIndex(String(a.name), options('name'));
    case 'dropIndexes':
      return collection.dropIndexes(options());
    case 'drop':
      return collection.drop(options());
    case 'rename':
      return collection.rename(String(a.to), options('to')).then(() => undefined);
    case 'createChangeStream':
      return openChangeStream(collection.watch((a.pipeline as Document[] | undefined) ?? [], options('pipeline')));
    case 'mapReduce':
      throw new Skip('mapReduce: deprecated by MongoDB, gone from the Node.js driver 6, and never offered by App Services');
    default:
      if (SEARCH_INDEX_OPERATIONS.has(name)) throw new Skip(`${name}: Atlas Search indexes, which Tessera does not serve`);
      throw new Skip(`operation ${name} is not supported`);
  }
}

/** How long iterateUntilDocumentOrError waits for a change stream's next event. */
const ITERATION_TIMEOUT_MS = 5000;

async function executeOnIterable(iterable: ChangeStream | AbstractCursor, name: string): Promise<unknown> {
  switch (name) {
    case 'iterateUntilDocumentOrError': {
      // A change stream waits for its next event (a cursor's end is the end of its documents): an event
      // the server never sends fails the case after a while instead of blocking the run.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CaseFailure(`no document or error within ${ITERATION_TIMEOUT_MS / 1000} s`)), ITERATION_TIMEOUT_MS);
      });
      try {
        return await Promise.race([iterable.next(), late]);
      } finally {
        clearTimeout(timer);
      }
    }
    case 'iterateOnce':
      return iterable.tryNext();
    case 'close':
      await iterable.close();
      return undefined;
    default:
      throw new Skip(`${iterable instanceof ChangeStream ? 'change stream' : 'cursor'} operation ${name} is not supported`);
  }
}

/** Runs one operation through the driver on the entity it names, saving its result when the case asks. */
export async function executeOnDriver(op: DriverOperation, entities: DriverEntities, context: DriverContext): Promise<unknown> {
  const a = op.arguments ?? {};
  const unsupported = entities.unsupported.get(op.object);
  if (unsupported) throw new Skip(unsupported);
  if (SEARCH_INDEX_OPERATIONS.has(op.name)) throw new Skip(`${op.name}: Atlas Search indexes, which Tessera does not serve`);
  let result: unknown;
  const session = entities.sessions.get(op.object);
  const iterable = entities.iterables.get(op.object);
  const client = entities.clients.get(op.object);
  const database = entities.databases.get(op.object);
  const collection = entities.collections.get(op.object);
  if (op.object === 'testRunner') result = await executeOnTestRunner(op.name, a, entities, context);
  else if (session) result = await executeOnSession(session, op.name, a, context);
  else if (iterable) result = await executeOnIterable(iterable, op.name);
  else if (client) result = await executeOnClient(client.client, op.name, a, entities);
  else if (database) result = await executeOnDatabase(database, op.name, a, entities);
  else if (collection) result = await executeOnCollection(collection, op.name, a, entities);
  else throw new Skip(`${op.object} is no entity this runner built`);
  if (op.saveResultAsEntity) {
    if (result instanceof ChangeStream || (result && typeof (result as AbstractCursor).tryNext === 'function')) entities.iterables.set(op.saveResultAsEntity, result as ChangeStream | AbstractCursor);
    else entities.values.set(op.saveResultAsEntity, result);
  }
  return result;
}
