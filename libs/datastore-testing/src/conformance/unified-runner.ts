/**
 * A runner for MongoDB's unified test format (CRUD subset). It seeds `initialData`, builds the entities,
 * runs each operation and checks results, errors, `outcome` and, where a driver sends the commands,
 * `expectEvents`, with the format's matching rules. The embedded engine is called through the
 * data-access API (a DataSourceClient); a target over the wire is called through the official driver
 * with command monitoring on. What addresses a server deployment the data-access API does not expose
 * (fail points, write and read concern, other server versions) is skipped case by case, or left
 * unchecked within a case, with the reason reported.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EJSON } from 'bson';
import {
  type BulkWriteOperation,
  type CollectionHandle,
  type DatabaseHandle,
  type DataSourceClient,
  DatastoreError,
  type Document,
  type Hint,
  type SortSpec,
} from '@tessera/datastore';
import { MongoClient } from 'mongodb';
import { buildDriverEntities, closeDriverEntities, driverErrorView, type DriverEntities, type ErrorView, observedEvents, Skip } from './driver-entities';
import { CaseFailure, DRIVER_DEVIATIONS, type DriverContext, executeOnDriver } from './driver-operations';
import { type ExpectedEvents, matchEvents } from './events';
import { ITERABLE_RESULTS, match, type MatchContext, matchIterable } from './matching';

export { match } from './matching';

export interface ConformanceTarget {
  /** Label printed with results (`embedded`, `mongodb`). */
  name: string;
  /** Server version the target behaves as, for runOnRequirements. */
  serverVersion: string;
  topology: 'single' | 'replicaset' | 'sharded';
  /**
   * A connection string for the official driver. When set, a case's client entities are driver clients
   * connected here with command monitoring on, and its `expectEvents` are checked; `open()` is then
   * only the runner's own client, for seeding and `outcome`.
   */
  driverUri?: string;
  /** A replica set of one member: no secondary for a driver to select (cases reading from one are skipped). */
  noSecondary?: boolean;
  /** A fresh client for one test case. */
  open(): Promise<DataSourceClient>;
  /** Disposes the client (and whatever it stored) after the case. */
  dispose(client: DataSourceClient): Promise<void>;
}

export interface CaseResult {
  file: string;
  description: string;
  status: 'passed' | 'failed' | 'skipped';
  /** Why it was skipped or how it failed. */
  reason?: string;
  /** Parts of a passed case that were not checked, and why. */
  unchecked?: string[];
}

interface Requirement {
  minServerVersion?: string;
  maxServerVersion?: string;
  topologies?: string[];
  serverless?: string;
  auth?: boolean;
  csfle?: boolean;
}

interface Operation {
  name: string;
  object: string;
  arguments?: Document;
  expectResult?: unknown;
  expectError?: Document;
  ignoreResultAndError?: boolean;
  saveResultAsEntity?: string;
}

interface TestCase {
  description: string;
  runOnRequirements?: Requirement[];
  skipReason?: string;
  operations: Operation[];
  expectEvents?: ExpectedEvents[];
  outcome?: { collectionName: string; databaseName: string; documents: Document[] }[];
}

interface TestFile {
  description: string;
  runOnRequirements?: Requirement[];
  createEntities: Document[];
  initialData?: { collectionName: string; databaseName: string; documents: Document[] }[];
  tests: TestCase[];
}

/** Operations whose presence makes a case inapplicable, with the reason. */
const UNSUPPORTED_OPERATIONS: Record<string, string> = {
  failPoint: 'fail points (configureFailPoint) are a mongod test hook, which App Services never offered',
  targetedFailPoint: 'fail points (configureFailPoint) are a mongod test hook, which App Services never offered',
  clientBulkWrite: "client-level bulkWrite is MongoDB 8.0's bulkWrite command (the datastore answers as 7.0); App Services never offered it",
  createFindCursor: 'tailable/iterated server cursors are not part of the data-access API',
  listIndexNames: 'not part of the data-access API',
};

/** Arguments that address a server feature the data-access API does not expose. */
const UNSUPPORTED_ARGUMENTS: Record<string, string> = {
  rawData: 'rawData',
  writeConcern: 'write concern',
  readConcern: 'read concern',
  changeStreamPreAndPostImages: 'change stream pre- and post-images, a collection option the data-access API does not take',
  validator: 'a collection validator; App Services never offered one (it validates with the schemas of its rules)',
};

/**
 * Arguments that change nothing the data-access API can observe: batching, timeouts, spilling to disk (the
 * engine sorts in memory) and bypassing validators (collections of the data-access API have none; App
 * Services validates with its schemas in the rules layer, above this API). The driver is given them as
 * they are, and the commands it sends (batch sizes, getMores, the fields passed) are checked by events.
 */
const IGNORED_ARGUMENTS = new Set(['batchSize', 'maxTimeMS', 'session', 'allowDiskUse', 'bypassDocumentValidation']);

/** Arguments every query-shaped operation passes on as they are: hint, let, comment and collation. */
const QUERY_ARGUMENTS = ['hint', 'let', 'comment', 'collation'];

/** The arguments each collection operation takes (besides IGNORED_ARGUMENTS); others skip the case. */
const COLLECTION_ARGUMENTS: Record<string, string[]> = {
  find: ['filter', 'sort', 'skip', 'limit', 'projection', ...QUERY_ARGUMENTS],
  findOne: ['filter', 'sort', 'skip', 'projection', ...QUERY_ARGUMENTS],
  aggregate: ['pipeline', ...QUERY_ARGUMENTS],
  countDocuments: ['filter', 'skip', 'limit', ...QUERY_ARGUMENTS],
  count: ['filter', 'skip', 'limit', ...QUERY_ARGUMENTS],
  estimatedDocumentCount: ['comment'],
  distinct: ['fieldName', 'filter', ...QUERY_ARGUMENTS],
  insertOne: ['document', 'comment'],
  insertMany: ['documents', 'ordered', 'comment'],
  updateOne: ['filter', 'update', 'upsert', 'arrayFilters', 'sort', ...QUERY_ARGUMENTS],
  updateMany: ['filter', 'update', 'upsert', 'arrayFilters', ...QUERY_ARGUMENTS],
  replaceOne: ['filter', 'replacement', 'upsert', 'sort', ...QUERY_ARGUMENTS],
  deleteOne: ['filter', ...QUERY_ARGUMENTS],
  deleteMany: ['filter', ...QUERY_ARGUMENTS],
  findOneAndUpdate: ['filter', 'update', 'upsert', 'returnDocument', 'sort', 'projection', 'arrayFilters', ...QUERY_ARGUMENTS],
  findOneAndReplace: ['filter', 'replacement', 'upsert', 'returnDocument', 'sort', 'projection', 'arrayFilters', ...QUERY_ARGUMENTS],
  findOneAndDelete: ['filter', 'sort', 'projection', ...QUERY_ARGUMENTS],
  bulkWrite: ['requests', 'ordered', 'let', 'comment'],
  createIndex: ['keys', 'name', 'unique', 'sparse'],
};

/** The arguments each database operation takes. */
const DATABASE_ARGUMENTS: Record<string, string[]> = {
  dropCollection: ['collection'],
  createCollection: ['collection', 'viewOn', 'pipeline', 'changeStreamPreAndPostImages'],
  modifyCollection: ['collection', 'changeStreamPreAndPostImages', 'validator'],
  aggregate: ['pipeline', ...QUERY_ARGUMENTS],
};

/**
 * Database-level aggregation stages that report on the server itself (its operations and sessions): server
 * administration, which App Services never offered to an app.
 */
const SERVER_ADMIN_STAGES = ['$currentOp', '$listLocalSessions', '$listSessions'];

/** The data-access API's query options from an operation's arguments (absent ones left out). */
function queryOptions(a: Document): { hint?: Hint; let?: Document; comment?: unknown; collation?: Document } {
  const out: { hint?: Hint; let?: Document; comment?: unknown; collation?: Document } = {};
  if (a.collation !== undefined) out.collation = a.collation as Document;
  if (a.hint !== undefined) out.hint = a.hint as Hint;
  if (a.let !== undefined) out.let = a.let as Document;
  if (a.comment !== undefined) out.comment = a.comment;
  return out;
}

/**
 * Tessera accepts `sort` on updateOne and replaceOne (and their bulk forms) as MongoDB 8.0 does, so cases
 * that require 8.0 for that reason alone run, and the ones expecting 7.0's refusal are skipped for their
 * server-version requirement. See the README's conformance section.
 */
function usesUpdateSort(test: TestCase): boolean {
  return test.operations.some((op) => {
    const a = op.arguments ?? {};
    if ((op.name === 'updateOne' || op.name === 'replaceOne') && a.sort !== undefined) return true;
    if (op.name !== 'bulkWrite') return false;
    return ((a.requests as Document[] | undefined) ?? []).some((r) => {
      const [kind, inner] = Object.entries(r)[0] as [string, Document];
      return (kind === 'updateOne' || kind === 'replaceOne') && inner?.sort !== undefined;
    });
  });
}

function versionParts(v: string): number[] {
  return v.split('.').map((p) => Number(p) || 0);
}

function compareVersions(a: string, b: string): number {
  const x = versionParts(a);
  const y = versionParts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function unmetRequirement(requirements: Requirement[] | undefined, target: ConformanceTarget): string | undefined {
  if (!requirements || requirements.length === 0) return undefined;
  const reasons: string[] = [];
  for (const r of requirements) {
    const problems: string[] = [];
    if (r.minServerVersion && compareVersions(target.serverVersion, r.minServerVersion) < 0) problems.push(`server >= ${r.minServerVersion}`);
    if (r.maxServerVersion && compareVersions(target.serverVersion, r.maxServerVersion) > 0) problems.push(`server <= ${r.maxServerVersion}`);
    if (r.topologies && !r.topologies.includes(target.topology)) problems.push(`topology ${r.topologies.join('|')}`);
    if (r.serverless === 'require') problems.push('serverless');
    if (r.auth === true) problems.push('auth');
    if (r.csfle === true) problems.push('client-side encryption');
    if (problems.length === 0) return undefined;
    reasons.push(problems.join(', '));
  }
  return `runOnRequirements not met (${target.name} behaves as a ${target.topology} server ${target.serverVersion}; needs ${reasons.join(' or ')})`;
}

// ---- execution ----

interface ApiEntities {
  databases: Map<string, DatabaseHandle>;
  collections: Map<string, CollectionHandle>;
  /** Entities whose options this API cannot honour, with the reason: cases using them are skipped. */
  unsupported: Map<string, string>;
  /**
   * Collections with write concern w: 0. The API acknowledges every write (App Services offered nothing
   * else), so their operations run acknowledged: the outcome is checked, the (unacknowledged) result not.
   */
  unacknowledged: Set<string>;
}

/**
 * Arguments a target cannot pass on. Through the driver, write and read concern go to the server as a
 * user's application sends them (a one-member replica set satisfies any `w`), except the read concern
 * levels the datastore does not offer; the data-access API takes neither.
 */
function argumentProblems(op: Operation, viaDriver: boolean): string | undefined {
  const args = op.arguments ?? {};
  const problem = (key: string, value: unknown, where: string): string | undefined => {
    if (!UNSUPPORTED_ARGUMENTS[key]) return undefined;
    if (viaDriver && key === 'writeConcern') return undefined;
    // create and collMod take it on the wire server.
    if (viaDriver && key === 'changeStreamPreAndPostImages') return undefined;
    if (viaDriver && key === 'readConcern') return wireReadConcernUnsupported((value as Document | undefined)?.level);
    return `uses ${UNSUPPORTED_ARGUMENTS[key]} (${where} ${key})`;
  };
  for (const [key, value] of Object.entries(args)) {
    const found = problem(key, value, op.name);
    if (found) return found;
  }
  if (op.name === 'bulkWrite') {
    for (const request of (args.requests as Document[] | undefined) ?? []) {
      const inner = Object.values(request)[0] as Document;
      for (const [key, value] of Object.entries(inner ?? {})) {
        const found = problem(key, value, 'bulkWrite');
        if (found) return found;
      }
    }
  }
  if (op.name === 'withTransaction') {
    for (const inner of (args.callback as Operation[] | undefined) ?? []) {
      const found = UNSUPPORTED_OPERATIONS[inner.name] ? `${inner.name}: ${UNSUPPORTED_OPERATIONS[inner.name]}` : argumentProblems(inner, viaDriver);
      if (found) return found;
    }
  }
  return undefined;
}

/** Skips an operation the runner does not know, or one with an argument it does not pass on. */
function checkOperation(op: Operation, onDatabase: boolean): void {
  const allowed = (onDatabase ? DATABASE_ARGUMENTS : COLLECTION_ARGUMENTS)[op.name];
  if (!allowed) throw new Skip(`${onDatabase ? 'database ' : ''}operation ${op.name} is not supported`);
  for (const key of Object.keys(op.arguments ?? {})) {
    if (!allowed.includes(key) && !IGNORED_ARGUMENTS.has(key)) throw new Skip(`argument ${key} of ${op.name} is not supported`);
  }
  if (onDatabase && op.name === 'aggregate') {
    const first = Object.keys(((op.arguments?.pipeline as Document[] | undefined) ?? [])[0] ?? {})[0];
    if (SERVER_ADMIN_STAGES.includes(first)) throw new Skip(`${first}: server administration, which App Services never offered to an app`);
  }
}

async function executeOnApi(op: Operation, entities: ApiEntities): Promise<unknown> {
  const a = op.arguments ?? {};
  const database = entities.databases.get(op.object);
  if (database) {
    switch (op.name) {
      case 'dropCollection':
        await database.dropCollection(String(a.collection));
        return undefined;
      case 'createCollection':
        await database.createCollection(String(a.collection), { viewOn: a.viewOn as string | undefined, pipeline: a.pipeline as Document[] | undefined });
        return undefined;
      case 'aggregate':
        return database.aggregate(a.pipeline as Document[], queryOptions(a)).toArray();
      default:
        throw new Skip(`database operation ${op.name} is not supported`);
    }
  }
  const collection = entities.collections.get(op.object);
  if (!collection) throw new Skip(`operation ${op.name} on ${op.object} is not supported`);
  const filter = (a.filter as Document | undefined) ?? {};
  switch (op.name) {
    case 'find':
      return collection.find(filter, a.projection as Document | undefined, { sort: a.sort as SortSpec, skip: a.skip as number, limit: a.limit as number, ...queryOptions(a) }).toArray();
    case 'findOne':
      return collection.findOne(filter, a.projection as Document | undefined, { sort: a.sort as SortSpec, skip: a.skip as number, ...queryOptions(a) });
    case 'aggregate':
      return collection.aggregate(a.pipeline as Document[], queryOptions(a)).toArray();
    case 'countDocuments':
      return collection.countDocuments(filter, { skip: a.skip as number, limit: a.limit as number, ...queryOptions(a) });
    case 'count':
      return collection.count(filter, { skip: a.skip as number, limit: a.limit as number, ...queryOptions(a) });
    case 'estimatedDocumentCount':
      return collection.estimatedDocumentCount(queryOptions(a));
    case 'distinct':
      return collection.distinct(String(a.fieldName), filter, queryOptions(a));
    case 'insertOne':
      return collection.insertOne(a.document as Document, queryOptions(a));
    case 'insertMany':
      return collection.insertMany(a.documents as Document[], { ordered: a.ordered as boolean | undefined, ...queryOptions(a) });
    case 'updateOne':
    case 'updateMany':
      return await collection[op.name](filter, a.update as Document, {
        upsert: a.upsert as boolean | undefined,
        arrayFilters: a.arrayFilters as Document[] | undefined,
        sort: a.sort as SortSpec | undefined,
        ...queryOptions(a),
      });
    case 'replaceOne':
      return collection.replaceOne(filter, a.replacement as Document, { upsert: a.upsert as boolean | undefined, sort: a.sort as SortSpec | undefined, ...queryOptions(a) });
    case 'deleteOne':
    case 'deleteMany':
      return collection[op.name](filter, queryOptions(a));
    case 'findOneAndUpdate':
    case 'findOneAndReplace': {
      const options = {
        ...queryOptions(a),
        upsert: a.upsert as boolean | undefined,
        returnNewDocument: a.returnDocument === 'After',
        sort: a.sort as SortSpec | undefined,
        projection: a.projection as Document | undefined,
        arrayFilters: a.arrayFilters as Document[] | undefined,
      };
      return op.name === 'findOneAndUpdate'
        ? collection.findOneAndUpdate(filter, a.update as Document, options)
        : collection.findOneAndReplace(filter, a.replacement as Document, options);
    }
    case 'findOneAndDelete':
      return collection.findOneAndDelete(filter, { sort: a.sort as SortSpec | undefined, projection: a.projection as Document | undefined, ...queryOptions(a) });
    case 'bulkWrite': {
      const { let: variables, comment } = queryOptions(a);
      return collection.bulkWrite(a.requests as BulkWriteOperation[], { ordered: a.ordered as boolean | undefined, ...(variables ? { let: variables } : {}), ...(comment !== undefined ? { comment } : {}) });
    }
    case 'createIndex':
      return collection.createIndex(a.keys as Record<string, 1 | -1>, { name: a.name as string | undefined, unique: a.unique as boolean | undefined, sparse: a.sparse as boolean | undefined });
    default:
      throw new Skip(`operation ${op.name} is not supported`);
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : EJSON.stringify(value);
}

function errorView(error: unknown): ErrorView {
  const driver = driverErrorView(error);
  if (driver) return driver;
  if (error instanceof DatastoreError) {
    return { message: error.message, code: error.code, codeName: error.codeName, isClientError: error.isClientError, result: error.result, errorResponse: error.errorResponse, labels: [] };
  }
  return { message: error instanceof Error ? error.message : text(error), isClientError: true, labels: [] };
}

function checkError(error: unknown, expected: Document, context?: MatchContext): string | undefined {
  const e = errorView(error);
  if (expected.isTimeoutError === true) return `expected a timeout error (client-side operation timeouts are not checked by this runner), got: ${e.message}`;
  if (expected.isClientError !== undefined && e.isClientError !== expected.isClientError) {
    return `expected ${expected.isClientError ? 'a client' : 'a server'} error, got: ${e.message}`;
  }
  if (expected.errorContains !== undefined && !e.message.toLowerCase().includes(text(expected.errorContains).toLowerCase())) {
    return `expected error containing "${text(expected.errorContains)}", got: ${e.message}`;
  }
  if (expected.errorCode !== undefined && e.code !== expected.errorCode) return `expected error code ${text(expected.errorCode)}, got ${String(e.code)}: ${e.message}`;
  if (expected.errorCodeName !== undefined && e.codeName !== expected.errorCodeName) return `expected error ${text(expected.errorCodeName)}, got ${String(e.codeName)}: ${e.message}`;
  for (const label of (expected.errorLabelsContain as string[] | undefined) ?? []) {
    if (!e.labels.includes(label)) return `expected error label ${label}, got [${e.labels.join(', ')}]: ${e.message}`;
  }
  for (const label of (expected.errorLabelsOmit as string[] | undefined) ?? []) {
    if (e.labels.includes(label)) return `expected no error label ${label}, got [${e.labels.join(', ')}]: ${e.message}`;
  }
  if (expected.errorResponse !== undefined) {
    const problem = match(e.errorResponse, expected.errorResponse, true, 'error.errorResponse', context);
    if (problem) return problem;
  }
  if (expected.expectResult !== undefined) {
    const problem = match(e.result, expected.expectResult, true, 'error.result', context);
    if (problem) return problem;
  }
  return undefined;
}

function readConcernUnsupported(level: unknown): string | undefined {
  return level === 'linearizable' || level === 'snapshot' ? `read concern ${String(level)}: the data-access API has no read concern (App Services offered none)` : undefined;
}

/** Through the driver, the wire server reads at read concern snapshot (snapshot reads, transactions); not linearizable. */
function wireReadConcernUnsupported(level: unknown): string | undefined {
  return level === 'linearizable' ? 'read concern linearizable: the datastore has one member, and offers no linearizable reads' : undefined;
}

function buildApiEntities(client: DataSourceClient, file: TestFile): ApiEntities {
  const entities: ApiEntities = { databases: new Map(), collections: new Map(), unsupported: new Map(), unacknowledged: new Set() };
  for (const entity of file.createEntities) {
    const [kind, spec] = Object.entries(entity)[0] as [string, Document];
    if (kind === 'database') entities.databases.set(String(spec.id), client.db(String(spec.databaseName)));
    else if (kind === 'collection') {
      const db = entities.databases.get(String(spec.database));
      if (!db) throw new Skip(`collection ${String(spec.id)} refers to an unknown database`);
      // A collection with options this API lacks fails only the cases that use it, not its whole file.
      const options = (spec.collectionOptions as Document | undefined) ?? {};
      if ((options.writeConcern as Document | undefined)?.w === 0) entities.unacknowledged.add(String(spec.id));
      const unsupported = readConcernUnsupported((options.readConcern as Document | undefined)?.level);
      if (unsupported) entities.unsupported.set(String(spec.id), unsupported);
      entities.collections.set(String(spec.id), db.collection(String(spec.collectionName)));
    } else if (kind === 'session') throw new Skip('sessions: the embedded target calls the engine through the data-access API, without a driver session');
    else if (kind !== 'client') throw new Skip(`entity type ${kind} is not supported`);
  }
  return entities;
}

/** How a case's operations run: through the data-access API or through the driver. */
interface Runner {
  execute(op: Operation): Promise<unknown>;
  /** What `$$sessionLsid` and `$$matchesEntity` look up (the driver's entities). */
  matchContext?: MatchContext;
  /** Runs withTransaction's callback operations with the case's checks. */
  nested?: (op: Operation) => Promise<void>;
  /** True when the operation's result cannot be checked (w: 0 through the API). */
  resultUnchecked(op: Operation): boolean;
  /** Stops recording and returns the first difference between expected and observed events. */
  finishEvents(expected: ExpectedEvents[]): string | undefined;
  close(): Promise<void>;
}

function apiRunner(client: DataSourceClient, file: TestFile): Runner {
  const entities = buildApiEntities(client, file);
  return {
    execute: (op) => {
      const unsupported = entities.unsupported.get(op.object);
      if (unsupported) throw new Skip(unsupported);
      checkOperation(op, entities.databases.has(op.object));
      return executeOnApi(op, entities);
    },
    resultUnchecked: (op) => entities.unacknowledged.has(op.object),
    finishEvents: () => undefined,
    close: async () => undefined,
  };
}

function driverRunner(uri: string, file: TestFile, test: TestCase, unchecked: string[], noSecondary: boolean): Runner {
  const deviation = DRIVER_DEVIATIONS[test.description];
  const entities: DriverEntities = buildDriverEntities(uri, file.createEntities, wireReadConcernUnsupported, deviation?.clientOptions, noSecondary);
  if (deviation?.uncheckedEvents) unchecked.push(deviation.uncheckedEvents);
  let internal: MongoClient | undefined;
  const matchContext: MatchContext = {
    sessionLsid: (id) => entities.lsids.get(id),
    entity: (id) => entities.values.get(id),
  };
  const runner: Runner = {
    matchContext,
    execute: (op) => {
      // The CRUD operations take the arguments both targets pass on; the rest go to the driver as given.
      const onDatabase = entities.databases.has(op.object);
      if ((entities.collections.has(op.object) || onDatabase) && (onDatabase ? DATABASE_ARGUMENTS : COLLECTION_ARGUMENTS)[op.name]) checkOperation(op, onDatabase);
      const context: DriverContext = {
        uri,
        runNested: async (inner) => runner.nested?.(inner),
        internalClient: () => (internal ??= new MongoClient(uri)),
        readConcernUnsupported: wireReadConcernUnsupported,
        noSecondary,
      };
      return executeOnDriver(op, entities, context);
    },
    resultUnchecked: () => false,
    finishEvents: (expected) => {
      entities.recording = false;
      if (deviation?.uncheckedEvents) return undefined;
      for (const entry of expected) {
        const problem = matchEvents(observedEvents(entities, entry.client), entry, matchContext, (reason) => {
          if (!unchecked.includes(reason)) unchecked.push(reason);
        });
        if (problem) return problem;
      }
      return undefined;
    },
    close: async () => {
      await closeDriverEntities(entities);
      await internal?.close();
    },
  };
  return runner;
}

/**
 * Runs one operation and checks it as the case says; returns the first difference, if any. In a
 * withTransaction callback (`propagate`) the operation's error, once checked, is thrown on to
 * withTransaction, as the format requires (whatever expectError or ignoreResultAndError say).
 */
async function runOperation(runner: Runner, op: Operation, label: string, unchecked: string[], propagate = false): Promise<string | undefined> {
  let actual: unknown;
  let error: unknown;
  try {
    actual = await runner.execute(op);
  } catch (e) {
    if (e instanceof Skip || e instanceof CaseFailure) throw e;
    error = e;
  }
  const passOn = (problem: string | undefined): string | undefined => {
    if (problem === undefined && propagate && error !== undefined) throw error;
    return problem;
  };
  if (op.ignoreResultAndError) return passOn(undefined);
  if (op.expectError) {
    if (error === undefined) return `${label}: expected an error, got ${EJSON.stringify(actual)}`;
    const problem = checkError(error, op.expectError, runner.matchContext);
    return passOn(problem ? `${label}: ${problem}` : undefined);
  }
  if (error !== undefined) return `${label} threw: ${errorView(error).message}`;
  if (op.expectResult !== undefined && runner.resultUnchecked(op)) {
    unchecked.push(`result of ${op.name} with w: 0 (the API acknowledges every write)`);
  } else if (op.expectResult !== undefined) {
    const problem = ITERABLE_RESULTS.has(op.name) ? matchIterable(actual, op.expectResult, runner.matchContext) : match(actual, op.expectResult, true, '$', runner.matchContext);
    if (problem) return `${label}: ${problem}`;
  }
  return undefined;
}

/** Why a case's expected events cannot be checked by this runner, if they cannot. */
function unrecordedEvents(test: TestCase): string | undefined {
  const other = (test.expectEvents ?? []).find((entry) => entry.eventType !== undefined && entry.eventType !== 'command');
  return other ? `expectEvents of type ${String(other.eventType)}: connection pool and topology events are the driver's, and this runner records command events only` : undefined;
}

/** Why a target cannot check a case's events: command monitoring is a driver's, and it has none. */
const NO_DRIVER_EVENTS = 'command monitoring events (expectEvents): a driver emits them, and the embedded target calls the engine without one';

async function runCase(file: TestFile, test: TestCase, target: ConformanceTarget, fileName: string): Promise<CaseResult> {
  const result = (status: CaseResult['status'], reason?: string, unchecked?: string[]): CaseResult => ({ file: fileName, description: test.description, status, reason, unchecked });
  if (test.skipReason) return result('skipped', test.skipReason);
  const asTarget = usesUpdateSort(test) && compareVersions(target.serverVersion, '8.0.0') < 0 ? { ...target, serverVersion: '8.0.0' } : target;
  const unmet = unmetRequirement(file.runOnRequirements, asTarget) ?? unmetRequirement(test.runOnRequirements, asTarget);
  if (unmet) return result('skipped', unmet);
  for (const op of test.operations) {
    const unsupported = UNSUPPORTED_OPERATIONS[op.name];
    if (unsupported) return result('skipped', `${op.name}: ${unsupported}`);
    const problem = argumentProblems(op, target.driverUri !== undefined);
    if (problem) return result('skipped', problem);
  }
  const unrecorded = unrecordedEvents(test);
  if (unrecorded) return result('skipped', unrecorded);
  const unchecked: string[] = [];
  if (test.expectEvents && !target.driverUri) unchecked.push(NO_DRIVER_EVENTS);
  const client = await target.open();
  let runner: Runner | undefined;
  try {
    for (const seed of file.initialData ?? []) {
      const db = client.db(seed.databaseName);
      await db.dropCollection(seed.collectionName);
      if (seed.documents.length > 0) await db.collection(seed.collectionName).insertMany(seed.documents);
      else await db.createCollection(seed.collectionName);
    }
    try {
      runner = target.driverUri ? driverRunner(target.driverUri, file, test, unchecked, target.noSecondary === true) : apiRunner(client, file);
    } catch (e) {
      if (e instanceof Skip) return result('skipped', e.message);
      throw e;
    }
    const active = runner;
    active.nested = async (op) => {
      const problem = await runOperation(active, op, `withTransaction callback (${op.name})`, unchecked, true);
      if (problem) throw new CaseFailure(problem);
    };
    for (const [i, op] of test.operations.entries()) {
      try {
        const problem = await runOperation(runner, op, `operation ${i} (${op.name})`, unchecked);
        if (problem) return result('failed', problem);
      } catch (e) {
        if (e instanceof Skip) return result('skipped', e.message);
        if (e instanceof CaseFailure) return result('failed', `operation ${i} (${op.name}): ${e.message}`);
        throw e;
      }
    }
    const eventProblem = runner.finishEvents(test.expectEvents ?? []);
    if (eventProblem) return result('failed', eventProblem);
    for (const expected of test.outcome ?? []) {
      const docs = await client.db(expected.databaseName).collection(expected.collectionName).find({}, undefined, { sort: { _id: 1 } }).toArray();
      const problem = match(docs, expected.documents, false, `outcome ${expected.databaseName}.${expected.collectionName}`);
      if (problem) return result('failed', problem);
    }
    return result('passed', undefined, unchecked.length ? unchecked : undefined);
  } finally {
    await runner?.close();
    await target.dispose(client);
  }
}

/** Runs every `*.json` file of `dir` against `target`. */
export async function runConformance(dir: string, target: ConformanceTarget): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  for (const name of files) {
    const file = EJSON.parse(readFileSync(join(dir, name), 'utf8'), { relaxed: true }) as TestFile;
    for (const test of file.tests) {
      try {
        results.push(await runCase(file, test, target, name));
      } catch (error) {
        results.push({ file: name, description: test.description, status: 'failed', reason: `runner error: ${error instanceof Error ? error.message : text(error)}` });
      }
    }
  }
  return results;
}

export function summarize(results: CaseResult[]): { passed: number; failed: number; skipped: number; line: string } {
  const passed = results.filter((r) => r.status === 'passed').length;
  const failed = results.filter((r) => r.status === 'failed').length;
  const skipped = results.filter((r) => r.status === 'skipped').length;
  return { passed, failed, skipped, line: `${passed} passed, ${failed} failed, ${skipped} skipped` };
}

export function formatResult(r: CaseResult): string {
  const head = `${r.status.toUpperCase().padEnd(7)} ${r.file}: ${r.description}`;
  if (r.reason) return `${head}\n          ${r.reason}`;
  if (r.unchecked) return `${head} (not checked: ${r.unchecked.join(', ')})`;
  return head;
}
