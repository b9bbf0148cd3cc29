import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CodedError } from '@tessera/domain';
import { newClientAppId, newObjectIdHex } from './ids';
import { readJsonFile, writeJsonFile } from './json-file';

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
}

/**
 * App registry kept as one JSON file per app under `<dataDir>/platform/apps/<_id>/app.json`, written
 * atomically. Lookups by client app id go through an in-memory index rebuilt from disk on a miss, so an
 * app created by another process sharing the data directory is found too.
 */
export class FileAppRegistry extends AppRegistry {
  private readonly byClientId = new Map<string, string>();

  constructor(private readonly dataDir: string) {
    super();
  }

  private get root(): string {
    return join(this.dataDir, 'platform', 'apps');
  }

  private recordPath(id: string): string {
    return join(this.root, id, 'app.json');
  }

  async create(app: NewApp): Promise<AppRecord> {
    const now = Math.floor(Date.now() / 1000);
    const clientAppId = app.clientAppId ?? newClientAppId(app.name);
    if (app.clientAppId && (await this.findByClientAppId(clientAppId))) {
      throw new AppRegistryError(AppRegistryErrorCode.AppExists, `an app with client app id '${clientAppId}' already exists`);
    }
    const record: AppRecord = {
      _id: newObjectIdHex(),
      client_app_id: clientAppId,
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
    await writeJsonFile(this.recordPath(record._id), record);
    this.byClientId.set(record.client_app_id, record._id);
    return record;
  }

  async list(groupId?: string): Promise<AppRecord[]> {
    const records: AppRecord[] = [];
    for (const id of await this.ids()) {
      const record = await readJsonFile<AppRecord>(this.recordPath(id));
      if (record && (!groupId || record.group_id === groupId)) records.push(record);
    }
    return records.sort((a, b) => a.name.localeCompare(b.name) || a._id.localeCompare(b._id));
  }

  async get(id: string): Promise<AppRecord> {
    const record = /^[0-9a-f]{24}$/.test(id) ? await readJsonFile<AppRecord>(this.recordPath(id)) : undefined;
    if (!record) throw new AppRegistryError(AppRegistryErrorCode.AppNotFound, `app not found: '${id}'`);
    return record;
  }

  async getByClientAppId(clientAppId: string): Promise<AppRecord> {
    const record = await this.findByClientAppId(clientAppId);
    if (!record) throw new AppRegistryError(AppRegistryErrorCode.AppNotFound, `cannot find app using Client App ID '${clientAppId}'`);
    return record;
  }

  async remove(id: string): Promise<void> {
    const record = await this.get(id);
    await rm(join(this.root, id), { recursive: true, force: true });
    this.byClientId.delete(record.client_app_id);
  }

  private async findByClientAppId(clientAppId: string): Promise<AppRecord | undefined> {
    const known = this.byClientId.get(clientAppId);
    if (known) {
      const record = await readJsonFile<AppRecord>(this.recordPath(known));
      if (record) return record;
      this.byClientId.delete(clientAppId);
    }
    for (const record of await this.list()) this.byClientId.set(record.client_app_id, record._id);
    const id = this.byClientId.get(clientAppId);
    return id ? readJsonFile<AppRecord>(this.recordPath(id)) : undefined;
  }

  private async ids(): Promise<string[]> {
    try {
      return (await readdir(this.root)).filter((name) => /^[0-9a-f]{24}$/.test(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }
}
