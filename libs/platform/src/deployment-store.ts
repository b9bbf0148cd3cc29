import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { newObjectIdHex } from './ids';
import { readJsonFile, writeJsonFile } from './json-file';

/** An app directory as relative POSIX paths to bytes. */
export type DeployedFiles = Map<string, Uint8Array>;

export interface DeploymentRecord {
  _id: string;
  app_id: string;
  /** Increases by one with every deployment of the app. */
  version: number;
  deployed_at: number;
  origin: string;
  status: 'successful';
  user_id?: string;
}

interface StoredDeployment extends DeploymentRecord {
  files: Record<string, string>;
}

/**
 * The configuration each app runs with: every deployment is kept whole (the app directory's files) in
 * `<dataDir>/platform/apps/<appId>/deployments/<version>.json`, and the highest version is live. Files are
 * written atomically, so a crash during a deploy leaves the previous version live.
 */
export class FileDeploymentStore {
  constructor(private readonly dataDir: string) {}

  private directory(appId: string): string {
    return join(this.dataDir, 'platform', 'apps', appId, 'deployments');
  }

  async deploy(appId: string, files: DeployedFiles, meta: { origin: string; userId?: string }): Promise<DeploymentRecord> {
    const latest = await this.latestVersion(appId);
    const record: DeploymentRecord = {
      _id: newObjectIdHex(),
      app_id: appId,
      version: latest + 1,
      deployed_at: Math.floor(Date.now() / 1000),
      origin: meta.origin,
      status: 'successful',
      ...(meta.userId ? { user_id: meta.userId } : {}),
    };
    const encoded: Record<string, string> = {};
    for (const [path, bytes] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) encoded[path] = Buffer.from(bytes).toString('base64');
    const stored: StoredDeployment = { ...record, files: encoded };
    await writeJsonFile(join(this.directory(appId), `${String(record.version).padStart(8, '0')}.json`), stored);
    return record;
  }

  /** The live deployment with its files, or undefined when the app was never deployed. */
  async current(appId: string): Promise<{ record: DeploymentRecord; files: DeployedFiles } | undefined> {
    const version = await this.latestVersion(appId);
    if (version === 0) return undefined;
    const stored = await readJsonFile<StoredDeployment>(join(this.directory(appId), `${String(version).padStart(8, '0')}.json`));
    if (!stored) return undefined;
    const { files, ...record } = stored;
    return { record, files: new Map(Object.entries(files).map(([path, base64]) => [path, Buffer.from(base64, 'base64')])) };
  }

  async list(appId: string): Promise<DeploymentRecord[]> {
    const records: DeploymentRecord[] = [];
    for (const version of await this.versions(appId)) {
      const stored = await readJsonFile<StoredDeployment>(join(this.directory(appId), `${String(version).padStart(8, '0')}.json`));
      if (stored) {
        const { files: _files, ...record } = stored;
        records.push(record);
      }
    }
    return records.reverse();
  }

  private async latestVersion(appId: string): Promise<number> {
    const versions = await this.versions(appId);
    return versions.length ? versions[versions.length - 1] : 0;
  }

  private async versions(appId: string): Promise<number[]> {
    try {
      return (await readdir(this.directory(appId)))
        .filter((name) => /^\d{8}\.json$/.test(name))
        .map((name) => Number(name.slice(0, 8)))
        .sort((a, b) => a - b);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }
}
