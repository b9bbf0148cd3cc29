import { emptyApp, writeAppFiles, type AppConfig } from '@tessera/app-config';
import { AppRegistry, DeploymentStore } from '@tessera/platform';
// The real process host, so the tests also cover how it mounts the sync service.
import { startHost } from '@tessera/server';
import { allServiceNames, loadSettings, type ServiceName } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';

export interface SyncHost {
  url: string;
  /** Creates an app deployed with `configure(emptyApp)`; returns its client app id. */
  createApp(name: string, configure: (app: AppConfig) => void): Promise<string>;
  /** Logs in a new anonymous user of the app; returns its access token. */
  login(clientAppId: string): Promise<{ access: string; refresh: string }>;
  /** Stops the host (as SIGTERM does) and starts it again on the same port and data directory. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface SyncHostOptions {
  /** The services the host runs; every one by default, as standalone mode does. */
  services?: readonly ServiceName[];
  /** Settings as environment variables (a distributed replica: TESSERA_MODE, NATS_URL, TESSERA_CLUSTER_URIS, shared keys). */
  settings?: Record<string, string>;
}

/** The host (every service unless told) on a random port with a fresh data directory. */
export async function startSyncHost(options: SyncHostOptions = {}): Promise<SyncHost> {
  const dir = makeTempDir('tessera-sync-service-');
  const start = (port: string) => {
    const settings = loadSettings({ PORT: port, HOST: '127.0.0.1', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: '', LOG_LEVEL: 'silent', ...options.settings });
    return startHost({ ...settings, services: [...(options.services ?? allServiceNames)] });
  };
  let host = await start('0');
  return {
    url: host.url,
    async restart() {
      const port = new URL(host.url).port;
      await host.close();
      host = await start(port);
    },
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

/** Partition-based sync on key `_partition` of `type`, with anonymous login. */
export function partitionSync(app: AppConfig, permissions: { read?: unknown; write?: unknown }, type = 'string'): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.sync = { type: 'partition', state: 'enabled', database_name: 'app', partition: { key: '_partition', type, permissions } };
}
