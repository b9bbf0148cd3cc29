/**
 * Several data-access operations of one user in ONE transaction, for callers that must commit all or
 * nothing (the GraphQL endpoint runs every mutation of an operation this way). Every read and write
 * goes through the transaction's session, so later operations see earlier ones, and a refused write or
 * any failure rolls back everything. The same rules as DataAccess apply: filters and role pushdown on
 * reads, hidden documents absent, unreadable fields removed, inserts, updates and deletes checked
 * against pre- and post-images. All operations must target collections of one data-source service.
 * Only the actions a document API needs are here: find, findOne, insertOne, insertMany,
 * findOneAndUpdate, findOneAndReplace, findOneAndDelete, updateMany, deleteMany.
 */
import { applyUpdate, buildProjector, checkReplacement, checkUpdateDocument, upsertBase, type CollectionHandle, type DataSession, type Document, type SortSpec } from '@tessera/datastore';
import type { DataSources } from '@tessera/platform';
import type { RuleUser, RulesAccess } from '@tessera/rules';
import { Int32, ObjectId } from 'bson';
import { DataAccessError, DataAccessErrorCode } from './data-access.error';
import type { DataAccessApp } from './data-access.service';
import { deploymentKey, NamespaceRulesCache } from './namespace-rules';
import { assertUserQuery } from './restrictions';

export interface TransactionRequest {
  action: string;
  database: string;
  collection: string;
  args: Document;
}

export interface UserTransactionScope {
  execute(request: TransactionRequest): Promise<unknown>;
}

export class UserTransactions {
  private readonly rules = new NamespaceRulesCache();

  constructor(private readonly dataSources: DataSources) {}

  /** Runs `body` in one transaction on `service` as `user`; commits when it resolves, rolls back when it throws. */
  async run<T>(app: DataAccessApp, service: string, user: RuleUser, body: (scope: UserTransactionScope) => Promise<T>): Promise<T> {
    const linked = this.dataSources.forService(app.config, service);
    if (linked.federated) throw new DataAccessError(DataAccessErrorCode.SystemOnly, `federated data source '${service}' is only accessible from a system function`);
    const session = linked.client.startSession();
    const accesses = new Map<string, RulesAccess>();
    const accessFor = (database: string, collection: string): RulesAccess => {
      const key = `${database}\u0000${collection}`;
      let access = accesses.get(key);
      if (!access) {
        access = this.rules.rulesFor(deploymentKey(app.id, app.deploymentId, app.config), linked.service, database, collection).forRequest({ user });
        accesses.set(key, access);
      }
      return access;
    };
    try {
      return await session.withTransaction((s) =>
        body({
          execute: (request) => new TransactionOperation(linked.client.db(request.database).collection(request.collection), accessFor(request.database, request.collection), s).run(request.action, request.args),
        }),
      );
    } finally {
      await session.endSession();
    }
  }
}

function objectArg(args: Document, key: string, required = false): Document {
  const value = args[key];
  if (value === undefined || value === null) {
    if (required) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `${key} is required`);
    return {};
  }
  if (typeof value !== 'object' || Array.isArray(value)) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `${key} must be a document`);
  return value as Document;
}

class TransactionOperation {
  constructor(
    private readonly collection: CollectionHandle,
    private readonly access: RulesAccess,
    private readonly session: DataSession,
  ) {}

  async run(action: string, args: Document): Promise<unknown> {
    const sort = args['sort'] as SortSpec | undefined;
    switch (action) {
      case 'find':
        return this.readVisible(this.query(args, 'query'), sort, typeof args['limit'] === 'number' ? args['limit'] : undefined, args['project'] as Document | undefined);
      case 'findOne':
        return (await this.readVisible(this.query(args, 'query'), sort, 1, args['project'] as Document | undefined))[0] ?? null;
      case 'insertOne': {
        const document = withId(objectArg(args, 'document', true));
        await this.checked(await this.access.checkInsert(document));
        await this.collection.insertOne(document, { session: this.session });
        return { insertedId: document['_id'] };
      }
      case 'insertMany': {
        const documents = (args['documents'] as Document[]).map(withId);
        for (const document of documents) await this.checked(await this.access.checkInsert(document));
        for (const document of documents) await this.collection.insertOne(document, { session: this.session });
        return { insertedIds: documents.map((d) => d['_id']) };
      }
      case 'findOneAndUpdate': {
        const update = args['update'] as Document;
        checkUpdateDocument(update);
        const query = this.query(args, 'filter');
        const [pre] = await this.targets(query, 1, sort);
        if (!pre) {
          if (args['upsert'] !== true) return null;
          const post = withId(applyUpdate(upsertBase(query), update, { filter: query, inserting: true }));
          await this.checked(await this.access.checkInsert(post));
          await this.collection.insertOne(post, { session: this.session });
          return this.visible(post);
        }
        const post = applyUpdate(pre, update, { filter: query });
        await this.checked(await this.access.checkUpdate(pre, post));
        await this.collection.updateOne({ _id: pre['_id'] }, update, { session: this.session });
        return this.visible(args['returnNewDocument'] === true ? post : pre);
      }
      case 'findOneAndReplace': {
        const replacement = objectArg(args, 'update', true);
        checkReplacement(replacement);
        const query = this.query(args, 'filter');
        const [pre] = await this.targets(query, 1, sort);
        if (!pre) {
          if (args['upsert'] !== true) return null;
          const post = withId({ ...upsertBase(query), ...replacement });
          await this.checked(await this.access.checkInsert(post));
          await this.collection.insertOne(post, { session: this.session });
          return this.visible(post);
        }
        const post: Document = { ...replacement, _id: pre['_id'] };
        await this.checked(await this.access.checkUpdate(pre, post));
        await this.collection.replaceOne({ _id: pre['_id'] }, post, { session: this.session });
        return this.visible(args['returnNewDocument'] === true ? post : pre);
      }
      case 'findOneAndDelete': {
        const [pre] = await this.targets(this.query(args, 'filter'), 1, sort);
        if (!pre) return null;
        await this.checked(await this.access.checkDelete(pre));
        await this.collection.deleteOne({ _id: pre['_id'] }, { session: this.session });
        return this.visible(pre);
      }
      case 'updateMany': {
        const update = args['update'] as Document;
        checkUpdateDocument(update);
        const query = this.query(args, 'query');
        const targets = await this.targets(query, undefined, undefined);
        const posts = targets.map((pre) => applyUpdate(pre, update, { filter: query }));
        for (let i = 0; i < targets.length; i += 1) await this.checked(await this.access.checkUpdate(targets[i], posts[i]));
        let modified = 0;
        for (const pre of targets) modified += (await this.collection.updateOne({ _id: pre['_id'] }, update, { session: this.session })).modifiedCount;
        return { matchedCount: new Int32(targets.length), modifiedCount: new Int32(modified) };
      }
      case 'deleteMany': {
        const targets = await this.targets(this.query(args, 'query'), undefined, undefined);
        for (const pre of targets) await this.checked(await this.access.checkDelete(pre));
        for (const pre of targets) await this.collection.deleteOne({ _id: pre['_id'] }, { session: this.session });
        return { deletedCount: new Int32(targets.length) };
      }
      default:
        throw new DataAccessError(DataAccessErrorCode.ServiceCommandNotFound, `function not found: '${action}'`);
    }
  }

  private query(args: Document, key: string): Document {
    const query = objectArg(args, key);
    assertUserQuery(query, 'a query');
    return query;
  }

  private async readVisible(query: Document, sort: SortSpec | undefined, limit: number | undefined, projection: Document | undefined): Promise<Document[]> {
    const prepared = await this.access.prepareQuery(query);
    if (prepared.matchesNothing) return [];
    const project = buildProjector(projection, query);
    const cursor = this.collection.find(prepared.query, Object.keys(prepared.projection).length ? prepared.projection : undefined, { session: this.session });
    if (sort) cursor.sort(sort);
    // An exact pushdown matches only visible documents, so the store can stop at the limit.
    if (prepared.exact && limit !== undefined && limit > 0) cursor.limit(limit);
    const out: Document[] = [];
    for (const stored of await cursor.toArray()) {
      const decision = await this.access.canRead(stored);
      if (!decision.document) continue;
      out.push(project ? project(decision.document) : decision.document);
      if (limit !== undefined && limit > 0 && out.length >= limit) break;
    }
    return out;
  }

  private async targets(query: Document, limit: number | undefined, sort: SortSpec | undefined): Promise<Document[]> {
    const prepared = await this.access.prepareQuery(query);
    if (prepared.matchesNothing) return [];
    const cursor = this.collection.find(prepared.query, undefined, { session: this.session });
    if (sort) cursor.sort(sort);
    const out: Document[] = [];
    for (const stored of await cursor.toArray()) {
      if (!(await this.access.canRead(stored)).allowed) continue;
      out.push(stored);
      if (limit && out.length >= limit) break;
    }
    return out;
  }

  private async visible(document: Document): Promise<Document | null> {
    return (await this.access.canRead(document)).document ?? null;
  }

  private async checked(decision: { allowed: boolean; error?: Error }): Promise<void> {
    if (!decision.allowed) throw decision.error ?? new DataAccessError(DataAccessErrorCode.InvalidParameter, 'write not permitted');
  }
}

function withId(document: Document): Document {
  return document['_id'] === undefined ? { _id: new ObjectId(), ...document } : document;
}
