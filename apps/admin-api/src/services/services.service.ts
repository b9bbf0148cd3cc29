import { Injectable } from '@nestjs/common';
import { isDataSourceType, isFederatedType, type AppConfig, type AppService, type SyncConfig } from '@tessera/app-config';
import type { AppRecord } from '@tessera/platform';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

export interface ServiceSummary {
  _id: string;
  name: string;
  type: string;
  version: number;
  last_modified: number;
}

/** Schema bsonTypes that may hold a partition key, and the type name sync/data reports for each. */
const partitionBsonTypes: Record<string, string> = { string: 'string', objectId: 'objectId', long: 'long', int: 'long', uuid: 'uuid' };

/** Services of an app and their configuration, including the sync configuration of a cluster (spec 4.2). */
@Injectable()
export class ServicesService {
  constructor(private readonly state: AppStateService) {}

  async list(record: AppRecord): Promise<ServiceSummary[]> {
    const app = await this.state.liveApp(record);
    return app.services.map((service) => ({ _id: String(service.config.id), name: service.config.name, type: service.config.type, version: typeof service.config.version === 'number' ? service.config.version : 1, last_modified: record.last_modified }));
  }

  async get(record: AppRecord, serviceId: string): Promise<object> {
    const app = await this.state.liveApp(record);
    const service = findService(app, serviceId);
    return { _id: service.config.id, name: service.config.name, type: service.config.type, config: configDocument(app, service) };
  }

  async config(record: AppRecord, serviceId: string): Promise<Record<string, unknown>> {
    const app = await this.state.liveApp(record);
    return configDocument(app, findService(app, serviceId));
  }

  /**
   * Merges a configuration document into the service's config. A `sync` member (partition-based) or a
   * `flexible_sync` member (flexible, as App Services' admin API took it) is merged into the app's sync
   * configuration (sync/config.json) for this service; the whole app is then validated and the sync
   * state machine decides whether the change may happen.
   */
  async patchConfig(record: AppRecord, serviceId: string, patch: unknown, userId: string | undefined): Promise<Record<string, unknown>> {
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the service configuration must be a JSON object');
    const { sync, flexible_sync: flexibleSync, ...rest } = patch as Record<string, unknown>;
    for (const [key, value] of [['sync', sync], ['flexible_sync', flexibleSync]] as const) {
      if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) throw new AdminApiError(AdminApiErrorCode.BadRequest, `${key} must be an object`);
    }
    if (sync !== undefined && flexibleSync !== undefined) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'give either sync (partition-based) or flexible_sync, not both');
    const prepared = await this.state.edit(record, userId, (app) => {
      const service = findService(app, serviceId);
      service.config.config = { ...service.config.config, ...rest };
      if (sync) applySync(app, service, sync as SyncConfig);
      if (flexibleSync) applySync(app, service, { ...(flexibleSync as SyncConfig), type: 'flexible' });
    });
    return configDocument(prepared.app, findService(prepared.app, serviceId));
  }

  /** `GET .../sync/data?service_id=`: the fields that could be the partition key, with their types. */
  async syncData(record: AppRecord, serviceId: string | undefined): Promise<{ service_id: string; partition_fields: { key: string; type: string }[] }> {
    if (!serviceId) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'service_id is required');
    const app = await this.state.liveApp(record);
    const service = findService(app, serviceId);
    if (isFederatedType(service.config.type)) return { service_id: String(service.config.id), partition_fields: [] };
    const schemas = service.collectionRules.map((rule) => rule.schema).filter((schema) => schema?.properties);
    let candidates: Map<string, string> | undefined;
    for (const schema of schemas) {
      const fields = new Map<string, string>();
      for (const [field, property] of Object.entries(schema?.properties ?? {})) {
        const bsonType = Array.isArray(property.bsonType) ? property.bsonType.find((type) => type !== 'null') : property.bsonType;
        const type = typeof bsonType === 'string' ? partitionBsonTypes[bsonType] : undefined;
        if (type && field !== '_id') fields.set(field, type);
      }
      candidates = candidates ? new Map([...candidates].filter(([field, type]) => fields.get(field) === type)) : fields;
    }
    const partitionFields = [...(candidates ?? new Map<string, string>())].map(([key, type]) => ({ key, type })).sort((a, b) => (a.key < b.key ? -1 : 1));
    return { service_id: String(service.config.id), partition_fields: partitionFields };
  }
}

export function findService(app: AppConfig, serviceId: string): AppService {
  const service = app.services.find((candidate) => candidate.config.id === serviceId) ?? app.services.find((candidate) => candidate.config.name === serviceId);
  if (!service) throw new AdminApiError(AdminApiErrorCode.ServiceNotFound, `service not found: '${serviceId}'`);
  return service;
}

/** The service's config with the sync configuration that applies to it (sync/config.json or embedded). */
function configDocument(app: AppConfig, service: AppService): Record<string, unknown> {
  const config: Record<string, unknown> = { ...service.config.config };
  if (isDataSourceType(service.config.type) && app.sync && app.sync.service_name === service.config.name) {
    const { service_name: _serviceName, ...sync } = app.sync;
    if (sync.type === 'flexible') {
      const { type: _type, ...flexible } = sync;
      config['flexible_sync'] = flexible;
    } else config['sync'] = sync;
  }
  return config;
}

function applySync(app: AppConfig, service: AppService, patch: SyncConfig): void {
  const embedded = service.config.config?.sync;
  if (embedded && !(app.sync && app.sync.service_name === service.config.name)) {
    service.config.config = { ...service.config.config, sync: { ...embedded, ...patch } };
    return;
  }
  const ours = app.sync && app.sync.service_name === service.config.name ? app.sync : undefined;
  // A patch in the other mode replaces the configuration (the transition refuses it while sync is enabled).
  const current = ours && (patch.type === undefined || ours.type === patch.type || (patch.type === 'partition' && ours.type === undefined)) ? ours : { type: patch.type ?? 'partition' };
  const next: SyncConfig = { ...current, ...patch, service_name: service.config.name };
  // Spec 2.6: enabling through the UI (this endpoint) defaults to 30 offline days with recovery mode on.
  if (next.state === 'enabled' && next.client_max_offline_days === undefined) next.client_max_offline_days = 30;
  if (next.state === 'enabled' && next.is_recovery_mode_disabled === undefined) next.is_recovery_mode_disabled = false;
  app.sync = next;
}
