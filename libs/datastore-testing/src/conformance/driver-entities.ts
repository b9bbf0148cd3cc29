/**
 * The unified format's entities as the official MongoDB driver's own objects, for targets reached over the
 * wire: one MongoClient per client entity with command monitoring on, its databases, collections and
 * sessions, and the change streams and cursors operations save as entities. The command events each client
 * observes are recorded for `expectEvents`. Seeding and `outcome` stay with the runner's internal client,
 * so what these clients observe is only what the case's operations sent. The operations live in
 * driver-operations.ts.
 */
import {
  type AbstractCursor,
  type ChangeStream,
  type ClientSession,
  type ClientSessionOptions,
  type Collection,
  type CommandFailedEvent,
  type CommandStartedEvent,
  type CommandSucceededEvent,
  type Db,
  MongoBulkWriteError,
  MongoClient,
  type MongoClientOptions,
  MongoError,
  MongoServerError,
  ReadPreference,
} from 'mongodb';
import { deserialize, serialize } from 'bson';
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
  /** The error labels (TransientTransactionError, UnknownTransactionCommitResult...), server's and driver's. */
  labels: string[];
}

/** Raised for what a case uses that this runner cannot do: the case is skipped with the message. */
export class Skip extends Error {}

/**
 * Commands whose events a test runner never reports unless `observeSensitiveCommands` says so: their
 * bodies carry credentials, and drivers redact them.
 */
const SENSITIVE_COMMANDS = new Set(['hello', 'ismaster', 'saslstart', 'saslcontinue', 'getnonce', 'authenticate', 'createuser', 'updateuser', 'copydbgetnonce', 'copydbsaslstart', 'copydb']);

export interface ClientEntity {
  client: MongoClient;
  events: ObservedEvent[];
  /** Every command this client started, observed or not: the lsid assertions read the last two. */
  started: CommandStartedEvent[];
}

export interface DriverEntities {
  clients: Map<string, ClientEntity>;
  databases: Map<string, Db>;
  collections: Map<string, Collection>;
  sessions: Map<string, ClientSession>;
  /** Each session's lsid, taken when it started, so `$$sessionLsid` names it after it ended too. */
  lsids: Map<string, Document>;
  /** Change streams and command cursors an operation saved (`saveResultAsEntity`), for later iteration. */
  iterables: Map<string, ChangeStream | AbstractCursor>;
  /** Other results an operation saved, for `$$matchesEntity`. */
  values: Map<string, unknown>;
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

/** Database, collection and transaction options of the unified format, as the driver takes them. */
export function handleOptions(spec: Document | undefined): Document {
  if (!spec) return {};
  const out: Document = {};
  if (spec.readPreference) out.readPreference = readPreferenceOf(spec.readPreference);
  if (spec.readConcern) out.readConcern = spec.readConcern;
  if (spec.writeConcern) out.writeConcern = spec.writeConcern;
  if (spec.maxCommitTimeMS !== undefined) out.maxCommitTimeMS = spec.maxCommitTimeMS;
  return out;
}

function record(entity: ClientEntity, entities: DriverEntities, observe: Set<string>, ignore: Set<string>, sensitive: boolean) {
  return (type: ObservedEvent['type']) => (event: CommandStartedEvent | CommandSucceededEvent | CommandFailedEvent) => {
    if (!entities.recording) return;
    if (type === 'commandStartedEvent') entity.started.push(event as CommandStartedEvent);
    if (!observe.has(type) || ignore.has(event.commandName)) return;
    if (!sensitive && SENSITIVE_COMMANDS.has(event.commandName.toLowerCase())) return;
    // The command as it was sent: the driver mutates objects it shares with later commands (the client's
    // ReadConcern gets the next transaction's afterClusterTime), and the event holds them by reference.
    const sent = type === 'commandStartedEvent' ? { ...event, command: deserialize(serialize((event as CommandStartedEvent).command)) } : event;
    entity.events.push({ type, event: sent as typeof event });
  };
}

/** A session entity's options, transaction defaults included. */
function sessionOptionsOf(spec: Document | undefined): ClientSessionOptions {
  if (!spec) return {};
  const { defaultTransactionOptions, ...rest } = spec;
  return { ...rest, ...(defaultTransactionOptions ? { defaultTransactionOptions: handleOptions(defaultTransactionOptions as Document) } : {}) };
}

export function emptyDriverEntities(): DriverEntities {
  return { clients: new Map(), databases: new Map(), collections: new Map(), sessions: new Map(), lsids: new Map(), iterables: new Map(), values: new Map(), unsupported: new Map(), recording: true };
}

/** Builds the entities of `createEntities` (a file's, or the `createEntities` operation's) into `entities`. */
export function addDriverEntities(
  entities: DriverEntities,
  uri: string,
  createEntities: Document[],
  readConcernUnsupported: (level: unknown) => string | undefined,
  clientOptions: MongoClientOptions = {},
  noSecondary = false,
): void {
  for (const definition of createEntities) {
    const [kind, spec] = Object.entries(definition)[0] as [string, Document];
    const id = String(spec.id);
    if (kind === 'client') {
      if (spec.storeEventsAsEntities !== undefined) throw new Skip('storeEventsAsEntities (events kept as entities for a test thread) is not supported by this runner');
      const uriOptions = (spec.uriOptions as MongoClientOptions | undefined) ?? {};
      if (noSecondary && uriOptions.readPreference === 'secondary') {
        throw new Skip('a client reading from a secondary (readPreference secondary): the target is a one-member replica set, which has no secondary for the driver to select');
      }
      const options: MongoClientOptions = { monitorCommands: true, bsonRegExp: true, ...uriOptions, ...clientOptions };
      if (spec.serverApi !== undefined) options.serverApi = spec.serverApi as MongoClientOptions['serverApi'];
      const entity: ClientEntity = { client: new MongoClient(uri, options), events: [], started: [] };
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
    } else if (kind === 'session') {
      const client = entities.clients.get(String(spec.client));
      if (!client) throw new Skip(`session ${id} refers to an unknown client`);
      if ((spec.sessionOptions as Document | undefined)?.snapshotTime !== undefined) {
        throw new Skip('session option snapshotTime (a snapshot session starting at a given time): the Node.js driver 6.22 has no such option');
      }
      const session = client.client.startSession(sessionOptionsOf(spec.sessionOptions as Document | undefined));
      entities.sessions.set(id, session);
      if (session.id) entities.lsids.set(id, session.id);
    } else if (kind === 'bucket') {
      entities.unsupported.set(id, 'GridFS buckets: App Services offered no GridFS, and this runner has no GridFS operations');
    } else {
      throw new Skip(`entity type ${kind} is not supported`);
    }
  }
}

/** Opens the case's clients at `uri` and builds its databases, collections and sessions over them. */
export function buildDriverEntities(
  uri: string,
  createEntities: Document[],
  readConcernUnsupported: (level: unknown) => string | undefined,
  clientOptions: MongoClientOptions = {},
  noSecondary = false,
): DriverEntities {
  const entities = emptyDriverEntities();
  addDriverEntities(entities, uri, createEntities, readConcernUnsupported, clientOptions, noSecondary);
  return entities;
}

export async function closeDriverEntities(entities: DriverEntities): Promise<void> {
  entities.recording = false;
  for (const iterable of entities.iterables.values()) await iterable.close().catch(() => undefined);
  for (const session of entities.sessions.values()) await session.endSession().catch(() => undefined);
  await Promise.all([...entities.clients.values()].map((c) => c.client.close()));
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
    labels: error.errorLabels,
  };
}

/** The events the entity `client` observed, for `expectEvents`. */
export function observedEvents(entities: DriverEntities, client: string): ObservedEvent[] | undefined {
  return entities.clients.get(client)?.events;
}
