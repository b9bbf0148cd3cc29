import { Body, Controller, Delete, Get, HttpCode, Inject, Optional, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import type { AppConfig, CustomResolver, GraphqlConfig } from '@tessera/app-config';
import { functionCallTimeoutMs, Subjects } from '@tessera/contracts';
import { buildGraphqlModel, printGraphqlSdl } from '@tessera/graphql-schema';
import { MessageBus } from '@tessera/messaging';
import { SETTINGS, type Settings } from '@tessera/settings';
import { z } from 'zod';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { checkFieldFree, findResolver, firstIssue, keepResolverIds, newResolverId, resolverFromBody, resolverToWire } from './custom-resolvers';

const APP = 'groups/:groupId/apps/:appId';

/** graphql/config.json as `PUT .../graphql/config` takes it: a member left out keeps its value. */
const GraphqlConfigBodySchema = z.object({ use_natural_pluralization: z.boolean().optional(), disable_schema_introspection: z.boolean().optional() }).strict();

const ValidationSettingsBodySchema = z
  .object({
    read_validation_action: z.enum(['ERROR', 'WARN']).optional(),
    read_validation_level: z.enum(['STRICT', 'OFF']).optional(),
    write_validation_action: z.enum(['ERROR', 'WARN']).optional(),
    write_validation_level: z.enum(['STRICT', 'OFF']).optional(),
  })
  .strict();
type ValidationSettings = z.infer<typeof ValidationSettingsBodySchema>;

const NullTypeBodySchema = z.object({ enabled: z.boolean({ required_error: 'enabled is required' }) }).strict();

/**
 * Files that hold the two validation settings. Nothing in the app's configuration format has a place for
 * them, so they are files of their own, kept verbatim by every read and write and carried by export and
 * pull like the rest of the app (the GraphQL one beside graphql/config.json, as the app import's
 * `graphql.validation_settings` places it).
 */
export const GRAPHQL_VALIDATION_FILE = 'graphql/validation_settings.json';
export const NULL_TYPE_VALIDATION_FILE = 'validation_settings/null_type_schema_validation.json';

/** App Services' settings of an app that never set them: documents validated strictly, failures refused. */
const DEFAULT_VALIDATION: Required<ValidationSettings> = { read_validation_action: 'ERROR', read_validation_level: 'STRICT', write_validation_action: 'ERROR', write_validation_level: 'STRICT' };

/**
 * The app's GraphQL API settings, custom resolvers and validation settings (admin OpenAPI `graphql` tag).
 * Everything lives in the app's files (graphql/config.json, graphql/custom_resolvers/*.json), so each
 * change is a validated deployment of the whole app, and the GraphQL endpoint, which builds its schema
 * from the deployed files, serves it from the next request on. A change that leaves the app without a
 * schema the endpoint can build (a resolver on an unknown type) is refused before anything is deployed.
 */
@Controller('api/admin/v3.0')
@UseGuards(AdminAuthGuard)
export class GraphqlConfigController {
  constructor(
    private readonly state: AppStateService,
    @Inject(SETTINGS) private readonly settings: Settings,
    @Optional() private readonly bus?: MessageBus,
  ) {}

  /**
   * Runs a query or mutation of the app's API as the system user (rules and authentication bypassed; App
   * Services' `adminRunGraphQLOperation`). The gateway that serves the app's GraphQL endpoint runs it, over the
   * bus; the answer is the GraphQL response, errors included, with status 200.
   */
  @Post(`${APP}/graphql`)
  @HttpCode(200)
  async run(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<unknown> {
    requireGroup(request, groupId);
    const operation = parseGraphqlRun(body);
    const record = await this.state.app(groupId, appId);
    if (!this.bus) throw new AdminApiError(AdminApiErrorCode.ServiceUnavailable, 'the GraphQL API is not reachable from this process');
    let answer;
    try {
      answer = await this.bus.request(Subjects.GraphqlOperationRun, { appId: record._id, ...operation }, { timeoutMs: functionCallTimeoutMs(this.settings.functionTimeLimitMs) });
    } catch (error) {
      throw new AdminApiError(AdminApiErrorCode.ServiceUnavailable, `the GraphQL API did not answer: ${error instanceof Error ? error.message : String(error)}`);
    }
    return JSON.parse(answer.body) as unknown;
  }

  @Get(`${APP}/graphql/config`)
  async getConfig(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object> {
    return effectiveConfig(await this.live(request, groupId, appId));
  }

  /** `use_natural_pluralization` is fixed when the app is made (it renames every generated type); the other members change freely. */
  @Put(`${APP}/graphql/config`)
  @HttpCode(204)
  async updateConfig(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    await this.edit(request, groupId, appId, (app) => {
      const given = parse(GraphqlConfigBodySchema, body, 'GraphQL configuration');
      const current = effectiveConfig(app);
      if (given.use_natural_pluralization !== undefined && given.use_natural_pluralization !== current.use_natural_pluralization) {
        throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `cannot set use_natural_pluralization to ${String(given.use_natural_pluralization)}: it cannot change after the app is created`);
      }
      const graphql = graphqlOf(app);
      graphql.config = { ...graphql.config, ...current, ...given };
    });
  }

  @Get(`${APP}/graphql/custom_resolvers`)
  async listResolvers(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object[]> {
    const app = await this.live(request, groupId, appId);
    return (app.graphql?.customResolvers ?? []).map((resolver) => resolverToWire(app, resolver));
  }

  @Get(`${APP}/graphql/custom_resolvers/:resolverId`)
  async getResolver(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('resolverId') resolverId: string): Promise<object> {
    const app = await this.live(request, groupId, appId);
    return resolverToWire(app, findResolver(app, resolverId));
  }

  @Post(`${APP}/graphql/custom_resolvers`)
  @HttpCode(201)
  async createResolver(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    let created: object = {};
    await this.edit(request, groupId, appId, (app) => {
      const resolver = resolverFromBody(app, body);
      checkFieldFree(app, resolver);
      const withId: CustomResolver = { id: newResolverId(app, resolver), ...resolver };
      graphqlOf(app).customResolvers.push(withId);
      created = resolverToWire(app, withId);
    });
    return created;
  }

  /** Replaces the resolver with the body; it keeps its id, also when it moves to another type or field. */
  @Put(`${APP}/graphql/custom_resolvers/:resolverId`)
  @HttpCode(204)
  async modifyResolver(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('resolverId') resolverId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    await this.edit(request, groupId, appId, (app) => {
      const existing = findResolver(app, resolverId);
      const resolver = resolverFromBody(app, body);
      checkFieldFree(app, resolver, existing);
      const resolvers = graphqlOf(app).customResolvers;
      resolvers[resolvers.indexOf(existing)] = { id: existing['id'], ...resolver };
    });
  }

  @Delete(`${APP}/graphql/custom_resolvers/:resolverId`)
  @HttpCode(204)
  async deleteResolver(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('resolverId') resolverId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.edit(request, groupId, appId, (app) => {
      const existing = findResolver(app, resolverId);
      const graphql = graphqlOf(app);
      graphql.customResolvers = graphql.customResolvers.filter((candidate) => candidate !== existing);
    });
  }

  @Get(`${APP}/validation_settings/graphql`)
  async getValidation(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object> {
    return { ...DEFAULT_VALIDATION, ...readSettingsFile(await this.live(request, groupId, appId), GRAPHQL_VALIDATION_FILE, ValidationSettingsBodySchema) };
  }

  /** A member left out keeps its value. */
  @Put(`${APP}/validation_settings/graphql`)
  @HttpCode(204)
  async setValidation(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    await this.edit(request, groupId, appId, (app) => {
      const given = parse(ValidationSettingsBodySchema, body, 'validation settings');
      writeSettingsFile(app, GRAPHQL_VALIDATION_FILE, { ...DEFAULT_VALIDATION, ...readSettingsFile(app, GRAPHQL_VALIDATION_FILE, ValidationSettingsBodySchema), ...given });
    });
  }

  /** Off unless turned on: App Services refuses a null for an optional field until then. */
  @Get(`${APP}/validation_settings/null_type_schema_validation`)
  async getNullTypeValidation(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object> {
    const file = readSettingsFile(await this.live(request, groupId, appId), NULL_TYPE_VALIDATION_FILE, NullTypeBodySchema);
    return { enabled: file?.enabled === true };
  }

  @Put(`${APP}/validation_settings/null_type_schema_validation`)
  @HttpCode(204)
  async setNullTypeValidation(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    await this.edit(request, groupId, appId, (app) => {
      const given = parse(NullTypeBodySchema, body, 'null type schema validation setting');
      writeSettingsFile(app, NULL_TYPE_VALIDATION_FILE, { enabled: given.enabled });
    });
  }

  private async live(request: AdminRequest, groupId: string, appId: string): Promise<AppConfig> {
    requireGroup(request, groupId);
    return this.state.liveApp(await this.state.app(groupId, appId));
  }

  /**
   * Deploys the change, resolver ids kept in their files, once the GraphQL schema still builds with it.
   * Bodies are read inside `change`, so an unknown app answers 404 whatever the body.
   */
  private async edit(request: AdminRequest, groupId: string, appId: string, change: (app: AppConfig) => void): Promise<void> {
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      keepResolverIds(app);
      change(app);
      checkSchemaBuilds(app);
    });
  }
}

function parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, `the request body must be a ${what} object`);
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `invalid ${what}: ${firstIssue(parsed.error)}`);
  return parsed.data;
}

function graphqlOf(app: AppConfig): GraphqlConfig {
  app.graphql ??= { customResolvers: [] };
  return app.graphql;
}

/** The configuration the GraphQL endpoint applies: an app without graphql/config.json has App Services' defaults. */
function effectiveConfig(app: AppConfig): { use_natural_pluralization: boolean; disable_schema_introspection: boolean } {
  const config = app.graphql?.config ?? {};
  return { use_natural_pluralization: config['use_natural_pluralization'] !== false, disable_schema_introspection: config['disable_schema_introspection'] === true };
}

/**
 * The schema generator skips a resolver whose parent type it does not generate, so such a resolver would
 * deploy and never be served: it is refused here, as App Services refused it.
 */
function checkSchemaBuilds(app: AppConfig): void {
  const types = new Set(['Query', 'Mutation', ...buildGraphqlModel(app).collections.map((collection) => collection.name)]);
  for (const resolver of app.graphql?.customResolvers ?? []) {
    if (!types.has(resolver.on_type)) {
      throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `custom resolver ${resolver.on_type}.${resolver.field_name}: on_type must be Query, Mutation or a generated type, and "${resolver.on_type}" is none`);
    }
  }
  try {
    printGraphqlSdl(app);
  } catch (error) {
    throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `the GraphQL schema cannot be generated with this change: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A settings file as deployed; one edited by hand into something else is refused rather than guessed at. */
function readSettingsFile<T>(app: AppConfig, path: string, schema: z.ZodType<T>): T | undefined {
  const bytes = app.extraFiles.get(path);
  if (!bytes) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new AdminApiError(AdminApiErrorCode.InvalidConfiguration, `${path} is not valid JSON`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new AdminApiError(AdminApiErrorCode.InvalidConfiguration, `${path}: ${firstIssue(parsed.error)}`);
  return parsed.data;
}

function writeSettingsFile(app: AppConfig, path: string, value: object): void {
  app.extraFiles.set(path, new TextEncoder().encode(`${JSON.stringify(value, null, 4)}\n`));
}

/** The body of `POST .../graphql`: `query`, `variables` (JSON text of an object, or the object) and `operationName`. */
function parseGraphqlRun(body: unknown): { query: string; variables?: Record<string, unknown>; operationName?: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the body must be a JSON object with query, variables and operationName');
  const { query, variables, operationName } = body as Record<string, unknown>;
  if (typeof query !== 'string' || query.trim() === '') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'query is required: the GraphQL operation(s) to run');
  if (query.length > 1_000_000) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'query is longer than 1,000,000 characters');
  if (operationName !== undefined && operationName !== null && (typeof operationName !== 'string' || operationName === '' || operationName.length > 1024)) {
    throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'operationName must name an operation of the query');
  }
  let vars: unknown = variables;
  if (typeof variables === 'string') {
    if (variables.trim() === '') vars = undefined;
    else {
      try {
        vars = JSON.parse(variables);
      } catch {
        throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'variables must be JSON text of an object');
      }
    }
  }
  if (vars !== undefined && vars !== null && (typeof vars !== 'object' || Array.isArray(vars))) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'variables must be an object');
  return { query, ...(vars ? { variables: vars as Record<string, unknown> } : {}), ...(typeof operationName === 'string' ? { operationName } : {}) };
}
