/**
 * The resolvers of the generated schema: each root field compiles to one data-access operation run as the
 * calling user (rules applied by @tessera/data-access), relationships go through RelationshipBatches, and
 * custom resolvers call the app's function over the message bus. Nothing here knows about HTTP.
 */
import { Injectable } from '@nestjs/common';
import { type Caller, type CallerUser, type RequestMetadata, ruleUserOf, SYSTEM_CALLER_USER } from '@tessera/contracts';
import { DataAccess, type DataAccessApp, UserTransactions, type UserTransactionScope } from '@tessera/data-access';
import {
  ArgumentTranslator,
  type CollectionModel,
  type CustomResolverModel,
  type FieldModel,
  type GraphqlModel,
  type GraphqlResolvers,
  type RootFieldPlan,
} from '@tessera/graphql-schema';
import { type FunctionCallOptions, FunctionCalls } from '@tessera/messaging';
import type { RuleUser } from '@tessera/rules';
import { ObjectId } from 'bson';
import { type ExecutionResult, type FieldNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql/index.js';
import { GraphqlEndpointError } from './graphql.error';
import { RelationshipBatches } from './relationship-batches';

type Doc = Record<string, unknown>;

/** Everything one GraphQL request resolves with. */
export interface GraphqlRequestContext {
  app: DataAccessApp;
  model: GraphqlModel;
  /** `%%user`, derived once from the caller identity. */
  user: RuleUser;
  /** The operation runs as the system user (the admin API's runs): data access bypasses the rules. */
  system: boolean;
  /** The caller as functions see it (`context.user`). */
  caller: Caller;
  metadata: RequestMetadata;
  /** Custom resolvers' function calls: the signal (the HTTP client went away) and the request's headers, made at the first call. */
  edge: () => FunctionCallOptions;
  translator: ArgumentTranslator;
  batches: RelationshipBatches;
  /**
   * Mutable per-request state, held by reference because graphql-yoga copies the context object:
   * the data-access operations run, and while a mutation operation runs, its one transaction.
   */
  state: { operations: number; transaction?: UserTransactionScope };
}

/** Selected relationship fields by the field node that selects them: documents are cached by yoga, so are these. */
const selections = new WeakMap<FieldNode, FieldModel[]>();

/** The relationship fields of `c` that the root field's selection set asks for without a directive. */
function selectedRelationships(c: CollectionModel, info: GraphQLResolveInfo): FieldModel[] {
  const cacheable = info.fieldNodes.length === 1;
  const cached = cacheable ? selections.get(info.fieldNodes[0]) : undefined;
  if (cached) return cached;
  const relationships = new Map(c.fields.filter((field) => field.kind === 'relationship').map((field) => [field.name, field]));
  const found = new Set<FieldModel>();
  const visit = (set: SelectionSetNode | undefined): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.directives?.length) continue;
      if (selection.kind === Kind.FIELD) {
        const field = relationships.get(selection.name.value);
        if (field) found.add(field);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visit(selection.selectionSet);
      } else {
        visit(info.fragments[selection.name.value]?.selectionSet);
      }
    }
  };
  if (relationships.size > 0) for (const node of info.fieldNodes) visit(node.selectionSet);
  const fields = [...found];
  if (cacheable) selections.set(info.fieldNodes[0], fields);
  return fields;
}

/** Thrown inside the transaction to roll it back when any mutation of the operation failed. */
class RollBack extends Error {}

@Injectable()
export class GraphqlExecutor implements GraphqlResolvers<GraphqlRequestContext> {
  constructor(
    private readonly dataAccess: DataAccess,
    private readonly transactions: UserTransactions,
    private readonly functions: FunctionCalls,
  ) {}

  /**
   * Runs a mutation operation in one transaction (reference A.1: if any operation fails, nothing is
   * committed): a failed mutation rolls back the others, whose results are then answered as null. Apps
   * whose collections span several data sources run each mutation in its own transaction instead.
   * Custom resolvers' functions run in the function runtime, outside this transaction.
   */
  async inTransaction(context: GraphqlRequestContext, execute: () => Promise<ExecutionResult>): Promise<ExecutionResult> {
    const services = new Set(context.model.collections.map((c) => c.service));
    if (services.size !== 1) return execute();
    const [service] = [...services];
    let result: ExecutionResult | undefined;
    try {
      await this.transactions.runAs(context.app, service, context.system ? { kind: 'system' } : { kind: 'user', user: context.user }, async (scope) => {
        context.state.transaction = scope;
        result = await execute();
        if (result.errors?.length) throw new RollBack();
      });
    } catch (error) {
      if (!(error instanceof RollBack) || !result) throw error;
      const data = result.data ? Object.fromEntries(Object.keys(result.data).map((key) => [key, null])) : result.data;
      return { ...result, data };
    } finally {
      context.state.transaction = undefined;
    }
    return result as ExecutionResult;
  }

  /** A fresh request context: the translator and batches belong to one request and its user (or the system). */
  contextFor(app: DataAccessApp, model: GraphqlModel, user: CallerUser | 'system', metadata: RequestMetadata, edge: () => FunctionCallOptions = () => ({})): GraphqlRequestContext {
    let options: FunctionCallOptions | undefined;
    const once = (): FunctionCallOptions => (options ??= edge());
    const system = user === 'system';
    const caller: Caller = system ? { type: 'system' } : { type: 'user', user };
    const context = { app, model, user: ruleUserOf(system ? SYSTEM_CALLER_USER : user), system, caller, metadata, edge: once, state: { operations: 0 } } as GraphqlRequestContext;
    context.translator = new ArgumentTranslator(model, {
      foreignKeys: async (field, target, filter) => {
        const key = field.relationship?.foreignKey ?? '_id';
        const documents = (await this.run(context, target, 'find', { query: filter, project: { [key]: 1 } })) as Doc[];
        return documents.map((d) => d[key]).filter((v) => v !== undefined);
      },
      create: async (field, target, documents) => {
        const key = field.relationship?.foreignKey ?? '_id';
        const withIds = documents.map((d) => (d['_id'] === undefined ? { _id: new ObjectId(), ...d } : d));
        await this.run(context, target, 'insertMany', { documents: withIds });
        return withIds.map((d) => d[key]);
      },
    });
    context.batches = new RelationshipBatches(async (field, keys) => {
      const relationship = field.relationship as NonNullable<FieldModel['relationship']>;
      const target = context.translator.target(relationship.target);
      return (await this.run(context, target, 'find', { query: { [relationship.foreignKey]: { $in: keys } } })) as Doc[];
    });
    return context;
  }

  async root(plan: RootFieldPlan, args: Record<string, unknown>, context: GraphqlRequestContext, info?: GraphQLResolveInfo): Promise<unknown> {
    const { collection: c, operation } = plan;
    const t = context.translator;
    switch (operation) {
      case 'findOne': {
        const document = (await this.run(context, c, 'findOne', { query: await t.filter(c, args['query']) })) as Doc | null;
        if (document && info) await this.prefetch(context, c, [document], info);
        return document;
      }
      case 'findMany': {
        const sort = t.sort(args['sortBy']);
        const limit = typeof args['limit'] === 'number' ? args['limit'] : 100;
        const documents = (await this.run(context, c, 'find', { query: await t.filter(c, args['query']), ...(sort ? { sort } : {}), ...(limit > 0 ? { limit } : {}) })) as Doc[];
        if (info) await this.prefetch(context, c, documents, info);
        return documents;
      }
      case 'insertOne': {
        const document = await t.document(c, args['data']);
        if (document['_id'] === undefined) {
          // A fresh _id cannot match: the upsert inserts, checks insert rules and answers what the user may read.
          return this.run(context, c, 'findOneAndReplace', { filter: { _id: new ObjectId() }, update: document, upsert: true, returnNewDocument: true });
        }
        await this.run(context, c, 'insertOne', { document });
        return this.run(context, c, 'findOne', { query: { _id: document['_id'] } });
      }
      case 'insertMany': {
        const data = args['data'] as unknown[];
        if (data.length === 0) throw new GraphqlEndpointError('InvalidParameter', 'insertMany requires at least one document');
        const documents = await Promise.all(data.map((item) => t.document(c, item)));
        const result = (await this.run(context, c, 'insertMany', { documents })) as { insertedIds: unknown };
        return { insertedIds: Array.isArray(result.insertedIds) ? result.insertedIds : Object.values(result.insertedIds as Doc) };
      }
      case 'updateOne':
        return this.run(context, c, 'findOneAndUpdate', { filter: await t.filter(c, args['query']), update: await this.update(c, args['set'], t), returnNewDocument: true });
      case 'updateMany':
        return this.run(context, c, 'updateMany', { query: await t.filter(c, args['query']), update: await this.update(c, args['set'], t) });
      case 'upsertOne':
        return this.run(context, c, 'findOneAndReplace', { filter: await t.filter(c, args['query']), update: await t.document(c, args['data']), upsert: true, returnNewDocument: true });
      case 'replaceOne':
        return this.run(context, c, 'findOneAndReplace', { filter: await t.filter(c, args['query']), update: await t.document(c, args['data']), returnNewDocument: true });
      case 'deleteOne':
        return this.run(context, c, 'findOneAndDelete', { filter: await t.filter(c, args['query']) });
      case 'deleteMany':
        return this.run(context, c, 'deleteMany', { query: await t.filter(c, args['query']) });
    }
  }

  /**
   * Reads the relationships the query selects on the documents a root query field found, one `$in` read
   * each (in parallel), so that their resolvers answer without a promise per parent (see
   * RelationshipBatches). Fields under a directive (`@skip`, `@include`) are left to the batches.
   */
  private async prefetch(context: GraphqlRequestContext, c: CollectionModel, documents: Doc[], info: GraphQLResolveInfo): Promise<void> {
    if (documents.length === 0) return;
    const fields = selectedRelationships(c, info);
    if (fields.length === 0) return;
    await Promise.all(fields.map((field) => context.batches.prefetch(field, documents)));
  }

  relationship(field: FieldModel, parent: Doc, context: GraphqlRequestContext, info: GraphQLResolveInfo): unknown {
    return context.batches.load(field, parent, info);
  }

  /** `exports = function(input, source)` with an input, `function(source)` without (reference A.8). */
  async custom(resolver: CustomResolverModel, input: unknown, source: Doc | undefined, context: GraphqlRequestContext): Promise<unknown> {
    const args: unknown[] = resolver.input ? [input ?? null] : [];
    if (source !== undefined) args.push(source);
    // The deadline follows the function's time limit (the bus's timeout for the subject); a client that
    // leaves stops the call. A failure keeps the runtime's code, which becomes the error's extensions.code.
    return this.functions.call({ appId: context.app.id, functionName: resolver.functionName, args, caller: context.caller, metadata: context.metadata }, context.edge());
  }

  private async update(c: CollectionModel, set: unknown, t: ArgumentTranslator): Promise<Doc> {
    const update = await t.update(c, set);
    if (Object.keys(update).length === 0) throw new GraphqlEndpointError('InvalidParameter', 'set must name at least one field to change');
    return update;
  }

  private run(context: GraphqlRequestContext, c: CollectionModel, action: string, args: Doc): Promise<unknown> {
    context.state.operations += 1;
    if (context.state.transaction) return context.state.transaction.execute({ action, database: c.database, collection: c.collection, args });
    return this.dataAccess.execute({
      app: context.app,
      service: c.service,
      action,
      database: c.database,
      collection: c.collection,
      args,
      caller: context.system ? { kind: 'system' } : { kind: 'user', user: context.user },
    });
  }
}
