import type { AppConfig } from '@tessera/app-config';
import { type ServiceName } from '@tessera/settings';
import { makeTempDir, startOnFreePort } from '@tessera/testing';
import { type TestHost, startTestHost } from '../support/test-host';

export interface SyncHost {
  url: string;
  /** Creates an app deployed with `configure(emptyApp)`; returns its client app id. */
  createApp(name: string, configure: (app: AppConfig) => void): Promise<string>;
  /** Logs in a new anonymous user of the app; returns its tokens. */
  login(clientAppId: string): Promise<{ access: string; refresh: string }>;
  /** The Nest application (tests reach providers through it). */
  nest: TestHost['nest'];
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

/** The test host (every service unless told, so the tests also cover how the host mounts the sync service) on a random port, in the sync tests' terms. */
export async function startSyncHost(options: SyncHostOptions = {}): Promise<SyncHost> {
  const dir = makeTempDir('tessera-sync-service-');
  const start = (port: string): Promise<TestHost> => startTestHost({ dataDir: dir.path, ...(options.services ? { services: options.services } : {}), settings: { ...options.settings, PORT: port } });
  // A port drawn below the kernel's ephemeral range, since `restart` listens on it again: one the kernel handed
  // out could meanwhile be the local end of an outgoing connection (a client reconnecting, say).
  let host = await startOnFreePort((port) => start(String(port)));
  return {
    get url() {
      return host.url;
    },
    get nest() {
      return host.nest;
    },
    async restart() {
      const port = new URL(host.url).port;
      await host.close();
      host = await start(port);
    },
    createApp: async (name, configure) => (await host.createApp(name, configure)).clientAppId,
    async login(clientAppId) {
      const { accessToken, refreshToken } = await host.anonymousLogin(clientAppId);
      return { access: accessToken, refresh: refreshToken };
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
