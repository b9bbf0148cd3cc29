import type { AppConfig } from '@tessera/app-config';
import { type TestHost, startTestHost } from '../support/test-host';

export interface SyncHost {
  url: string;
  /** Creates an app deployed with `configure(emptyApp)`; returns its client app id. */
  createApp(name: string, configure: (app: AppConfig) => void): Promise<string>;
  /** Logs in a new anonymous user of the app; returns its tokens. */
  login(clientAppId: string): Promise<{ access: string; refresh: string }>;
  /** The Nest application (tests reach providers through it). */
  nest: TestHost['nest'];
  close(): Promise<void>;
}

/** The test host with every service (so the tests also cover how the host mounts the sync service), in the sync tests' terms; `settings` adds to its environment. */
export async function startSyncHost(settings: Record<string, string> = {}): Promise<SyncHost> {
  const host = await startTestHost({ settings });
  return {
    url: host.url,
    nest: host.nest,
    createApp: async (name, configure) => (await host.createApp(name, configure)).clientAppId,
    async login(clientAppId) {
      const { accessToken, refreshToken } = await host.anonymousLogin(clientAppId);
      return { access: accessToken, refresh: refreshToken };
    },
    close: () => host.close(),
  };
}

/** Partition-based sync on key `_partition` of `type`, with anonymous login. */
export function partitionSync(app: AppConfig, permissions: { read?: unknown; write?: unknown }, type = 'string'): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.sync = { type: 'partition', state: 'enabled', database_name: 'app', partition: { key: '_partition', type, permissions } };
}
