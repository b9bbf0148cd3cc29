import { isDuplicateKeyError } from '@tessera/datastore';
import { CodedError } from '@tessera/domain';
import { newClientAppId, newObjectIdHex } from './ids';
import { type PlatformDatabase } from './platform-database';

/** An app as the admin API lists it (App Services' `AppInstance`). */
export interface AppRecord {
  _id: string;
  client_app_id: string;
  name: string;
  group_id: string;
  domain_id: string;
  location: string;
  deployment_model: string;
  environment: string;
  provider_region: string;
  product: string;
  template_id?: string;
  /** Seconds since the epoch. */
  last_used: number;
  /** Seconds since the epoch. */
  last_modified: number;
  /** The app's last deployment migration (the admin API's `deployment_migration`), if it had one. */
  deployment_migration?: DeploymentMigration;
}

/** Where an app is deployed, as App Services described it. */
export interface DeploymentSettings {
  deployment_model: string;
  provider_region: string;
}

export interface DeploymentMigration {
  status: 'started' | 'downtime' | 'enabling_event_subscriptions' | 'cleanup' | 'successful' | 'failed';
  message: string;
  /** ISO 8601. */
  updated_at: string;
  from: DeploymentSettings;
  to: DeploymentSettings;
}

export interface NewApp {
  name: string;
  groupId: string;
  location?: string;
  deploymentModel?: string;
  environment?: string;
  providerRegion?: string;
  product?: string;
  templateId?: string;
  /** Keep this client app id (an imported app keeps the id its clients already use). */
  clientAppId?: string;
}

export enum AppRegistryErrorCode {
  AppNotFound = 'AppNotFound',
  AppExists = 'AppExists',
}

export class AppRegistryError extends CodedError<AppRegistryErrorCode> {
  constructor(code: AppRegistryErrorCode, message: string) {
    super(code, message, { [AppRegistryErrorCode.AppNotFound]: 404, [AppRegistryErrorCode.AppExists]: 409 });
  }
}

/** The apps this server hosts. Shared by every service: the admin API writes it, the others read it. */
export abstract class AppRegistry {
  abstract create(app: NewApp): Promise<AppRecord>;
  abstract list(groupId?: string): Promise<AppRecord[]>;
  /** By `_id` (the admin API's app id). */
  abstract get(id: string): Promise<AppRecord>;
  /** By the client app id the SDKs use. */
  abstract getByClientAppId(clientAppId: string): Promise<AppRecord>;
  abstract remove(id: string): Promise<void>;
  /** Records the app's new deployment settings and the migration that set them. */
  abstract migrateDeployment(id: string, to: DeploymentSettings & { location: string }, migration: DeploymentMigration): Promise<AppRecord>;
}

/**
 * The app registry in the platform database (`apps`). Unique indexes on the client app id and on the name
 * within a group decide between two replicas creating the same app at once: the second one gets `AppExists`.
 */
export class DatastoreAppRegistry extends AppRegistry {
  constructor(private readonly db: PlatformDatabase) {
    super();
  }

  async create(app: NewApp): Promise<AppRecord> {
    const now = Math.floor(Date.now() / 1000);
    const record: AppRecord = {
      _id: newObjectIdHex(),
      client_app_id: app.clientAppId ?? newClientAppId(app.name),
      name: app.name,
      group_id: app.groupId,
      domain_id: newObjectIdHex(),
      location: app.location ?? 'US-VA',
      deployment_model: app.deploymentModel ?? 'GLOBAL',
      environment: app.environment ?? '',
      provider_region: app.providerRegion ?? 'local',
      product: app.product ?? 'standard',
      ...(app.templateId ? { template_id: app.templateId } : {}),
      last_used: now,
      last_modified: now,
    };
    try {
      await (await this.db.collection('apps')).insertOne({ ...record });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const sameClientId = await (await this.db.collection('apps')).findOne({ client_app_id: record.client_app_id });
      throw new AppRegistryError(
        AppRegistryErrorCode.AppExists,
        sameClientId ? `an app with client app id '${record.client_app_id}' already exists` : `an app named "${record.name}" already exists in this group`,
      );
    }
    return record;
  }

  async list(groupId?: string): Promise<AppRecord[]> {
    const records = (await (await this.db.collection('apps')).find(groupId ? { group_id: groupId } : {}).toArray()) as unknown as AppRecord[];
    return records.sort((a, b) => a.name.localeCompare(b.name) || a._id.localeCompare(b._id));
  }

  async get(id: string): Promise<AppRecord> {
    const record = (await (await this.db.collection('apps')).findOne({ _id: id })) as AppRecord | null;
    if (!record) throw new AppRegistryError(AppRegistryErrorCode.AppNotFound, `app not found: '${id}'`);
    return record;
  }

  async getByClientAppId(clientAppId: string): Promise<AppRecord> {
    const record = (await (await this.db.collection('apps')).findOne({ client_app_id: clientAppId })) as AppRecord | null;
    if (!record) throw new AppRegistryError(AppRegistryErrorCode.AppNotFound, `cannot find app using Client App ID '${clientAppId}'`);
    return record;
  }

  async migrateDeployment(id: string, to: DeploymentSettings & { location: string }, migration: DeploymentMigration): Promise<AppRecord> {
    const apps = await this.db.collection('apps');
    const changed = { deployment_model: to.deployment_model, provider_region: to.provider_region, location: to.location, deployment_migration: migration, last_modified: Math.floor(Date.now() / 1000) };
    const { matchedCount } = await apps.updateOne({ _id: id }, { $set: changed });
    if (matchedCount === 0) throw new AppRegistryError(AppRegistryErrorCode.AppNotFound, `app not found: '${id}'`);
    return this.get(id);
  }

  /** Removes the app, then everything the platform keeps for it (a crash in between leaves only unreachable leftovers). */
  async remove(id: string): Promise<void> {
    const record = await this.get(id);
    await (await this.db.collection('apps')).deleteOne({ _id: record._id });
    await this.db.removeApp(record._id);
  }
}
