/**
 * One generated, executable schema per app deployment, served by its own graphql-yoga instance (which
 * keeps an LRU of parsed and validated documents keyed by query text). A new deployment id builds a new
 * entry; the old one is dropped, so the schema follows every deploy.
 */
import { Injectable, Logger } from '@nestjs/common';
import type { DataAccessApp } from '@tessera/data-access';
import { buildGraphqlModel, buildGraphqlSchema, type GraphqlModel } from '@tessera/graphql-schema';
import { type DocumentNode, type ExecutionResult, getOperationAST, NoSchemaIntrospectionCustomRule, OperationTypeNode, type ParseOptions, type Source } from 'graphql/index.js';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { appServicesLimits, MAX_TOKENS } from './graphql-limits';
import { GraphqlEndpointError, toClientError } from './graphql.error';
import { GraphqlExecutor, type GraphqlRequestContext } from './graphql-executor';

export interface GraphqlServerContext {
  graphql: GraphqlRequestContext;
}

export interface GraphqlAppEntry {
  deploymentId: string | undefined;
  /** The endpoint's path, as yoga serves it. */
  endpoint: string;
  model: GraphqlModel;
  yoga: YogaServerInstance<GraphqlServerContext, Record<string, never>>;
}

@Injectable()
export class GraphqlApps {
  private readonly logger = new Logger('GraphqlApps');
  private readonly entries = new Map<string, GraphqlAppEntry>();

  constructor(private readonly executor: GraphqlExecutor) {}

  entryFor(app: DataAccessApp, clientAppId: string): GraphqlAppEntry {
    const existing = this.entries.get(app.id);
    if (existing && existing.deploymentId === app.deploymentId && existing.deploymentId !== undefined) return existing;
    const entry = this.build(app, clientAppId);
    this.entries.set(app.id, entry);
    return entry;
  }

  private build(app: DataAccessApp, clientAppId: string): GraphqlAppEntry {
    const model = buildGraphqlModel(app.config);
    let schema;
    try {
      schema = buildGraphqlSchema<GraphqlRequestContext>(model, {
        root: (plan, args, context, info) => this.executor.root(plan, args, context, info),
        relationship: (field, parent, context, info) => this.executor.relationship(field, parent, context, info),
        custom: (resolver, input, source, context) => this.executor.custom(resolver, input, source, context),
      });
    } catch (error) {
      throw new GraphqlEndpointError('InvalidSchema', `cannot generate the GraphQL schema: ${error instanceof Error ? error.message : String(error)}`, 500);
    }
    const rules: Plugin = {
      onParse({ parseFn, setParseFn }) {
        setParseFn((source: string | Source, options?: ParseOptions): DocumentNode => parseFn(source, { ...options, maxTokens: MAX_TOKENS }) as DocumentNode);
      },
      onValidate({ addValidationRule }) {
        addValidationRule(appServicesLimits);
        if (!model.introspection) addValidationRule(NoSchemaIntrospectionCustomRule);
      },
    };
    const executor = this.executor;
    const transactions: Plugin = {
      onExecute({ args, executeFn, setExecuteFn }) {
        if (getOperationAST(args.document as DocumentNode, args.operationName as string | undefined)?.operation !== OperationTypeNode.MUTATION) return;
        const context = args.contextValue as unknown as GraphqlRequestContext;
        setExecuteFn((executeArgs) => executor.inTransaction(context, async () => (await executeFn(executeArgs)) as ExecutionResult));
      },
    };
    const endpoint = `/api/client/v2.0/app/${clientAppId}/graphql`;
    const yoga = createYoga<GraphqlServerContext, Record<string, never>>({
      schema,
      graphqlEndpoint: endpoint,
      graphiql: false,
      landingPage: false,
      logging: false,
      // yoga's LRU (1,024 entries) of parsed documents and validation results, keyed by query text.
      parserAndValidationCache: true,
      plugins: [rules, transactions],
      context: ({ graphql }) => graphql as unknown as Record<string, never>,
      maskedErrors: { maskError: (error) => toClientError(error, (internal) => this.logger.error(internal)) },
    });
    return { deploymentId: app.deploymentId, endpoint, model, yoga };
  }
}
