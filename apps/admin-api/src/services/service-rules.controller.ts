import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Req, UseGuards } from '@nestjs/common';
import { isDataSourceType, type AppService, type CollectionRule, type DefaultRule, type ServiceConfig, type ServiceRule } from '@tessera/app-config';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { findService } from './services.service';

type Json = Record<string, unknown>;

const objectBody = (body: unknown): Json => {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the request body must be a JSON object');
  return body as Json;
};

/**
 * Creating and deleting services, their rules (collection rules of a data source, service rules of any
 * other service) and default rule, and the app's custom user data setting: every change is a validated
 * deployment of the whole app.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId')
@UseGuards(AdminAuthGuard)
export class ServiceRulesController {
  constructor(private readonly state: AppStateService) {}

  @Post('services')
  @HttpCode(201)
  async createService(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    const config = objectBody(body) as unknown as ServiceConfig;
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      if (app.services.some((service) => service.config.name === config.name)) throw new AdminApiError(AdminApiErrorCode.ServiceAlreadyExists, `a service named "${String(config.name)}" already exists`);
      const { id: _id, _id: _wireId, ...rest } = config as ServiceConfig & { _id?: unknown };
      app.services.push({ config: rest, collectionRules: [], rules: [], webhooks: [] });
    });
    const created = findService(prepared.app, config.name);
    return { _id: created.config.id, name: created.config.name, type: created.config.type };
  }

  /**
   * Links several data sources at once (at most 25 in a request, 100 on an app), each with App Services'
   * "ReadAndWrite" default rule, in one deployment: all are linked or none.
   */
  @Post('multi_data_sources')
  @HttpCode(201)
  async linkDataSources(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    const sources = parseLinkedDataSources(body);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const taken = sources.filter((source) => app.services.some((service) => service.config.name === source.name)).map((source) => source.name);
      if (taken.length) throw new AdminApiError(AdminApiErrorCode.ServiceAlreadyExists, `linking failed: a service named ${taken.map((name) => `"${name}"`).join(', ')} already exists`);
      const linked = app.services.filter((service) => isDataSourceType(service.config.type)).length;
      if (linked + sources.length > MAX_LINKED_DATA_SOURCES) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `an app links at most ${MAX_LINKED_DATA_SOURCES} data sources; it has ${linked}`);
      for (const source of sources) {
        // A federated source names its federated database instance as the app's files do (dataLakeName).
        const link = source.type === 'datalake' ? { dataLakeName: source.clusterName } : { clusterName: source.clusterName };
        app.services.push({ config: { name: source.name, type: source.type, config: link }, defaultRule: readAndWriteAll(), collectionRules: [], rules: [], webhooks: [] });
      }
    });
  }

  @Delete('services/:serviceId')
  @HttpCode(204)
  async deleteService(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const service = findService(app, serviceId);
      app.services = app.services.filter((candidate) => candidate !== service);
    });
  }

  @Get('services/:serviceId/rules')
  async listRules(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string): Promise<object[]> {
    requireGroup(request, groupId);
    const service = findService(await this.state.liveApp(await this.state.app(groupId, appId)), serviceId);
    return isDataSourceType(service.config.type)
      ? service.collectionRules.map((rule) => ({ _id: rule.id, database: rule.database, collection: rule.collection }))
      : service.rules.map((rule) => ({ _id: rule.id, name: rule.name }));
  }

  @Get('services/:serviceId/rules/:ruleId')
  async getRule(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Param('ruleId') ruleId: string): Promise<object> {
    requireGroup(request, groupId);
    const rule = findRule(findService(await this.state.liveApp(await this.state.app(groupId, appId)), serviceId), ruleId);
    const { id, ...rest } = rule;
    return { _id: id, ...rest };
  }

  @Post('services/:serviceId/rules')
  @HttpCode(201)
  async createRule(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    const { _id: _wireId, id: _id, ...rule } = objectBody(body);
    const key = ruleKey(rule);
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const service = findService(app, serviceId);
      if (isDataSourceType(service.config.type)) {
        if (service.collectionRules.some((existing) => ruleKey(existing) === key)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `a rule for ${key} already exists`);
        service.collectionRules.push(rule as unknown as CollectionRule);
      } else {
        if (service.rules.some((existing) => existing.name === rule['name'])) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `a rule named "${String(rule['name'])}" already exists`);
        service.rules.push(rule as unknown as ServiceRule);
      }
    });
    const service = findService(prepared.app, serviceId);
    const created = [...service.collectionRules, ...service.rules].find((candidate) => ruleKey(candidate) === key);
    return { _id: created?.id, ...(rule['name'] !== undefined ? { name: rule['name'] } : { database: rule['database'], collection: rule['collection'] }) };
  }

  @Put('services/:serviceId/rules/:ruleId')
  @HttpCode(200)
  async updateRule(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Param('ruleId') ruleId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    const { _id: _wireId, id: _id, ...change } = objectBody(body);
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const rule = findRule(findService(app, serviceId), ruleId);
      for (const key of Object.keys(rule)) if (key !== 'id') delete (rule as Json)[key];
      Object.assign(rule, change);
    });
    const { id, ...rest } = findRule(findService(prepared.app, serviceId), ruleId);
    return { _id: id, ...rest };
  }

  @Delete('services/:serviceId/rules/:ruleId')
  @HttpCode(204)
  async deleteRule(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Param('ruleId') ruleId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const service = findService(app, serviceId);
      const rule = findRule(service, ruleId);
      service.collectionRules = service.collectionRules.filter((candidate) => candidate !== rule);
      service.rules = service.rules.filter((candidate) => candidate !== rule);
    });
  }

  @Get('services/:serviceId/default_rule')
  async getDefaultRule(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string): Promise<object> {
    requireGroup(request, groupId);
    const service = findService(await this.state.liveApp(await this.state.app(groupId, appId)), serviceId);
    if (!service.defaultRule) throw new AdminApiError(AdminApiErrorCode.RuleNotFound, `service "${service.config.name}" has no default rule`);
    const { id, ...rest } = service.defaultRule;
    return { _id: id, ...rest };
  }

  @Post('services/:serviceId/default_rule')
  @HttpCode(201)
  async createDefaultRule(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    return this.setDefaultRule(request, groupId, appId, serviceId, body);
  }

  @Put('services/:serviceId/default_rule')
  @HttpCode(204)
  async updateDefaultRule(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    await this.setDefaultRule(request, groupId, appId, serviceId, body);
  }

  @Delete('services/:serviceId/default_rule')
  @HttpCode(204)
  async deleteDefaultRule(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      delete findService(app, serviceId).defaultRule;
    });
  }

  @Get('custom_user_data')
  async customUserData(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object> {
    requireGroup(request, groupId);
    return (await this.state.liveApp(await this.state.app(groupId, appId))).settings.custom_user_data_config ?? { enabled: false };
  }

  @Patch('custom_user_data')
  @HttpCode(204)
  async patchCustomUserData(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    const change = objectBody(body);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      app.settings.custom_user_data_config = { ...app.settings.custom_user_data_config, ...change };
    });
  }

  private async setDefaultRule(request: AdminRequest, groupId: string, appId: string, serviceId: string, body: unknown): Promise<object> {
    const { _id: _wireId, id: _id, ...rule } = objectBody(body);
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const service = findService(app, serviceId);
      service.defaultRule = { ...(service.defaultRule?.id ? { id: service.defaultRule.id } : {}), ...(rule as DefaultRule) };
    });
    return { _id: findService(prepared.app, serviceId).defaultRule?.id };
  }
}

function ruleKey(rule: Json | CollectionRule | ServiceRule): string {
  const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
  return rule['name'] !== undefined && rule['database'] === undefined ? `name:${text(rule['name'])}` : `${text(rule['database'])}.${text(rule['collection'])}`;
}

function findRule(service: AppService, ruleId: string): CollectionRule | ServiceRule {
  const rule = [...service.collectionRules, ...service.rules].find((candidate) => candidate.id === ruleId);
  if (!rule) throw new AdminApiError(AdminApiErrorCode.RuleNotFound, `rule not found: '${ruleId}'`);
  return rule;
}

const MAX_LINKED_DATA_SOURCES = 100;
const MAX_LINKED_PER_REQUEST = 25;
const CLUSTER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface LinkedDataSource {
  name: string;
  type: 'mongodb-atlas' | 'datalake';
  clusterName: string;
}

/** The body of `multi_data_sources`: an array of `{ name, type, config: { clusterName } }`. */
function parseLinkedDataSources(body: unknown): LinkedDataSource[] {
  if (!Array.isArray(body) || body.length === 0) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the body must be a non-empty JSON array of data sources ({name, type, config: {clusterName}})');
  if (body.length > MAX_LINKED_PER_REQUEST) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `link at most ${MAX_LINKED_PER_REQUEST} data sources in one request`);
  const names = new Set<string>();
  return body.map((item: unknown, index) => {
    const source = objectBody(item);
    const { name, type } = source;
    const clusterName = typeof source['config'] === 'object' && source['config'] !== null ? (source['config'] as Json)['clusterName'] : undefined;
    if (typeof name !== 'string' || name.trim() === '') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `data source ${index}: name is required`);
    if (type !== 'mongodb-atlas' && type !== 'datalake') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `data source "${name}": type must be "mongodb-atlas" or "datalake"`);
    if (typeof clusterName !== 'string' || !CLUSTER_NAME.test(clusterName)) {
      throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `data source "${name}": config.clusterName must be at most 64 ASCII letters, digits, underscores and hyphens`);
    }
    if (names.has(name)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `data source "${name}" is named twice`);
    names.add(name);
    return { name, type, clusterName };
  });
}

/** App Services' "ReadAndWrite" default rule of a data source linked this way: everyone reads and writes everything. */
function readAndWriteAll(): DefaultRule {
  return { roles: [{ name: 'readAndWriteAll', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true, insert: true, delete: true, search: true }] };
}
