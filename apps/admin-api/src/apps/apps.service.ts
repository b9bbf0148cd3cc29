import { Injectable, Logger, Optional } from '@nestjs/common';
import { isDataSourceType, readAppFiles, writeAppFiles, emptyApp, type AppConfig, type ServiceConfig } from '@tessera/app-config';
import { Subjects } from '@tessera/contracts';
import { MessageBus } from '@tessera/messaging';
import { AppRegistry, AppRegistryError, AppRegistryErrorCode, FileTemplateStore, type AppRecord, type NewApp } from '@tessera/platform';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { locateSync, isSyncEnabled } from '../deploy/sync-transition';

/** Spec 8: 1 to 32 characters; ASCII letters, digits, underscores and hyphens. */
const appNamePattern = /^[A-Za-z0-9_-]{1,32}$/;

export function appNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'app name is required';
  if (name.length > 32) return `invalid app name "${name}": it has ${name.length} characters, the limit is 32`;
  if (!appNamePattern.test(name)) return `invalid app name "${name}": use only ASCII letters, digits, underscores and hyphens`;
  return undefined;
}

export interface CreateAppRequest {
  name?: unknown;
  template_id?: unknown;
  data_source?: unknown;
  location?: unknown;
  deployment_model?: unknown;
  environment?: unknown;
  provider_region?: unknown;
}

/** App lifecycle: create (empty, from a template, with a data source), list, describe, delete. */
@Injectable()
export class AppsService {
  constructor(
    private readonly apps: AppRegistry,
    private readonly state: AppStateService,
    private readonly templates: FileTemplateStore,
    @Optional() private readonly bus?: MessageBus,
  ) {}

  async list(groupId: string, products: string[]): Promise<AppRecord[]> {
    const apps = await this.apps.list(groupId);
    return products.length ? apps.filter((app) => products.includes(app.product)) : apps;
  }

  async create(groupId: string, request: CreateAppRequest, product: string | undefined, userId: string | undefined): Promise<AppRecord> {
    const problem = appNameProblem(request.name);
    if (problem) throw new AdminApiError(AdminApiErrorCode.InvalidAppName, problem);
    const name = request.name as string;
    if ((await this.apps.list(groupId)).some((app) => app.name === name)) throw new AdminApiError(AdminApiErrorCode.AppAlreadyExists, `an app named "${name}" already exists in this group`);

    let app: AppConfig = emptyApp(name);
    let templateId: string | undefined;
    if (request.template_id !== undefined && request.template_id !== '') {
      templateId = typeof request.template_id === 'string' ? request.template_id : JSON.stringify(request.template_id);
      const files = await this.templates.files(templateId);
      if (!files || !(await this.templates.get(templateId))) {
        const known = (await this.templates.list()).map((template) => template.id);
        throw new AdminApiError(AdminApiErrorCode.TemplateNotFound, `template '${templateId}' not found; available templates: ${known.join(', ') || 'none'}`);
      }
      app = readAppFiles(files.backend).app;
      app.settings.name = name;
    }
    if (request.data_source !== undefined) addDataSource(app, request.data_source);
    for (const [field, value] of [['location', request.location], ['deployment_model', request.deployment_model]] as const) {
      if (typeof value === 'string' && value) app.settings[field] = value;
    }

    const record = await this.createRecord(name, {
      name,
      groupId,
      ...(typeof request.location === 'string' && request.location ? { location: request.location } : {}),
      ...(typeof request.deployment_model === 'string' && request.deployment_model ? { deploymentModel: request.deployment_model } : {}),
      ...(typeof request.environment === 'string' ? { environment: request.environment } : {}),
      ...(typeof request.provider_region === 'string' && request.provider_region ? { providerRegion: request.provider_region } : {}),
      ...(product ? { product } : {}),
      ...(templateId ? { templateId } : {}),
    });
    try {
      await this.state.deploy(record, writeAppFiles(app), 'create', userId);
    } catch (error) {
      await this.apps.remove(record._id);
      throw error;
    }
    return record;
  }

  /** The registry's unique name index settles two admins (or replicas) creating the same name at once. */
  private async createRecord(name: string, app: NewApp): Promise<AppRecord> {
    try {
      return await this.apps.create(app);
    } catch (error) {
      if (error instanceof AppRegistryError && error.errorCode === AppRegistryErrorCode.AppExists) throw new AdminApiError(AdminApiErrorCode.AppAlreadyExists, `an app named "${name}" already exists in this group`);
      throw error;
    }
  }

  async remove(groupId: string, appId: string): Promise<void> {
    const record = await this.state.app(groupId, appId);
    await this.apps.remove(record._id);
    // The app is gone either way; a replica that misses the event keeps its sync history until an operator deletes it.
    await this.bus?.emit(Subjects.AppsAppDeleted, { appId: record._id }).catch((error: unknown) => new Logger('AdminApi').warn({ err: error, appId: record._id }, 'could not announce the deletion of an app'));
  }

  /** `GET .../description`: a summary of everything the app holds (realm-cli `apps describe`). */
  async describe(groupId: string, appId: string, baseUrl: string): Promise<object> {
    const record = await this.state.app(groupId, appId);
    const app = await this.state.liveApp(record);
    const sync = locateSync(app);
    return {
      client_app_id: record.client_app_id,
      name: record.name,
      realm_url: `${baseUrl}/groups/${record.group_id}/apps/${record._id}`,
      data_sources: app.services.filter((service) => isDataSourceType(service.config.type)).map((service) => ({ name: service.config.name, type: service.config.type, data_source: service.config.config?.clusterName ?? service.config.config?.dataLakeName ?? '' })),
      services: app.services.filter((service) => !isDataSourceType(service.config.type)).map((service) => ({ name: service.config.name, type: service.config.type })),
      auth_providers: app.authProviders.map((provider) => ({ name: provider.name, type: provider.type, enabled: provider.disabled !== true })),
      custom_user_data: { enabled: app.settings.custom_user_data_config?.enabled === true },
      values: app.values.map((value) => value.name),
      hosting: { enabled: app.settings.hosting?.enabled === true },
      functions: app.functions.map((fn) => ({ name: fn.config.name })),
      sync: sync ? { state: isSyncEnabled(sync.sync) ? 'enabled' : 'disabled', partition_key: sync.sync.partition?.key, partition_key_type: sync.sync.partition?.type, development_mode_enabled: sync.sync.development_mode_enabled === true } : { state: '' },
      graphql: { url: `/api/client/v2.0/app/${record.client_app_id}/graphql` },
      // The live configuration's: a push or `PUT .../environment` may have changed what the app was created with.
      environment: typeof app.settings.environment === 'string' && app.settings.environment !== 'none' ? app.settings.environment : record.environment,
      event_subscription: app.triggers.map((trigger) => ({ name: trigger.name, type: trigger.type, enabled: trigger.disabled !== true })),
      log_forwarders: [],
    };
  }
}

function addDataSource(app: AppConfig, input: unknown): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'data_source must be an object with name, type and config');
  const source = input as { name?: unknown; type?: unknown; config?: unknown };
  const config = typeof source.config === 'object' && source.config !== null ? (source.config as Record<string, unknown>) : {};
  const type = typeof source.type === 'string' && source.type ? source.type : 'datastore-cluster';
  const name = typeof source.name === 'string' && source.name ? source.name : type === 'datalake' ? 'datastore-federation' : 'datastore-cluster';
  const existing = app.services.find((service) => service.config.name === name);
  if (existing) {
    existing.config.config = { ...existing.config.config, ...config };
    return;
  }
  const service: ServiceConfig = { name, type, config };
  app.services.push({ config: service, collectionRules: [], rules: [], webhooks: [] });
}
