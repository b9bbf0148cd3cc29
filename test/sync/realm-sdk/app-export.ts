import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DataSources, DeployedApps } from '@tessera/platform';
import { repositoryRoot } from '@tessera/testing';
import { AdminSession } from '../../admin-api/admin-session';
import { startSyncHost } from '../sync-host';

// The real-client tests deploy App Services exports from examples/ unchanged, and terminate and re-enable
// sync as an operator does: by pushing the app back with the sync state changed.

/** Every file of examples/<name>, keyed by its path inside the export, as `appservices push` sends them. */
export function exampleFiles(name: string): Map<string, string> {
  const root = join(repositoryRoot, 'examples', name);
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(root, path), readFileSync(path, 'utf8'));
    }
  };
  walk(root);
  return files;
}

/** Changes the sync state in whichever pulled file holds the sync configuration, and pushes it back. */
export async function setSyncState(admin: AdminSession, appId: string, state: 'enabled' | 'disabled'): Promise<void> {
  const files = await admin.pull(appId);
  const own = JSON.parse(files.get('sync/config.json') ?? '{}') as Record<string, unknown>;
  if (own['state'] !== undefined || own['partition'] !== undefined || own['type'] !== undefined) {
    files.set('sync/config.json', JSON.stringify({ ...own, state }));
  } else {
    const path = [...files.keys()].find((file) => /^(data_sources|services)\/mongodb-atlas\/config\.json$/.test(file));
    if (!path) throw new Error(`the pulled app holds no sync configuration: ${[...files.keys()].join(', ')}`);
    const service = JSON.parse(files.get(path)!) as { config: { sync: Record<string, unknown> } };
    service.config.sync['state'] = state;
    files.set(path, JSON.stringify(service));
  }
  const pushed = await admin.push(appId, files);
  if (pushed.status !== 204) throw new Error(`pushing sync state ${state}: ${pushed.status} ${JSON.stringify(pushed.body)}`);
}

/**
 * A host with the admin API, and examples/<name> pushed unchanged as the first deployment of a new app (as the
 * README's walk-through does with the CLI).
 */
export async function deployExample(name: string, settings: Record<string, string> = {}) {
  const password = 'realm-sdk-admin-password';
  const host = await startSyncHost({ settings: { ...settings, TESSERA_ADMIN_PASSWORD: password } });
  const admin = await AdminSession.login(host, 'admin', password);
  const app = await admin.createApp(name);
  const pushed = await admin.push(app._id, exampleFiles(name));
  if (pushed.status !== 204) {
    await host.close();
    throw new Error(`pushing examples/${name}: ${pushed.status} ${JSON.stringify(pushed.body)}`);
  }
  return {
    host,
    clientAppId: app.client_app_id,
    /** The admin API session and the app's id in it (for user management). */
    admin,
    appId: app._id,
    /** A collection of the app's linked cluster (service mongodb-atlas). */
    async collection(database: string, collection: string) {
      const deployed = await host.nest.get(DeployedApps).byClientAppId(app.client_app_id);
      return host.nest.get(DataSources).forService(deployed.config, 'mongodb-atlas').client.db(database).collection(collection);
    },
    /** Terminates (disabled) or re-enables (enabled) sync by pushing the app back. */
    setSyncState: (state: 'enabled' | 'disabled') => setSyncState(admin, app._id, state),
    close: () => host.close(),
  };
}

export type DeployedExample = Awaited<ReturnType<typeof deployExample>>;
