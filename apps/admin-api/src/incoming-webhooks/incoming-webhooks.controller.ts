import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import { isDataSourceType, stableId, type AppConfig, type AppService, type CollectionRule, type JsonSchema, type Relationship } from '@tessera/app-config';
import { DataSources, type AppRecord } from '@tessera/platform';
import { EJSON } from 'bson';
import { z } from 'zod';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { findService } from '../services/services.service';
import { generateSchema, validateAgainst } from './collection-schemas';
import { parseWebhookBody, toWebhook, webhookDocument } from './webhook-document';

const jsonObject = z.record(z.unknown());
const SchemaBodySchema = z.object({
  metadata: z.object({ data_source: z.string().min(1), database: z.string().min(1), collection: z.string().min(1) }).optional(),
  schema: jsonObject,
  relationships: z.record(jsonObject).optional(),
});
/** Documents one command reads at most: a sample, held in memory whole (an unbounded limit would read the collection). */
const MAX_SAMPLE = 50_000;
const GenerateSchemaBodySchema = z.object({ database_name: z.string().min(1), collection_name: z.string().min(1), limit: z.number().int().positive().max(MAX_SAMPLE) });
const ValidateDocumentsBodySchema = z.object({
  database_name: z.string().min(1),
  collection_name: z.string().min(1),
  from_schema: jsonObject,
  query: jsonObject.default({}),
  limit: z.number().int().positive().max(MAX_SAMPLE).default(10000),
  sort: z.record(z.union([z.literal(1), z.literal(-1)])).default({}),
});

function parse<T>(schema: z.ZodType<T, z.ZodTypeDef, unknown>, body: unknown, what: string): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `invalid ${what}: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'malformed'}`);
}

/**
 * Incoming webhooks of services, the collections' schemas (the `schema` of each collection rule of a data
 * source, App Services' data_sources/<svc>/<db>/<coll>/schema.json) and the commands of a data source.
 * Every change is a validated deployment of the whole app; commands read the linked cluster.
 */
@Controller('api/admin/v3.0')
@UseGuards(AdminAuthGuard)
export class IncomingWebhooksController {
  constructor(
    private readonly state: AppStateService,
    private readonly dataSources: DataSources,
  ) {}

  // ---- incoming webhooks ----

  @Get('groups/:groupId/apps/:appId/services/:serviceId/incoming_webhooks')
  async listWebhooks(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string): Promise<object[]> {
    requireGroup(request, groupId);
    return findService(await this.liveApp(groupId, appId), serviceId).webhooks.map(webhookDocument);
  }

  @Get('groups/:groupId/apps/:appId/services/:serviceId/incoming_webhooks/:webhookId')
  async getWebhook(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Param('webhookId') webhookId: string): Promise<object> {
    requireGroup(request, groupId);
    return webhookDocument(findWebhook(findService(await this.liveApp(groupId, appId), serviceId), webhookId));
  }

  @Post('groups/:groupId/apps/:appId/services/:serviceId/incoming_webhooks')
  @HttpCode(201)
  async createWebhook(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    const webhook = toWebhook(parseWebhookBody(body), undefined);
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const service = findService(app, serviceId);
      assertFreeName(service, webhook.config.name, undefined);
      service.webhooks.push(webhook);
    });
    return webhookDocument(findWebhook(findService(prepared.app, serviceId), webhook.config.name));
  }

  /** Replaces the webhook (its id stays, a new name renames it). */
  @Put('groups/:groupId/apps/:appId/services/:serviceId/incoming_webhooks/:webhookId')
  @HttpCode(200)
  async updateWebhook(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Param('webhookId') webhookId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    const parsed = parseWebhookBody(body);
    let id: string | undefined;
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const service = findService(app, serviceId);
      const existing = findWebhook(service, webhookId);
      assertFreeName(service, parsed.name, existing);
      id = existing.config.id;
      service.webhooks[service.webhooks.indexOf(existing)] = toWebhook(parsed, id);
    });
    return webhookDocument(findWebhook(findService(prepared.app, serviceId), id ?? parsed.name));
  }

  @Delete('groups/:groupId/apps/:appId/services/:serviceId/incoming_webhooks/:webhookId')
  @HttpCode(204)
  async deleteWebhook(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Param('webhookId') webhookId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const service = findService(app, serviceId);
      const existing = findWebhook(service, webhookId);
      service.webhooks = service.webhooks.filter((candidate) => candidate !== existing);
    });
  }

  // ---- schemas ----

  @Get('groups/:groupId/apps/:appId/schemas')
  async listSchemas(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object[]> {
    requireGroup(request, groupId);
    return collectionSchemas(await this.liveApp(groupId, appId)).map(({ id, metadata }) => ({ _id: id, metadata }));
  }

  @Get('groups/:groupId/apps/:appId/schemas/:schemaId')
  async getSchema(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('schemaId') schemaId: string): Promise<object> {
    requireGroup(request, groupId);
    const { id, metadata, rule } = findSchema(await this.liveApp(groupId, appId), schemaId);
    return { _id: id, metadata, schema: rule.schema, relationships: rule.relationships ?? {} };
  }

  /** A collection without a rule gets one holding only its schema: a rule file is where the model keeps it. */
  @Post('groups/:groupId/apps/:appId/schemas')
  @HttpCode(200)
  async createSchema(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    const { metadata, schema, relationships } = parse(SchemaBodySchema, body, 'schema');
    if (!metadata) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'invalid schema: metadata is required');
    let serviceName = '';
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const service = dataSource(app, metadata.data_source);
      serviceName = service.config.name;
      const rule = service.collectionRules.find((candidate) => candidate.database === metadata.database && candidate.collection === metadata.collection);
      if (rule?.schema) throw new AdminApiError(AdminApiErrorCode.SchemaAlreadyExists, `a schema for ${metadata.database}.${metadata.collection} already exists`);
      const content = { schema: schema as JsonSchema, ...(relationships ? { relationships: relationships as Record<string, Relationship> } : {}) };
      if (rule) Object.assign(rule, content);
      else service.collectionRules.push({ database: metadata.database, collection: metadata.collection, ...content });
    });
    const created = collectionSchemas(prepared.app).find((entry) => entry.metadata.data_source === serviceName && entry.metadata.database === metadata.database && entry.metadata.collection === metadata.collection);
    return { _id: created?.id, metadata: created?.metadata };
  }

  @Put('groups/:groupId/apps/:appId/schemas/:schemaId')
  @HttpCode(204)
  async updateSchema(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('schemaId') schemaId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    const { metadata, schema, relationships } = parse(SchemaBodySchema, body, 'schema');
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const found = findSchema(app, schemaId);
      if (metadata && (metadata.database !== found.metadata.database || metadata.collection !== found.metadata.collection || dataSource(app, metadata.data_source) !== found.service)) {
        throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'a schema cannot move to another collection: delete it and create one there');
      }
      found.rule.schema = schema;
      if (relationships) found.rule.relationships = relationships as Record<string, Relationship>;
      else delete found.rule.relationships;
    });
  }

  /** Removes the schema and its relationships; a rule that held nothing else goes with them. */
  @Delete('groups/:groupId/apps/:appId/schemas/:schemaId')
  @HttpCode(204)
  async deleteSchema(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('schemaId') schemaId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const { service, rule } = findSchema(app, schemaId);
      delete rule.schema;
      delete rule.relationships;
      const { id: _id, database: _database, collection: _collection, ...rest } = rule;
      const holdsNothing = Object.values(rest).every((value) => value === undefined || (Array.isArray(value) && value.length === 0));
      if (holdsNothing) service.collectionRules = service.collectionRules.filter((candidate) => candidate !== rule);
    });
  }

  // ---- commands of a data source ----

  /** `generate_schema` and `validate_documents` (their own spec paths are this route with the name fixed). */
  @Post('groups/:groupId/apps/:appId/services/:serviceId/commands/:commandName')
  @HttpCode(200)
  async runCommand(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Param('commandName') commandName: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    const app = await this.liveApp(groupId, appId);
    const service = findService(app, serviceId);
    if (commandName !== 'generate_schema' && commandName !== 'validate_documents') {
      throw new AdminApiError(AdminApiErrorCode.CommandNotFound, `command not found: '${commandName}' (service "${service.config.name}" answers generate_schema and validate_documents)`);
    }
    if (!isDataSourceType(service.config.type)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `service "${service.config.name}" is not a data source: ${commandName} needs one`);
    return commandName === 'generate_schema' ? this.generateSchema(app, service, body) : this.validateDocuments(app, service, body);
  }

  private async generateSchema(app: AppConfig, service: AppService, body: unknown): Promise<object> {
    const { database_name: database, collection_name: collection, limit } = parse(GenerateSchemaBodySchema, body, 'generate_schema request');
    const { client } = this.dataSources.forService(app, service.config.name);
    const documents = await client.db(database).collection(collection).find({}).limit(limit).toArray();
    return { schema: generateSchema(collection, documents) };
  }

  private async validateDocuments(app: AppConfig, service: AppService, body: unknown): Promise<object> {
    const request = parse(ValidateDocumentsBodySchema, body, 'validate_documents request');
    const { client } = this.dataSources.forService(app, service.config.name);
    const query = EJSON.deserialize(request.query, { relaxed: true }) as Record<string, unknown>;
    const documents = await client.db(request.database_name).collection(request.collection_name).find(query).sort(request.sort).limit(request.limit).toArray();
    const groups = new Map<string, { error_code: string; field: string; ids: unknown[] }>();
    let failed = 0;
    for (const document of documents) {
      const violations = validateAgainst(request.from_schema, document);
      if (violations.length > 0) failed += 1;
      for (const violation of violations) {
        const key = `${violation.error_code}\u0000${violation.field}`;
        const group = groups.get(key) ?? { ...violation, ids: [] };
        if (!group.ids.some((id) => EJSON.stringify(id) === EJSON.stringify(document['_id']))) group.ids.push(document['_id']);
        groups.set(key, group);
      }
    }
    const errors = [...groups.values()].map(({ error_code, field, ids }) => ({
      error_code,
      error_count: ids.length,
      field,
      failed_ids: ids.map((id) => (typeof id === 'string' ? id : EJSON.stringify(id, { relaxed: true }))),
      failed_documents_query: EJSON.serialize({ _id: { $in: ids } }, { relaxed: true }),
    }));
    return { errors, total_processed_count: documents.length, total_error_count: failed };
  }

  private async liveApp(groupId: string, appId: string): Promise<AppConfig> {
    const record: AppRecord = await this.state.app(groupId, appId);
    return this.state.liveApp(record);
  }
}

function findWebhook(service: AppService, webhookId: string) {
  const webhook = service.webhooks.find((candidate) => candidate.config.id === webhookId) ?? service.webhooks.find((candidate) => candidate.config.name === webhookId);
  if (!webhook) throw new AdminApiError(AdminApiErrorCode.IncomingWebhookNotFound, `incoming webhook not found: '${webhookId}'`);
  return webhook;
}

function assertFreeName(service: AppService, name: string, self: AppService['webhooks'][number] | undefined): void {
  if (service.webhooks.some((candidate) => candidate !== self && candidate.config.name === name)) {
    throw new AdminApiError(AdminApiErrorCode.IncomingWebhookAlreadyExists, `an incoming webhook named "${name}" already exists in service "${service.config.name}"`);
  }
}

function dataSource(app: AppConfig, serviceId: string): AppService {
  const service = findService(app, serviceId);
  if (!isDataSourceType(service.config.type)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `service "${service.config.name}" is not a data source`);
  return service;
}

interface CollectionSchema {
  id: string;
  metadata: { data_source: string; database: string; collection: string };
  service: AppService;
  rule: CollectionRule;
}

/**
 * Every collection schema of the app. Its id is derived from the app, data source and collection (as
 * the model's other ids are), so it is the same on every read and after every deployment.
 */
function collectionSchemas(app: AppConfig): CollectionSchema[] {
  return app.services
    .filter((service) => isDataSourceType(service.config.type))
    .flatMap((service) =>
      service.collectionRules
        .filter((rule) => rule.schema !== undefined)
        .map((rule) => ({
          id: stableId(String(app.settings.name), 'schema', `${service.config.name}/${rule.database}.${rule.collection}`),
          metadata: { data_source: service.config.name, database: rule.database, collection: rule.collection },
          service,
          rule,
        })),
    );
}

function findSchema(app: AppConfig, schemaId: string): CollectionSchema {
  const found = collectionSchemas(app).find((entry) => entry.id === schemaId);
  if (!found) throw new AdminApiError(AdminApiErrorCode.SchemaNotFound, `schema not found: '${schemaId}'`);
  return found;
}
