/**
 * A runner for MongoDB's unified test format (CRUD subset) over the data-access API. It builds the
 * entities, seeds `initialData`, runs each operation through a DataSourceClient, and checks results,
 * errors and `outcome` with the format's matching rules. What addresses a real server deployment (fail
 * points, command monitoring, hint, write concern, other server versions) is skipped case by
 * case, or left unchecked within a case, with the reason reported.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EJSON } from 'bson';
import {
  type BulkWriteOperation,
  type CollectionHandle,
  compareValues,
  type DatabaseHandle,
  type DataSourceClient,
  DatastoreError,
  type Document,
  type Hint,
  isPlainObject,
  type SortSpec,
  typeRank,
} from '@tessera/datastore';

export interface ConformanceTarget {
  /** Label printed with results (`embedded`, `mongodb`). */
  name: string;
  /** Server version the target behaves as, for runOnRequirements. */
  serverVersion: string;
  topology: 'single' | 'replicaset' | 'sharded';
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
}

interface TestCase {
  description: string;
  runOnRequirements?: Requirement[];
  skipReason?: string;
  operations: Operation[];
  expectEvents?: unknown[];
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
  failPoint: 'fail points are a server test hook',
  targetedFailPoint: 'fail points are a server test hook',
  clientBulkWrite: 'client-level bulkWrite is not part of the data-access API',
  createFindCursor: 'tailable/iterated server cursors are not part of the data-access API',
  listIndexNames: 'not part of the data-access API',
};

/** Arguments that address a server feature the data-access API does not expose. */
const UNSUPPORTED_ARGUMENTS: Record<string, string> = {
  rawData: 'rawData',
  writeConcern: 'write concern',
  readConcern: 'read concern',
};

/**
 * Arguments that change nothing observable here: batching, timeouts, spilling to disk (the engine sorts in
 * memory) and bypassing validators (collections of the data-access API have none; App Services validates
 * with its schemas in the rules layer, above this API).
 */
const IGNORED_ARGUMENTS = new Set(['batchSize', 'maxTimeMS', 'session', 'allowDiskUse', 'bypassDocumentValidation']);

/** Arguments every query-shaped operation passes on as they are: hint, let, comment and collation. */
const QUERY_ARGUMENTS = ['hint', 'let', 'comment', 'collation'];

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

// ---- matching (unified test format rules) ----

function isNumber(value: unknown): boolean {
  return typeRank(value) === 2;
}

const TYPE_ALIASES: Record<string, (v: unknown) => boolean> = {
  int: (v) => typeof v === 'number' && Number.isInteger(v),
  long: (v) => (typeof v === 'number' && Number.isInteger(v)) || (v as { _bsontype?: string } | null)?._bsontype === 'Long',
  double: (v) => typeof v === 'number',
  string: (v) => typeof v === 'string',
  object: (v) => isPlainObject(v),
  array: (v) => Array.isArray(v),
  bool: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  date: (v) => v instanceof Date,
  objectId: (v) => (v as { _bsontype?: string } | null)?._bsontype === 'ObjectId',
  binData: (v) => (v as { _bsontype?: string } | null)?._bsontype === 'Binary',
};

/** Returns a description of the first mismatch, or undefined when `actual` matches `expected`. */
export function match(actual: unknown, expected: unknown, root: boolean, path = '$'): string | undefined {
  if (isPlainObject(expected)) {
    const keys = Object.keys(expected);
    if (keys.length === 1 && keys[0].startsWith('$$')) {
      const op = keys[0];
      const arg = expected[op];
      switch (op) {
        case '$$unsetOrMatches':
          return actual === undefined ? undefined : match(actual, arg, root, path);
        case '$$exists':
          return (actual !== undefined) === Boolean(arg) ? undefined : `${path}: expected ${arg ? 'present' : 'absent'}`;
        case '$$type': {
          const types = Array.isArray(arg) ? (arg as string[]) : [String(arg)];
          return types.some((t) => TYPE_ALIASES[t]?.(actual)) ? undefined : `${path}: expected type ${types.join('|')}`;
        }
        case '$$lte':
          return isNumber(actual) && compareValues(actual, arg) <= 0 ? undefined : `${path}: expected <= ${String(arg)}`;
        default:
          return `${path}: unsupported special operator ${op}`;
      }
    }
    if (Array.isArray(actual) && keys.every((k) => /^\d+$/.test(k))) {
      // Drivers report insertedIds as {index: id}; the data-access API as an array.
      const asObject: Document = {};
      (actual as unknown[]).forEach((v, i) => {
        asObject[String(i)] = v;
      });
      return match(asObject, expected, root, path);
    }
    if (!isPlainObject(actual)) return `${path}: expected a document, got ${EJSON.stringify(actual)}`;
    for (const key of keys) {
      const problem = match(actual[key], expected[key], false, `${path}.${key}`);
      if (problem) return problem;
    }
    if (!root) {
      const extra = Object.keys(actual).filter((k) => !(k in expected));
      if (extra.length) return `${path}: unexpected fields ${extra.join(', ')}`;
    }
    return undefined;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${EJSON.stringify(actual)}`;
    if (actual.length !== expected.length) return `${path}: expected ${expected.length} elements, got ${actual.length}: ${EJSON.stringify(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const problem = match(actual[i], expected[i], false, `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (isNumber(expected)) return isNumber(actual) && compareValues(actual, expected) === 0 ? undefined : `${path}: expected ${String(expected)}, got ${EJSON.stringify(actual)}`;
  if (actual === undefined && expected !== undefined) return `${path}: missing, expected ${EJSON.stringify(expected)}`;
  return typeRank(actual) === typeRank(expected) && compareValues(actual, expected) === 0 ? undefined : `${path}: expected ${EJSON.stringify(expected)}, got ${EJSON.stringify(actual)}`;
}

/** Operations returning an iterable of documents, whose elements match as root-level documents. */
const ITERABLE_RESULTS = new Set(['find', 'aggregate']);

/** Matches a cursor's documents: each element is a root-level document (extra fields allowed). */
export function matchIterable(actual: unknown, expected: unknown): string | undefined {
  if (!Array.isArray(expected) || !Array.isArray(actual)) return match(actual, expected, true);
  if (actual.length !== expected.length) return `$: expected ${expected.length} documents, got ${actual.length}: ${EJSON.stringify(actual)}`;
  for (let i = 0; i < expected.length; i++) {
    const problem = match(actual[i], expected[i], true, `$[${i}]`);
    if (problem) return problem;
  }
  return undefined;
}

// ---- execution ----

class Skip extends Error {}

interface Entities {
  client: DataSourceClient;
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

function argumentProblems(op: Operation): string | undefined {
  const args = op.arguments ?? {};
  for (const key of Object.keys(args)) if (UNSUPPORTED_ARGUMENTS[key]) return `uses ${UNSUPPORTED_ARGUMENTS[key]} (${op.name} ${key})`;
  if (op.name === 'bulkWrite') {
    for (const request of (args.requests as Document[] | undefined) ?? []) {
      const inner = Object.values(request)[0] as Document;
      for (const key of Object.keys(inner ?? {})) if (UNSUPPORTED_ARGUMENTS[key]) return `uses ${UNSUPPORTED_ARGUMENTS[key]} (bulkWrite ${key})`;
    }
  }
  return undefined;
}

function knownArguments(op: Operation, allowed: string[]): void {
  for (const key of Object.keys(op.arguments ?? {})) {
    if (!allowed.includes(key) && !IGNORED_ARGUMENTS.has(key)) throw new Skip(`argument ${key} of ${op.name} is not supported`);
  }
}

async function execute(op: Operation, entities: Entities): Promise<unknown> {
  const a = op.arguments ?? {};
  const unsupported = entities.unsupported.get(op.object);
  if (unsupported) throw new Skip(unsupported);
  const collection = entities.collections.get(op.object);
  const database = entities.databases.get(op.object);
  if (database) {
    switch (op.name) {
      case 'dropCollection':
        knownArguments(op, ['collection']);
        await database.dropCollection(String(a.collection));
        return undefined;
      case 'createCollection':
        knownArguments(op, ['collection', 'viewOn', 'pipeline']);
        await database.createCollection(String(a.collection), { viewOn: a.viewOn as string | undefined, pipeline: a.pipeline as Document[] | undefined });
        return undefined;
      default:
        throw new Skip(`database operation ${op.name} is not supported`);
    }
  }
  if (!collection) throw new Skip(`operation ${op.name} on ${op.object} is not supported`);
  const filter = (a.filter as Document | undefined) ?? {};
  switch (op.name) {
    case 'find':
      knownArguments(op, ['filter', 'sort', 'skip', 'limit', 'projection', ...QUERY_ARGUMENTS]);
      return collection.find(filter, a.projection as Document | undefined, { sort: a.sort as SortSpec, skip: a.skip as number, limit: a.limit as number, ...queryOptions(a) }).toArray();
    case 'findOne':
      knownArguments(op, ['filter', 'sort', 'skip', 'projection', ...QUERY_ARGUMENTS]);
      return collection.findOne(filter, a.projection as Document | undefined, { sort: a.sort as SortSpec, skip: a.skip as number, ...queryOptions(a) });
    case 'aggregate':
      knownArguments(op, ['pipeline', ...QUERY_ARGUMENTS]);
      return collection.aggregate(a.pipeline as Document[], queryOptions(a)).toArray();
    case 'countDocuments':
      knownArguments(op, ['filter', 'skip', 'limit', ...QUERY_ARGUMENTS]);
      return collection.countDocuments(filter, { skip: a.skip as number, limit: a.limit as number, ...queryOptions(a) });
    case 'count':
      knownArguments(op, ['filter', 'skip', 'limit', ...QUERY_ARGUMENTS]);
      return collection.count(filter, { skip: a.skip as number, limit: a.limit as number, ...queryOptions(a) });
    case 'estimatedDocumentCount':
      knownArguments(op, ['comment']);
      return collection.estimatedDocumentCount(queryOptions(a));
    case 'distinct':
      knownArguments(op, ['fieldName', 'filter', ...QUERY_ARGUMENTS]);
      return collection.distinct(String(a.fieldName), filter, queryOptions(a));
    case 'insertOne':
      knownArguments(op, ['document', 'comment']);
      return collection.insertOne(a.document as Document, queryOptions(a));
    case 'insertMany':
      knownArguments(op, ['documents', 'ordered', 'comment']);
      return collection.insertMany(a.documents as Document[], { ordered: a.ordered as boolean | undefined, ...queryOptions(a) });
    case 'updateOne':
    case 'updateMany':
      knownArguments(op, ['filter', 'update', 'upsert', 'arrayFilters', ...(op.name === 'updateOne' ? ['sort'] : []), ...QUERY_ARGUMENTS]);
      return await collection[op.name](filter, a.update as Document, {
        upsert: a.upsert as boolean | undefined,
        arrayFilters: a.arrayFilters as Document[] | undefined,
        sort: a.sort as SortSpec | undefined,
        ...queryOptions(a),
      });
    case 'replaceOne':
      knownArguments(op, ['filter', 'replacement', 'upsert', 'sort', ...QUERY_ARGUMENTS]);
      return collection.replaceOne(filter, a.replacement as Document, { upsert: a.upsert as boolean | undefined, sort: a.sort as SortSpec | undefined, ...queryOptions(a) });
    case 'deleteOne':
    case 'deleteMany':
      knownArguments(op, ['filter', ...QUERY_ARGUMENTS]);
      return collection[op.name](filter, queryOptions(a));
    case 'findOneAndUpdate':
    case 'findOneAndReplace': {
      knownArguments(op, ['filter', op.name === 'findOneAndUpdate' ? 'update' : 'replacement', 'upsert', 'returnDocument', 'sort', 'projection', 'arrayFilters', ...QUERY_ARGUMENTS]);
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
      knownArguments(op, ['filter', 'sort', 'projection', ...QUERY_ARGUMENTS]);
      return collection.findOneAndDelete(filter, { sort: a.sort as SortSpec | undefined, projection: a.projection as Document | undefined, ...queryOptions(a) });
    case 'bulkWrite': {
      knownArguments(op, ['requests', 'ordered', 'let', 'comment']);
      const { let: variables, comment } = queryOptions(a);
      return collection.bulkWrite(a.requests as BulkWriteOperation[], { ordered: a.ordered as boolean | undefined, ...(variables ? { let: variables } : {}), ...(comment !== undefined ? { comment } : {}) });
    }
    case 'createIndex':
      knownArguments(op, ['keys', 'name', 'unique', 'sparse']);
      return collection.createIndex(a.keys as Record<string, 1 | -1>, { name: a.name as string | undefined, unique: a.unique as boolean | undefined, sparse: a.sparse as boolean | undefined });
    default:
      throw new Skip(`operation ${op.name} is not supported`);
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : EJSON.stringify(value);
}

function checkError(error: unknown, expected: Document): string | undefined {
  const e = error instanceof DatastoreError ? error : undefined;
  const message = error instanceof Error ? error.message : text(error);
  if (expected.isClientError !== undefined && (e?.isClientError ?? true) !== expected.isClientError) {
    return `expected ${expected.isClientError ? 'a client' : 'a server'} error, got: ${message}`;
  }
  if (expected.errorContains !== undefined && !message.toLowerCase().includes(text(expected.errorContains).toLowerCase())) {
    return `expected error containing "${text(expected.errorContains)}", got: ${message}`;
  }
  if (expected.errorCode !== undefined && e?.code !== expected.errorCode) return `expected error code ${text(expected.errorCode)}, got ${String(e?.code)}: ${message}`;
  if (expected.errorCodeName !== undefined && e?.codeName !== expected.errorCodeName) return `expected error ${text(expected.errorCodeName)}, got ${String(e?.codeName)}: ${message}`;
  if (expected.expectResult !== undefined) {
    const problem = match(e?.result, expected.expectResult, true, 'error.result');
    if (problem) return problem;
  }
  return undefined;
}

function buildEntities(client: DataSourceClient, file: TestFile): Entities {
  const entities: Entities = { client, databases: new Map(), collections: new Map(), unsupported: new Map(), unacknowledged: new Set() };
  for (const entity of file.createEntities) {
    const [kind, spec] = Object.entries(entity)[0] as [string, Document];
    if (kind === 'database') entities.databases.set(String(spec.id), client.db(String(spec.databaseName)));
    else if (kind === 'collection') {
      const db = entities.databases.get(String(spec.database));
      if (!db) throw new Skip(`collection ${String(spec.id)} refers to an unknown database`);
      // A collection with options this API lacks fails only the cases that use it, not its whole file.
      const options = (spec.collectionOptions as Document | undefined) ?? {};
      const level = (options.readConcern as Document | undefined)?.level;
      if ((options.writeConcern as Document | undefined)?.w === 0) entities.unacknowledged.add(String(spec.id));
      if (level === 'linearizable' || level === 'snapshot') entities.unsupported.set(String(spec.id), `read concern ${String(level)}: the data-access API has no read concern (App Services offered none)`);
      entities.collections.set(String(spec.id), db.collection(String(spec.collectionName)));
    } else if (kind !== 'client') throw new Skip(`entity type ${kind} is not supported`);
  }
  return entities;
}

async function runCase(file: TestFile, test: TestCase, target: ConformanceTarget, fileName: string): Promise<CaseResult> {
  const result = (status: CaseResult['status'], reason?: string, unchecked?: string[]): CaseResult => ({ file: fileName, description: test.description, status, reason, unchecked });
  if (test.skipReason) return result('skipped', test.skipReason);
  const asTarget = usesUpdateSort(test) && compareVersions(target.serverVersion, '8.0.0') < 0 ? { ...target, serverVersion: '8.0.0' } : target;
  const unmet = unmetRequirement(file.runOnRequirements, asTarget) ?? unmetRequirement(test.runOnRequirements, asTarget);
  if (unmet) return result('skipped', unmet);
  for (const op of test.operations) {
    const unsupported = UNSUPPORTED_OPERATIONS[op.name];
    if (unsupported) return result('skipped', `${op.name}: ${unsupported}`);
    const problem = argumentProblems(op);
    if (problem) return result('skipped', problem);
  }
  const unchecked: string[] = [];
  if (test.expectEvents) {
    const checksSomethingElse = test.outcome !== undefined || test.operations.some((o) => o.expectResult !== undefined || o.expectError !== undefined);
    if (!checksSomethingElse) return result('skipped', 'only checks command monitoring events (expectEvents)');
    unchecked.push('command monitoring events (expectEvents)');
  }
  const client = await target.open();
  try {
    for (const seed of file.initialData ?? []) {
      const db = client.db(seed.databaseName);
      await db.dropCollection(seed.collectionName);
      if (seed.documents.length > 0) await db.collection(seed.collectionName).insertMany(seed.documents);
      else await db.createCollection(seed.collectionName);
    }
    let entities: Entities;
    try {
      entities = buildEntities(client, file);
    } catch (e) {
      if (e instanceof Skip) return result('skipped', e.message);
      throw e;
    }
    for (const [i, op] of test.operations.entries()) {
      let actual: unknown;
      let error: unknown;
      try {
        actual = await execute(op, entities);
      } catch (e) {
        if (e instanceof Skip) return result('skipped', e.message);
        error = e;
      }
      if (op.ignoreResultAndError) continue;
      if (op.expectError) {
        if (error === undefined) return result('failed', `operation ${i} (${op.name}): expected an error, got ${EJSON.stringify(actual)}`);
        const problem = checkError(error, op.expectError);
        if (problem) return result('failed', `operation ${i} (${op.name}): ${problem}`);
        continue;
      }
      if (error !== undefined) return result('failed', `operation ${i} (${op.name}) threw: ${error instanceof Error ? error.message : text(error)}`);
      if (op.expectResult !== undefined && entities.unacknowledged.has(op.object)) {
        unchecked.push(`result of ${op.name} with w: 0 (the API acknowledges every write)`);
      } else if (op.expectResult !== undefined) {
        const problem = ITERABLE_RESULTS.has(op.name) ? matchIterable(actual, op.expectResult) : match(actual, op.expectResult, true);
        if (problem) return result('failed', `operation ${i} (${op.name}): ${problem}`);
      }
    }
    for (const expected of test.outcome ?? []) {
      const docs = await client.db(expected.databaseName).collection(expected.collectionName).find({}, undefined, { sort: { _id: 1 } }).toArray();
      const problem = match(docs, expected.documents, false, `outcome ${expected.databaseName}.${expected.collectionName}`);
      if (problem) return result('failed', problem);
    }
    return result('passed', undefined, unchecked.length ? unchecked : undefined);
  } finally {
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
