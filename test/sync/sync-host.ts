import { emptyApp, writeAppFiles, type AppConfig } from '@tessera/app-config';
import { AppRegistry, DeploymentStore } from '@tessera/platform';
// The real process host, so the tests also cover how it mounts the sync service.
import { startHost } from '@tessera/server';
import { loadSettings } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';

export interface SyncHost {
  url: string;
  /** Creates an app deployed with `configure(emptyApp)`; returns its client app id. */
  createApp(name: string, configure: (app: AppConfig) => void): Promise<string>;
  /** Logs in a new anonymous user of the app; returns its access token. */
  login(clientAppId: string): Promise<{ access: string; refresh: string }>;
  close(): Promise<void>;
}

/** The standalone host (every service) on a random port with a fresh data directory. */
export async function startSyncHost(): Promise<SyncHost> {
  const dir = makeTempDir('tessera-sync-service-');
  const host = await startHost(loadSettings({ PORT: '0', HOST: '127.0.0.1', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: '', LOG_LEVEL: 'silent' }));
  return {
    url: host.url,
    async createApp(name, configure) {
      const record = await host.nest.get(AppRegistry).create({ name, groupId: '000000000000000000000001' });
      const config = emptyApp(name);
      configure(config);
      await host.nest.get(DeploymentStore).deploy(record._id, writeAppFiles(config), { origin: 'test' });
      return record.client_app_id;
    },
    async login(clientAppId) {
      const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/anon-user/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      if (response.status !== 200) throw new Error(`anonymous login: ${response.status}`);
      const body = (await response.json()) as { access_token: string; refresh_token: string };
      return { access: body.access_token, refresh: body.refresh_token };
    },
    async close() {
      await host.close();
      dir.remove();
    },
  };
}

/**
 * Partition-based sync on key `_partition` of `type`, with anonymous login, in development mode (the
 * clients' schemas are accepted) over the app's one linked cluster.
 */
export function partitionSync(app: AppConfig, permissions: { read?: unknown; write?: unknown }, type = 'string'): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  if (!app.services.some((service) => service.config.name === 'mongodb-atlas')) {
    app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'sync-cluster' } }, collectionRules: [], rules: [], webhooks: [] });
  }
  app.sync = { type: 'partition', state: 'enabled', development_mode_enabled: true, database_name: 'app', partition: { key: '_partition', type, permissions } };
}
