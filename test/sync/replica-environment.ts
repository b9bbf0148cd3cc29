import { randomBytes } from 'node:crypto';
import { WireServer } from '@tessera/datastore';
import { type ServiceName } from '@tessera/settings';
import { makeTempDir, type NatsServerHandle, startNatsServer } from '@tessera/testing';
import { type SyncHost, startSyncHost } from './sync-host';

/**
 * Sync-service replicas as pods run them: hosts in distributed mode over a real nats-server, sharing one
 * datastore through Tessera's MongoDB wire server (the official driver on their side) and one signing key.
 */
export interface ReplicaEnvironment {
  readonly hosts: SyncHost[];
  readonly adminPassword: string;
  /** Starts a host running `services`; `close` stops it with the rest. */
  replica(services: ServiceName[]): Promise<SyncHost>;
  /** Stops one replica now (as a pod that dies). */
  stop(host: SyncHost): Promise<void>;
  close(): Promise<void>;
}

export async function startReplicaEnvironment(): Promise<ReplicaEnvironment> {
  const nats: NatsServerHandle = await startNatsServer();
  const datastoreDir = makeTempDir('tessera-sync-replicas-datastore-');
  const datastore = await WireServer.start({ clustersDir: datastoreDir.path });
  const adminPassword = 'replicas-admin-password';
  const env = {
    TESSERA_MODE: 'distributed',
    NATS_URL: nats.url,
    TESSERA_CLUSTER_URIS: `*=${datastore.uri()}`,
    TESSERA_SIGNING_KEY: randomBytes(32).toString('base64'),
    TESSERA_SECRETS_KEY: randomBytes(32).toString('base64'),
    TESSERA_ADMIN_PASSWORD: adminPassword,
  };
  const hosts: SyncHost[] = [];
  return {
    hosts,
    adminPassword,
    async replica(services) {
      const host = await startSyncHost({ services, settings: env });
      hosts.push(host);
      return host;
    },
    async stop(host) {
      await host.close();
      hosts.splice(hosts.indexOf(host), 1);
    },
    async close() {
      for (const host of hosts) await host.close().catch(() => undefined);
      await datastore.close();
      await nats.stop();
      datastoreDir.remove();
    },
  };
}
