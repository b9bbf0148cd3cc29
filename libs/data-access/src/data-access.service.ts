/**
 * The data-access API as callers reach it (spec 4.4): functions through `context.services.get(...)`, and
 * clients through `functions/call` on the data-source service. An action and its wire-shaped arguments
 * object go in; BSON values come out. System callers go straight to the datastore. User callers get the
 * app's rules: filters and what the roles require pushed into the query so the store does the work,
 * documents no role applies to hidden, unreadable fields removed, writes checked against pre- and
 * post-image inside a transaction and refused with App Services' errors, restricted selectors, admin
 * calls and federated sources refused. This module must not know about HTTP or the sandbox.
 */
import { appEnvironment, type AppConfig } from '@tessera/app-config';
import { applyUpdate, buildProjector, type ChangeEvent, checkReplacement, cloneValue, checkUpdateDocument, runPipeline, upsertBase, type CollectionHandle, type DataSession, type Document, type SortSpec } from '@tessera/datastore';
import type { DataSources, LinkedDataSource } from '@tessera/platform';
import type { DecisionTrace, ReadDecision, RuleFunctionCaller, RuleUser, RulesAccess } from '@tessera/rules';
import { Int32, Long, ObjectId } from 'bson';
import { DataAccessError, DataAccessErrorCode } from './data-access.error';
import { deploymentKey, NamespaceRulesCache } from './namespace-rules';
import { arrayFilterPaths, pipelinePaths, projectionPaths, queryPaths, sortPaths, updatePaths } from './field-references';
import { UserChangeFeed } from './watch-events';
import { assertReadablePaths, assertUserPipeline, assertUserQuery } from './restrictions';

export type UserCaller = { kind: 'user'; user: RuleUser; request?: Record<string, unknown> };
export type DataAccessCaller = { kind: 'system' } | UserCaller;

/** One operation of a transaction (DataAccess.transaction): the action, its namespace and arguments. */
export interface ScopedOperation {
  action: string;
  database: string;
  collection: string;
  args: Document;
}

export interface DataAccessApp {
  /** The app's `_id`. */
  id: string;
  /** The live deployment's id, so compiled rules are reused until the next deploy. */
  deploymentId: string | undefined;
  config: AppConfig;
}

export interface DataAccessRequest {
  app: DataAccessApp;
  /** The data-source service's name (or `mongodb-atlas` for the app's cluster). */
  service: string;
  /** Wire name: find, findOne, insertOne, aggregate, count, ... and getDBNames, getCollectionNames. */
  action: string;
  database?: string;
  collection?: string;
  /** The wire arguments object (query, project, sort, limit, filter, update, document, pipeline, ...). */
  args: Document;
  caller: DataAccessCaller;
  values?: Record<string, unknown>;
  environment?: { tag?: string; values?: Record<string, unknown> };
  /** `%function` in rules. */
  callFunction?: RuleFunctionCaller;
  /** Correlation id and trace context of the request, for the messages `%function` sends. */
  headers?: Readonly<Record<string, string>>;
}

export interface DataAccessOptions {
  /** Runs an app function for `%function` in rules (as system); without it such rules fail with RuleFunctionFailed. */
  callFunction?: (appId: string, name: string, args: unknown[], headers: Readonly<Record<string, string>> | undefined) => Promise<unknown>;
  /** Receives every rule decision's trace (the host logs them at debug level). Tracing costs: leave unset otherwise. */
  onTrace?: (trace: DecisionTrace, request: { app: string; namespace: string; action: string; user?: string }) => void;
}

interface Target {
  linked: LinkedDataSource;
  database: string;
  collectionName: string;
  collection: CollectionHandle;
}

const readActions = new Set(['find', 'findOne', 'aggregate', 'count', 'countDocuments', 'distinct']);

export class DataAccess {
  private readonly rules = new NamespaceRulesCache();
  private readonly values = new Map<string, Record<string, unknown>>();
  private readonly environments = new Map<string, { tag: string; values: Record<string, unknown> }>();

  constructor(
    private readonly dataSources: DataSources,
    private readonly options: DataAccessOptions = {},
  ) {}

  /**
   * Runs one operation. `session`, when given, is an open transaction (DataAccessSession): the operation
   * reads and writes inside it.
   */
  async execute(request: DataAccessRequest, session?: DataSession): Promise<unknown> {
    const { action, caller } = request;
    if (action === 'getDBNames' || action === 'getCollectionNames') {
      const linked = this.dataSources.forService(request.app.config, request.service);
      if (caller.kind !== 'system') throw new DataAccessError(DataAccessErrorCode.SystemOnly, `${action} is only available in a system function`);
      return action === 'getDBNames' ? linked.client.admin().getDBNames() : linked.client.db(this.require(request.database, 'database')).getCollectionNames();
    }
    const target = this.target(request);
    refuseLocaleCollation(request.args);
    if (caller.kind === 'system') return this.asSystem(target.collection, action, request.args, session);
    if (!readActions.has(action) && !writeActions.has(action)) throw unknownAction(action);
    return this.userOperation(request, caller, target, session).run(action, request.args);
  }

  /**
   * A session on one data-source service whose transactions a caller opens and closes itself (a function's
   * `startSession()`): each operation runs as its own request's caller, under the same rules as `execute`.
   */
  startSession(scope: Pick<DataAccessRequest, 'app' | 'service' | 'caller'>): DataAccessSession {
    return new DataAccessSession(this, scope.service, this.linked(scope).client.startSession());
  }

  /**
   * Runs `body` in ONE transaction on the request's data-source service as the caller: every operation
   * `body` executes goes through the same rule-enforced path as `execute` (UserOperation, with its traces
   * and skip handling) inside the transaction's session, so later operations see earlier ones, and a
   * refused write or any failure rolls back everything.
   */
  async transaction<T>(scope: Omit<DataAccessRequest, 'action' | 'args' | 'database' | 'collection'>, body: (execute: (operation: ScopedOperation) => Promise<unknown>) => Promise<T>): Promise<T> {
    const linked = this.linked(scope);
    const session = linked.client.startSession();
    const caller = scope.caller;
    try {
      return await session.withTransaction((s) =>
        body((operation) => {
          const request: DataAccessRequest = { ...scope, ...operation };
          if (!readActions.has(operation.action) && !writeActions.has(operation.action)) throw unknownAction(operation.action);
          const target = this.target(request);
          // The system (the admin API's GraphQL runs) writes without rules, inside the same transaction.
          if (caller.kind === 'system') return this.asSystem(target.collection, operation.action, operation.args, s);
          return this.userOperation(request, caller, target, s).run(operation.action, operation.args);
        }),
      );
    } finally {
      await session.endSession();
    }
  }

  /**
   * Opens a change stream on the request's collection for a user (`args`: `filter` or `ids`). The filter
   * is checked before the stream opens, as a query is (restricted selectors, unknown operators, withheld
   * fields): a bad filter is the caller's 400, never a failure inside the store's commit path. Every event
   * passes the read rules as that user (watch-events.ts) before the filter sees it.
   */
  watch(request: Omit<DataAccessRequest, 'action'> & { caller: UserCaller }): AsyncIterable<ChangeEvent> {
    const scoped: DataAccessRequest = { ...request, action: 'watch' };
    const target = this.target(scoped);
    // Change events are the stream's own copies: the rules need not copy what they let through.
    const access = this.accessFor(scoped, request.caller, target, false);
    // Pre-images decide deletes and removed fields: the embedded engine keeps them for every change,
    // MongoDB where the collection has changeStreamPreAndPostImages (else watch-events.ts falls back).
    return new UserChangeFeed(access, request.args, () => target.collection.watch([], { fullDocument: 'updateLookup', fullDocumentBeforeChange: 'whenAvailable' }));
  }

  private linked(request: Pick<DataAccessRequest, 'app' | 'service' | 'caller'>): LinkedDataSource {
    const linked = this.dataSources.forService(request.app.config, request.service);
    if (linked.federated && request.caller.kind !== 'system') {
      throw new DataAccessError(DataAccessErrorCode.SystemOnly, `federated data source '${request.service}' is only accessible from a system function`);
    }
    return linked;
  }

  private target(request: DataAccessRequest): Target {
    const linked = this.linked(request);
    const database = this.require(request.database ?? request.args['database'], 'database');
    const collectionName = this.require(request.collection ?? request.args['collection'], 'collection');
    return { linked, database, collectionName, collection: linked.client.db(database).collection(collectionName) };
  }

  private accessFor(request: DataAccessRequest, caller: UserCaller, target: Target, copy: boolean): RulesAccess {
    const compiled = this.rules.rulesFor(deploymentKey(request.app.id, request.app.deploymentId, request.app.config), target.linked.service, target.database, target.collectionName);
    const callFunction = request.callFunction ?? this.functionCallerFor(request.app.id, request.headers);
    return compiled.forRequest({
      user: caller.user,
      request: caller.request,
      values: request.values ?? this.valuesOf(request.app),
      environment: request.environment ?? this.environmentOf(request.app),
      ...(callFunction ? { callFunction } : {}),
      explain: this.options.onTrace !== undefined,
      copy: copy ? cloneValue : undefined,
    });
  }

  private userOperation(request: DataAccessRequest, caller: UserCaller, target: Target, session?: DataSession): UserOperation {
    // Reads take the store's own documents (see readVisible): the rules copy what they let through.
    const access = this.accessFor(request, caller, target, readActions.has(request.action));
    return new UserOperation(target.linked, target.collection, access, session, (trace) =>
      this.options.onTrace?.(trace, { app: request.app.id, namespace: `${target.database}.${target.collectionName}`, action: request.action, user: caller.user.id }),
    );
  }

  /** `%%values` of the app: plain values by name (values from secrets are not exposed to rules). */
  private valuesOf(app: DataAccessApp): Record<string, unknown> {
    const key = deploymentKey(app.id, app.deploymentId, app.config);
    let values = this.values.get(key);
    if (!values) {
      values = {};
      for (const value of app.config.values) if (!value.from_secret) values[value.name] = value.value;
      if (this.values.size > 256) this.values.clear();
      this.values.set(key, values);
    }
    return values;
  }

  /** `%%environment` of the app: the selected environment's tag and values. */
  private environmentOf(app: DataAccessApp): { tag: string; values: Record<string, unknown> } {
    const key = deploymentKey(app.id, app.deploymentId, app.config);
    let environment = this.environments.get(key);
    if (!environment) {
      environment = appEnvironment(app.config);
      if (this.environments.size > 256) this.environments.clear();
      this.environments.set(key, environment);
    }
    return environment;
  }

  private functionCallerFor(appId: string, headers: Readonly<Record<string, string>> | undefined): RuleFunctionCaller | undefined {
    const call = this.options.callFunction;
    return call ? (name, args) => call(appId, name, args, headers) : undefined;
  }

  private require(value: unknown, name: string): string {
    if (typeof value !== 'string' || value.length === 0) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `${name} name is required`);
    return value;
  }

  private async asSystem(collection: CollectionHandle, action: string, args: Document, session: DataSession | undefined): Promise<unknown> {
    const a = new Args(args);
    const inSession = session ? { session } : {};
    switch (action) {
      case 'find': {
        const cursor = collection.find(a.query('query'), a.optionalDocument('project') ?? a.optionalDocument('projection'), inSession);
        const sort = a.sort();
        if (sort) cursor.sort(sort);
        const skip = a.optionalNumber('skip');
        if (skip) cursor.skip(skip);
        const limit = a.optionalNumber('limit');
        if (limit) cursor.limit(limit);
        return cursor.toArray();
      }
      case 'findOne': {
        const cursor = collection.find(a.query('query'), a.optionalDocument('project') ?? a.optionalDocument('projection'), inSession);
        const sort = a.sort();
        if (sort) cursor.sort(sort);
        return (await cursor.limit(1).toArray())[0] ?? null;
      }
      case 'findOneAndUpdate':
        return collection.findOneAndUpdate(a.query('filter'), a.update(), { ...a.modifyOptions(), ...inSession });
      case 'findOneAndReplace':
        if (args['update'] === undefined) return collection.findOneAndDelete(a.query('filter'), { ...a.deleteOptions(), ...inSession });
        return collection.findOneAndReplace(a.query('filter'), a.document('update'), { ...a.modifyOptions(), ...inSession });
      case 'findOneAndDelete':
        return collection.findOneAndDelete(a.query('filter'), { ...a.deleteOptions(), ...inSession });
      case 'insertOne':
        return { insertedId: (await collection.insertOne(a.document('document'), inSession)).insertedId };
      case 'insertMany':
        return { insertedIds: (await collection.insertMany(a.documents('documents'), { ordered: args['ordered'] !== false, ...inSession })).insertedIds };
      case 'updateOne':
      case 'updateMany': {
        const options = { upsert: args['upsert'] === true, ...(a.arrayFilters() ? { arrayFilters: a.arrayFilters() } : {}), ...inSession };
        const result = action === 'updateOne' ? await collection.updateOne(a.query('query'), a.update(), options) : await collection.updateMany(a.query('query'), a.update(), options);
        return updateResult(result.matchedCount, result.modifiedCount, result.upsertedId);
      }
      case 'deleteOne':
        return { deletedCount: new Int32((await collection.deleteOne(a.query('query'), inSession)).deletedCount) };
      case 'deleteMany':
        return { deletedCount: new Int32((await collection.deleteMany(a.query('query'), inSession)).deletedCount) };
      case 'aggregate':
        return collection.aggregate(a.pipeline(), inSession).toArray();
      case 'count':
      case 'countDocuments': {
        const limit = a.optionalNumber('limit');
        return Long.fromNumber(await collection.count(a.query('query'), limit ? { limit, ...inSession } : inSession));
      }
      case 'distinct':
        return collection.distinct(a.field(), a.query('query'), inSession);
      case 'bulkWrite':
        await collection.bulkWrite(a.documents('operations') as never, { ordered: args['ordered'] !== false, ...inSession });
        return null;
      default:
        throw unknownAction(action);
    }
  }
}

const writeActions = new Set(['findOneAndUpdate', 'findOneAndReplace', 'findOneAndDelete', 'insertOne', 'insertMany', 'updateOne', 'updateMany', 'deleteOne', 'deleteMany', 'bulkWrite']);

/** The single write (action and its arguments) one bulkWrite operation names, as the driver spells it. */
function singleWriteOf(operation: Document, index: number): [string, Document] {
  const kinds = Object.keys(operation);
  const kind = kinds[0];
  const spec = kind === undefined ? undefined : (operation[kind]);
  if (kinds.length !== 1 || kind === undefined || typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `bulkWrite operation ${index} must be one of insertOne, updateOne, updateMany, replaceOne, deleteOne, deleteMany`);
  }
  const op = spec as Document;
  switch (kind) {
    case 'insertOne':
      return ['insertOne', { document: op['document'] }];
    case 'updateOne':
    case 'updateMany':
      return [kind, { query: op['filter'], update: op['update'], upsert: op['upsert'], ...(op['arrayFilters'] === undefined ? {} : { arrayFilters: op['arrayFilters'] }) }];
    case 'replaceOne':
      // findOneAndReplace without a replacement deletes: a replaceOne must name its replacement.
      if (typeof op['replacement'] !== 'object' || op['replacement'] === null) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `bulkWrite operation ${index}: replaceOne needs a replacement document`);
      return ['findOneAndReplace', { filter: op['filter'], update: op['replacement'], upsert: op['upsert'] }];
    case 'deleteOne':
    case 'deleteMany':
      return [kind, { query: op['filter'] }];
    default:
      throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `bulkWrite operation ${index} must be one of insertOne, updateOne, updateMany, replaceOne, deleteOne, deleteMany, not ${kind}`);
  }
}

function unknownAction(action: string): DataAccessError {
  return new DataAccessError(DataAccessErrorCode.ServiceCommandNotFound, `function not found: '${action}'`);
}

function updateResult(matched: number, modified: number, upsertedId: unknown): Document {
  const result: Document = { matchedCount: new Int32(matched), modifiedCount: new Int32(modified) };
  if (upsertedId !== undefined && upsertedId !== null) result['upsertedId'] = upsertedId;
  return result;
}

/**
 * Remote data access takes the simple collation only (what every query here does); a locale's collation
 * is refused rather than ignored. Drivers reach the embedded datastore's collations through its wire server.
 */
function refuseLocaleCollation(args: Document | undefined): void {
  const collation = args?.['collation'];
  if (collation === undefined || collation === null) return;
  const simple = typeof collation === 'object' && !Array.isArray(collation) && (collation as Document)['locale'] === 'simple' && Object.keys(collation).length === 1;
  if (!simple) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, "collation is not supported by remote data access (only {locale: 'simple'})");
}

/** Typed access to a wire arguments object, with App Services-style messages for bad input. */
class Args {
  constructor(private readonly args: Document) {}

  query(key: string): Document {
    const value = this.args[key];
    if (value === undefined || value === null) return {};
    return this.object(value, key);
  }

  document(key: string): Document {
    const value = this.args[key];
    if (value === undefined || value === null) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `${key} is required`);
    return this.object(value, key);
  }

  optionalDocument(key: string): Document | undefined {
    const value = this.args[key];
    return value === undefined || value === null ? undefined : this.object(value, key);
  }

  documents(key: string): Document[] {
    const value = this.args[key];
    if (!Array.isArray(value)) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `${key} must be an array`);
    return value.map((item, i) => this.object(item, `${key}[${i}]`));
  }

  update(): Document | Document[] {
    const value = this.args['update'];
    if (Array.isArray(value)) return value.map((stage, i) => this.object(stage, `update[${i}]`));
    return this.document('update');
  }

  pipeline(): Document[] {
    return this.documents('pipeline');
  }

  sort(): SortSpec | undefined {
    return this.optionalDocument('sort') as SortSpec | undefined;
  }

  arrayFilters(): Document[] | undefined {
    return this.args['arrayFilters'] === undefined ? undefined : this.documents('arrayFilters');
  }

  optionalNumber(key: string): number | undefined {
    const value = this.args[key];
    if (value === undefined || value === null) return undefined;
    const number = typeof value === 'number' ? value : typeof value === 'object' && 'valueOf' in value ? Number((value as { valueOf(): unknown }).valueOf()) : NaN;
    if (!Number.isFinite(number) || number < 0) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `${key} must be a non-negative number`);
    return number;
  }

  field(): string {
    const value = this.args['key'] ?? this.args['field'];
    if (typeof value !== 'string' || !value) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, 'distinct requires a field name (key)');
    return value;
  }

  modifyOptions(): { upsert: boolean; returnNewDocument: boolean; sort?: SortSpec; projection?: Document } {
    const sort = this.sort();
    const projection = this.optionalDocument('projection');
    return { upsert: this.args['upsert'] === true, returnNewDocument: this.args['returnNewDocument'] === true, ...(sort ? { sort } : {}), ...(projection ? { projection } : {}) };
  }

  deleteOptions(): { sort?: SortSpec; projection?: Document } {
    const sort = this.sort();
    const projection = this.optionalDocument('projection');
    return { ...(sort ? { sort } : {}), ...(projection ? { projection } : {}) };
  }

  private object(value: unknown, key: string): Document {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `${key} must be a document`);
    return value as Document;
  }
}

/** One data-access call made as a user: every document read or written passes the namespace's rules. */
class UserOperation {
  constructor(
    private readonly linked: LinkedDataSource,
    private readonly collection: CollectionHandle,
    private readonly access: RulesAccess,
    /** The caller's transaction, when the operation is one of several (DataAccess.transaction). */
    private readonly session: DataSession | undefined,
    private readonly trace: (trace: DecisionTrace) => void,
  ) {}

  /**
   * `collection.bulkWrite()` in a user function (App Services offered it there too): each operation is the
   * single write it names, under the same rules, in order. Ordered, the first refused or failed operation
   * stops the rest; unordered, every operation is tried and the first failure is thrown after them.
   */
  private async bulkWrite(operations: Document[], ordered: boolean): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (const [index, operation] of operations.entries()) {
      try {
        const [action, args] = singleWriteOf(operation, index);
        await this.run(action, args);
      } catch (error) {
        if (ordered) throw error;
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  async run(action: string, args: Document): Promise<unknown> {
    const a = new Args(args);
    switch (action) {
      case 'find': {
        const query = this.userQuery(a, 'query');
        const options = { sort: this.userSort(a), skip: a.optionalNumber('skip'), limit: a.optionalNumber('limit'), projection: this.userProjection(a.optionalDocument('project') ?? a.optionalDocument('projection')) };
        return this.readVisible(query, options);
      }
      case 'findOne': {
        const query = this.userQuery(a, 'query');
        return (await this.readVisible(query, { sort: this.userSort(a), limit: 1, projection: this.userProjection(a.optionalDocument('project') ?? a.optionalDocument('projection')) }))[0] ?? null;
      }
      case 'count':
      case 'countDocuments': {
        const query = this.userQuery(a, 'query');
        return Long.fromNumber((await this.readVisible(query, { limit: a.optionalNumber('limit') })).length);
      }
      case 'distinct': {
        const field = a.field();
        this.readableOnly([field], 'distinct');
        const visible = await this.readVisible(this.userQuery(a, 'query'), {});
        return runPipeline(visible, [{ $project: { v: `$${field}` } }, { $unwind: '$v' }, { $group: { _id: '$v' } }, { $sort: { _id: 1 } }]).map((group) => group['_id']);
      }
      case 'aggregate': {
        const pipeline = a.pipeline();
        assertUserPipeline(pipeline);
        this.readableOnly(pipelinePaths(pipeline), 'an aggregation pipeline');
        return runPipeline(await this.readVisible({}, {}), pipeline);
      }
      case 'insertOne': {
        const document = withId(a.document('document'));
        await this.checked(await this.access.checkInsert(document));
        return { insertedId: (await this.collection.insertOne(document, { session: this.session })).insertedId };
      }
      case 'insertMany': {
        const documents = a.documents('documents').map(withId);
        for (const document of documents) await this.checked(await this.access.checkInsert(document));
        return { insertedIds: (await this.collection.insertMany(documents, { ordered: args['ordered'] !== false, session: this.session })).insertedIds };
      }
      case 'updateOne':
      case 'updateMany': {
        const query = this.userQuery(a, 'query');
        const update = a.update();
        checkUpdateDocument(update);
        const arrayFilters = a.arrayFilters();
        this.readableOnly([...updatePaths(update), ...arrayFilterPaths(arrayFilters, update)], 'an update');
        const outcome = await this.updateMatching(query, action === 'updateOne' ? 1 : undefined, undefined, update, arrayFilters, args['upsert'] === true);
        return updateResult(outcome.matched, outcome.modified, outcome.upsertedId);
      }
      case 'deleteOne':
      case 'deleteMany': {
        const query = this.userQuery(a, 'query');
        const deleted = await this.transaction(async (session) => {
          const targets = await this.visibleTargets(query, action === 'deleteOne' ? 1 : undefined, undefined, session);
          for (const pre of targets) await this.checked(await this.access.checkDelete(pre));
          for (const pre of targets) await this.collection.deleteOne({ _id: pre['_id'] }, { session });
          return targets.length;
        });
        return { deletedCount: new Int32(deleted) };
      }
      case 'bulkWrite':
        await this.bulkWrite(a.documents('operations'), args['ordered'] !== false);
        return null;
      case 'findOneAndUpdate': {
        const query = this.userQuery(a, 'filter');
        const update = a.update();
        checkUpdateDocument(update);
        this.readableOnly(updatePaths(update), 'an update');
        const options = this.userModifyOptions(a);
        const outcome = await this.updateMatching(query, 1, options.sort, update, undefined, options.upsert);
        const document = options.returnNewDocument ? outcome.post[0] : outcome.pre[0];
        return document ? this.visible(document, options.projection) : null;
      }
      case 'findOneAndReplace': {
        if (args['update'] === undefined) return this.findOneAndDelete(a);
        const query = this.userQuery(a, 'filter');
        const replacement = a.document('update');
        checkReplacement(replacement);
        const options = this.userModifyOptions(a);
        const result = await this.transaction(async (session) => {
          const [pre] = await this.visibleTargets(query, 1, options.sort, session);
          if (!pre) {
            if (!options.upsert) return { pre: undefined, post: undefined };
            const post = withId({ ...upsertBase(query), ...replacement });
            await this.checked(await this.access.checkInsert(post));
            await this.collection.insertOne(post, { session });
            return { pre: undefined, post };
          }
          const post: Document = { ...replacement, _id: pre['_id'] };
          await this.checked(await this.access.checkUpdate(pre, post));
          await this.collection.replaceOne({ _id: pre['_id'] }, post, { session });
          return { pre, post };
        });
        const document = options.returnNewDocument ? result.post : result.pre;
        return document ? this.visible(document, options.projection) : null;
      }
      case 'findOneAndDelete':
        return this.findOneAndDelete(a);
      default:
        throw unknownAction(action);
    }
  }

  private async findOneAndDelete(a: Args): Promise<Document | null> {
    const query = this.userQuery(a, 'filter');
    const options = a.deleteOptions();
    this.readableOnly(sortPaths(options.sort), 'a sort');
    const pre = await this.transaction(async (session) => {
      const [target] = await this.visibleTargets(query, 1, options.sort, session);
      if (!target) return undefined;
      await this.checked(await this.access.checkDelete(target));
      await this.collection.deleteOne({ _id: target['_id'] }, { session });
      return target;
    });
    return pre ? this.visible(pre, options.projection) : null;
  }

  private userQuery(a: Args, key: string): Document {
    const query = a.query(key);
    assertUserQuery(query, 'a query');
    this.readableOnly(queryPaths(query), 'a query');
    return query;
  }

  private userSort(a: Args): SortSpec | undefined {
    const sort = a.sort();
    this.readableOnly(sortPaths(sort), 'a sort');
    return sort;
  }

  private userProjection(projection: Document | undefined): Document | undefined {
    this.readableOnly(projectionPaths(projection), 'a projection');
    return projection;
  }

  private userModifyOptions(a: Args): ReturnType<Args['modifyOptions']> {
    const options = a.modifyOptions();
    this.readableOnly(sortPaths(options.sort), 'a sort');
    this.readableOnly(projectionPaths(options.projection), 'a projection');
    return options;
  }

  /**
   * Refuses a request that filters, sorts, groups or computes on a field the user may not read in every
   * document it can see: its answers would reveal the withheld value (decision 0014).
   */
  private readableOnly(paths: readonly string[], where: string): void {
    assertReadablePaths(this.access, paths, where);
  }

  /**
   * Visible documents matching `query`, in store order, after rules and then the caller's projection.
   * The store hands over its own documents (a raw read): the rules decide on them and copy what they let
   * through (the access of a read action has `copy`), so hidden documents and withheld fields cost no
   * copy and a result never shares an object with a stored document.
   */
  private async readVisible(query: Document, options: { sort?: SortSpec; skip?: number; limit?: number; projection?: Document }): Promise<Document[]> {
    if (!this.access.copies) throw new Error('readVisible needs an access that copies the documents it lets through');
    const prepared = await this.access.prepareQuery(query);
    if (prepared.trace) this.trace(prepared.trace);
    if (prepared.matchesNothing) return [];
    const project = buildProjector(options.projection, query);
    const cursor = this.collection.find(prepared.query, Object.keys(prepared.projection).length ? prepared.projection : undefined, { raw: true, session: this.session });
    if (options.sort) cursor.sort(options.sort);
    let skip = options.skip ?? 0;
    // An exact pushdown matches only visible documents, so the store can skip and limit (decision 0012).
    if (prepared.exact) {
      if (skip > 0) cursor.skip(skip);
      if (options.limit) cursor.limit(options.limit);
      skip = 0;
    }
    const out: Document[] = [];
    const sync = !this.access.rules.async;
    const accept = (decision: ReadDecision): boolean => {
      if (decision.trace) this.trace(decision.trace);
      if (!decision.document) return false;
      if (skip > 0) {
        skip -= 1;
        return false;
      }
      out.push(project ? project(decision.document) : decision.document);
      return options.limit !== undefined && options.limit > 0 && out.length >= options.limit;
    };
    // Whole results are read at once only when the store applies the limit or there is none: otherwise a
    // driver cursor must not fetch more than the documents needed to fill the limit.
    const whole = prepared.exact || !options.limit;
    if (sync && whole && skip === 0 && !prepared.trace) {
      // The common case: synchronous, and without a decision object per document (nothing to trace).
      const visible = this.access.visibleDocumentsSync(await cursor.toArray());
      return project ? visible.map((document) => project(document)) : visible;
    }
    if (sync && whole) {
      // Still synchronous per document: no promise per decision, nor per document read.
      for (const stored of await cursor.toArray()) if (accept(this.access.canReadSync(stored))) break;
      return out;
    }
    for await (const stored of cursor) {
      if (accept(sync ? this.access.canReadSync(stored) : await this.access.canRead(stored))) break;
    }
    await cursor.close();
    return out;
  }

  private async visible(document: Document, projection: Document | undefined): Promise<Document | null> {
    const decision = await this.access.canRead(document);
    if (decision.trace) this.trace(decision.trace);
    if (!decision.document) return null;
    const project = buildProjector(projection);
    return project ? project(decision.document) : (decision.document);
  }

  /** Stored documents matching `query` that the user can see (a hidden document is not matched). */
  private async visibleTargets(query: Document, limit: number | undefined, sort: SortSpec | undefined, session: DataSession): Promise<Document[]> {
    const prepared = await this.access.prepareQuery(query);
    if (prepared.matchesNothing) return [];
    const cursor = this.collection.find(prepared.query, undefined, { session });
    if (sort) cursor.sort(sort);
    const out: Document[] = [];
    for await (const stored of cursor) {
      if (!(await this.access.canRead(stored)).allowed) continue;
      out.push(stored);
      if (limit && out.length >= limit) break;
    }
    await cursor.close();
    return out;
  }

  private async updateMatching(
    query: Document,
    limit: number | undefined,
    sort: SortSpec | undefined,
    update: Document | Document[],
    arrayFilters: Document[] | undefined,
    upsert: boolean,
  ): Promise<{ matched: number; modified: number; upsertedId?: unknown; pre: Document[]; post: Document[] }> {
    return this.transaction(async (session) => {
      const targets = await this.visibleTargets(query, limit, sort, session);
      if (targets.length === 0) {
        if (!upsert) return { matched: 0, modified: 0, pre: [], post: [] };
        const post = withId(applyUpdate(upsertBase(query), update, { filter: query, inserting: true, ...(arrayFilters ? { arrayFilters } : {}) }));
        await this.checked(await this.access.checkInsert(post));
        await this.collection.insertOne(post, { session });
        return { matched: 0, modified: 0, upsertedId: post['_id'], pre: [], post: [post] };
      }
      const posts = targets.map((pre) => applyUpdate(pre, update, { filter: query, ...(arrayFilters ? { arrayFilters } : {}) }));
      for (let i = 0; i < targets.length; i += 1) await this.checked(await this.access.checkUpdate(targets[i], posts[i]));
      let modified = 0;
      for (const pre of targets) {
        const result = await this.collection.updateOne({ $and: [{ _id: pre['_id'] }, query] }, update, { session, ...(arrayFilters ? { arrayFilters } : {}) });
        modified += result.modifiedCount;
      }
      return { matched: targets.length, modified, pre: targets, post: posts };
    });
  }

  private async checked(decision: { allowed: boolean; error?: Error; trace?: DecisionTrace }): Promise<void> {
    if (decision.trace) this.trace(decision.trace);
    if (!decision.allowed) throw decision.error ?? new DataAccessError(DataAccessErrorCode.InvalidParameter, 'write not permitted');
  }

  /** Runs `body` atomically: a refused write anywhere in it changes nothing. Inside a caller's transaction, in that one. */
  private async transaction<T>(body: (session: DataSession) => Promise<T>): Promise<T> {
    if (this.session) return body(this.session);
    const session = this.linked.client.startSession();
    try {
      return await session.withTransaction(body);
    } finally {
      await session.endSession();
    }
  }
}

function withId(document: Document): Document {
  return document['_id'] === undefined ? { _id: new ObjectId(), ...document } : document;
}

/**
 * A caller's own session on one data-source service (DataAccess.startSession): it opens, commits and aborts
 * transactions when told. An operation that fails inside a transaction aborts it, as MongoDB does, so a write
 * refused by the rules halfway through (an updateMany's third document) can never be committed in part: the
 * commit that follows answers NoSuchTransaction. Operations of one session run one at a time.
 */
export class DataAccessSession {
  private queue: Promise<unknown> = Promise.resolve();
  /** A transaction was started and neither committed nor aborted by the caller (the store may have ended it). */
  private open = false;
  /** Why the open transaction ended before the caller ended it: an operation failed, or it outlived its limit. */
  private failed = false;
  private ended = false;

  constructor(
    private readonly access: DataAccess,
    readonly service: string,
    private readonly session: DataSession,
  ) {}

  inTransaction(): boolean {
    return this.open;
  }

  /** Runs one operation in this session: inside its transaction when one is open. */
  execute(request: DataAccessRequest): Promise<unknown> {
    return this.serialised(async () => {
      this.assertUsable();
      if (request.service !== this.service) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `this session belongs to service '${this.service}', not '${request.service}'`);
      if (!this.open) return this.access.execute(request);
      if (this.failed || !this.session.inTransaction()) throw abortedTransaction();
      try {
        return await this.access.execute(request, this.session);
      } catch (error) {
        this.failed = true;
        await this.session.abortTransaction();
        throw error;
      }
    });
  }

  startTransaction(): Promise<void> {
    return this.serialised(() => {
      this.assertUsable();
      if (this.open) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, 'Transaction already in progress on this session.');
      this.session.startTransaction();
      this.open = true;
      this.failed = false;
      return Promise.resolve();
    });
  }

  commitTransaction(): Promise<void> {
    return this.serialised(async () => {
      this.assertUsable();
      if (!this.open) throw new DataAccessError(DataAccessErrorCode.NoSuchTransaction, 'No transaction started');
      this.open = false;
      if (this.failed || !this.session.inTransaction()) {
        if (this.session.inTransaction()) await this.session.abortTransaction();
        throw abortedTransaction();
      }
      try {
        await this.session.commitTransaction();
      } catch (error) {
        // MongoDB's drivers may try such a commit again: the transaction stays open for it.
        const labels = (error as { errorLabels?: unknown }).errorLabels;
        if (Array.isArray(labels) && labels.includes('UnknownTransactionCommitResult')) this.open = true;
        throw error;
      }
    });
  }

  /** Aborts the open transaction; nothing to abort (none started, or already ended by a failure) is no error. */
  abortTransaction(): Promise<void> {
    return this.serialised(async () => {
      this.open = false;
      this.failed = false;
      if (this.session.inTransaction()) await this.session.abortTransaction();
    });
  }

  /** Aborts what is still open and ends the session; later operations are refused. */
  end(): Promise<void> {
    return this.serialised(async () => {
      if (this.ended) return;
      this.ended = true;
      this.open = false;
      try {
        if (this.session.inTransaction()) await this.session.abortTransaction();
      } finally {
        await this.session.endSession();
      }
    });
  }

  private assertUsable(): void {
    if (this.ended) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, 'this session has ended');
  }

  private serialised<T>(step: () => Promise<T>): Promise<T> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

function abortedTransaction(): DataAccessError {
  return new DataAccessError(DataAccessErrorCode.NoSuchTransaction, 'Transaction has been aborted (an operation inside it failed, or it outlived its time limit)');
}
