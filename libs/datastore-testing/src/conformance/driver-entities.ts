/**
 * The unified format's entities as the official MongoDB driver's own objects, for targets reached over the
 * wire: one MongoClient per client entity with command monitoring on, the operations called as a user's
 * application calls them (every argument passed on, batchSize and allowDiskUse included), and the command
 * events each client observes recorded for `expectEvents`. Seeding and `outcome` stay with the runner's
 * internal client, so what these clients observe is only what the case's operations sent.
 */
import {
  type AnyBulkWriteOperation,
  type Collection,
  type CommandFailedEvent,
  type CommandStartedEvent,
  type CommandSucceededEvent,
  type Db,
  type IndexSpecification,
  MongoBulkWriteError,
  MongoClient,
  type MongoClientOptions,
  MongoError,
  MongoServerError,
  ReadPreference,
} from 'mongodb';
import { type Document } from '@tessera/datastore';
import { type ObservedEvent } from './events';

/** An error as the runner checks it, from whichever side raised it. */
export interface ErrorView {
  message: string;
  code?: number;
  codeName?: string;
  isClientError: boolean;
  /** A bulk write's partial result. */
  result?: unknown;
  /** The server's whole error reply (keyPattern, keyValue, errInfo...), when the error came from one. */
  errorResponse?: Document;
}

/** Raised for what a case uses that this runner cannot do: the case is skipped with the message. */
export class Skip extends Error {}

/**
 * Commands whose events a test runner never reports unless `observeSensitiveCommands` says so: their
 * bodies carry credentials, and drivers redact them.
 */
const SENSITIVE_COMMANDS = new Set(['hello', 'ismaster', 'saslstart', 'saslcontinue', 'getnonce', 'authenticate', 'createuser', 'updateuser', 'copydbgetnonce', 'copydbsaslstart', 'copydb']);

interface ClientEntity {
  client: MongoClient;
  events: ObservedEvent[];
}

export interface DriverEntities {
  clients: Map<string, ClientEntity>;
  databases: Map<string, Db>;
  collections: Map<string, Collection>;
  /** Entities whose options the data-access API lacks, with the reason: cases using them are skipped. */
  unsupported: Map<string, string>;
  /** Set once the case's operations are done: events after it (endSessions on close) are not the case's. */
  recording: boolean;
}

function readPreferenceOf(spec: unknown): ReadPreference | undefined {
  if (!spec || typeof spec !== 'object') return undefined;
  const { mode, tagSets, maxStalenessSeconds } = spec as { mode: string; tagSets?: Document[]; maxStalenessSeconds?: number };
  return new ReadPreference(mode as ConstructorParameters<typeof ReadPreference>[0], tagSets as ConstructorParameters<typeof ReadPreference>[1], maxStalenessSeconds !== undefined ? { maxStalenessSeconds } : undefined);
}

/** Database and collection options of the unified format, as the driver takes them. */
function handleOptions(spec: Document | undefined): Document {
  if (!spec) return {};
  const out: Document = {};
  if (spec.readPreference) out.readPreference = readPreferenceOf(spec.readPreference);
  if (spec.readConcern) out.readConcern = spec.readConcern;
  if (spec.writeConcern) out.writeConcern = spec.writeConcern;
  return out;
}

function record(entity: ClientEntity, entities: DriverEntities, observe: Set<string>, ignore: Set<string>, sensitive: boolean) {
  return (type: ObservedEvent['type']) => (event: CommandStartedEvent | CommandSucceededEvent | CommandFailedEvent) => {
    if (!entities.recording || !observe.has(type) || ignore.has(event.commandName)) return;
    if (!sensitive && SENSITIVE_COMMANDS.has(event.commandName.toLowerCase())) return;
    entity.events.push({ type, event });
  };
}

/** Opens the case's clients at `uri` and builds its databases and collections over them. */
export function buildDriverEntities(
  uri: string,
  createEntities: Document[],
  readConcernUnsupported: (level: unknown) => string | undefined,
  clientOptions: MongoClientOptions = {},
): DriverEntities {
  const entities: DriverEntities = { clients: new Map(), databases: new Map(), collections: new Map(), unsupported: new Map(), recording: true };
  for (const definition of createEntities) {
    const [kind, spec] = Object.entries(definition)[0] as [string, Document];
    const id = String(spec.id);
    if (kind === 'client') {
      const options: MongoClientOptions = { monitorCommands: true, bsonRegExp: true, ...((spec.uriOptions as MongoClientOptions | undefined) ?? {}), ...clientOptions };
      const entity: ClientEntity = { client: new MongoClient(uri, options), events: [] };
      const on = record(entity, entities, new Set((spec.observeEvents as string[] | undefined) ?? []), new Set((spec.ignoreCommandMonitoringEvents as string[] | undefined) ?? []), spec.observeSensitiveCommands === true);
      entity.client.on('commandStarted', on('commandStartedEvent'));
      entity.client.on('commandSucceeded', on('commandSucceededEvent'));
      entity.client.on('commandFailed', on('commandFailedEvent'));
      entities.clients.set(id, entity);
    } else if (kind === 'database') {
      const client = entities.clients.get(String(spec.client));
      if (!client) throw new Skip(`database ${id} refers to an unknown client`);
      entities.databases.set(id, client.client.db(String(spec.databaseName), handleOptions(spec.databaseOptions as Document | undefined)));
    } else if (kind === 'collection') {
      const db = entities.databases.get(String(spec.database));
      if (!db) throw new Skip(`collection ${id} refers to an unknown database`);
      const options = (spec.collectionOptions as Document | undefined) ?? {};
      const unsupported = readConcernUnsupported((options.readConcern as Document | undefined)?.level);
      if (unsupported) entities.unsupported.set(id, unsupported);
      entities.collections.set(id, db.collection(String(spec.collectionName), handleOptions(options)));
    } else {
      throw new Skip(`entity type ${kind} is not supported`);
    }
  }
  return entities;
}

export async function closeDriverEntities(entities: DriverEntities): Promise<void> {
  entities.recording = false;
  await Promise.all([...entities.clients.values()].map((c) => c.client.close()));
}

/** The operation's arguments as the driver's options: everything but what names the operation's subject. */
function optionsOf(a: Document, subject: string[]): Document {
  const out: Document = {};
  for (const [key, value] of Object.entries(a)) if (!subject.includes(key) && key !== 'session') out[key] = value;
  return out;
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

async function executeOnDatabase(database: Db, name: string, a: Document): Promise<unknown> {
  if (name === 'dropCollection') return database.dropCollection(String(a.collection), optionsOf(a, ['collection']));
  if (name === 'createCollection') return database.createCollection(String(a.collection), optionsOf(a, ['collection'])).then(() => undefined);
  if (name === 'aggregate') return database.aggregate(a.pipeline as Document[], optionsOf(a, ['pipeline'])).toArray();
  throw new Skip(`database operation ${name} is not supported`);
}

/** Runs one operation through the driver, every argument passed on as the driver takes it. */
export async function executeOnDriver(op: { name: string; object: string; arguments?: Document }, entities: DriverEntities): Promise<unknown> {
  const a = op.arguments ?? {};
  const unsupported = entities.unsupported.get(op.object);
  if (unsupported) throw new Skip(unsupported);
  const database = entities.databases.get(op.object);
  if (database) return executeOnDatabase(database, op.name, a);
  const collection = entities.collections.get(op.object);
  if (!collection) throw new Skip(`${op.object} is no collection entity this runner built`);
  const filter = (a.filter as Document | undefined) ?? {};
  switch (op.name) {
    case 'find':
      return collection.find(filter, optionsOf(a, ['filter'])).toArray();
    case 'findOne':
      return collection.findOne(filter, optionsOf(a, ['filter']));
    case 'aggregate':
      return collection.aggregate(a.pipeline as Document[], optionsOf(a, ['pipeline'])).toArray();
    case 'countDocuments':
      return collection.countDocuments(filter, optionsOf(a, ['filter']));
    case 'count':
      return collection.count(filter, optionsOf(a, ['filter']));
    case 'estimatedDocumentCount':
      return collection.estimatedDocumentCount(optionsOf(a, []));
    case 'distinct':
      return collection.distinct(String(a.fieldName), filter, optionsOf(a, ['fieldName', 'filter']));
    case 'insertOne':
      return collection.insertOne(a.document as Document, optionsOf(a, ['document']));
    case 'insertMany':
      return collection.insertMany(a.documents as Document[], optionsOf(a, ['documents']));
    case 'updateOne':
      return collection.updateOne(filter, a.update as Document, optionsOf(a, ['filter', 'update']));
    case 'updateMany':
      return collection.updateMany(filter, a.update as Document, optionsOf(a, ['filter', 'update']));
    case 'replaceOne':
      return collection.replaceOne(filter, a.replacement as Document, optionsOf(a, ['filter', 'replacement']));
    case 'deleteOne':
      return collection.deleteOne(filter, optionsOf(a, ['filter']));
    case 'deleteMany':
      return collection.deleteMany(filter, optionsOf(a, ['filter']));
    case 'findOneAndUpdate':
    case 'findOneAndReplace': {
      const options = { ...optionsOf(a, ['filter', 'update', 'replacement', 'returnDocument']), ...(typeof a.returnDocument === 'string' ? { returnDocument: a.returnDocument.toLowerCase() as 'before' | 'after' } : {}) };
      return op.name === 'findOneAndUpdate' ? collection.findOneAndUpdate(filter, a.update as Document, options) : collection.findOneAndReplace(filter, a.replacement as Document, options);
    }
    case 'findOneAndDelete':
      return collection.findOneAndDelete(filter, optionsOf(a, ['filter']));
    case 'bulkWrite':
      return collection.bulkWrite(a.requests as AnyBulkWriteOperation[], optionsOf(a, ['requests']));
    case 'createIndex':
      return collection.createIndex(a.keys as IndexSpecification, optionsOf(a, ['keys']));
    default:
      throw new Skip(`operation ${op.name} is not supported`);
  }
}

/** A driver error as the runner checks it. */
export function driverErrorView(error: unknown): ErrorView | undefined {
  if (!(error instanceof MongoError)) return undefined;
  const server = error instanceof MongoServerError ? error : undefined;
  return {
    message: error.message,
    code: typeof error.code === 'number' ? error.code : undefined,
    codeName: server?.codeName,
    isClientError: !server && !(error instanceof MongoBulkWriteError),
    result: error instanceof MongoBulkWriteError ? error.result : undefined,
    errorResponse: server?.errorResponse,
  };
}

/** The events the entity `client` observed, for `expectEvents`. */
export function observedEvents(entities: DriverEntities, client: string): ObservedEvent[] | undefined {
  return entities.clients.get(client)?.events;
}
