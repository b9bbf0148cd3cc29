/**
 * Which clients are connected to which replica, for operations: each replica publishes the connections it
 * holds, per app, to the shared sync database (at most once a second, and only what changed), with a
 * heartbeat; a replica that stops heartbeating drops out of the listing. Any replica can then answer for
 * all of them (`sync.status.read`). Best effort: a failed write is retried at the next tick.
 */
import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { type SyncConnectedClient } from '@tessera/contracts';
import { type CollectionHandle } from '@tessera/datastore';
import { DataSources } from '@tessera/platform';
import { PartitionHub } from '../sessions/partition-hub';
import { SYNC_HISTORY_DATABASE } from '../storage/datastore-history-storage';
import { SyncConnections } from './sync-connections';

/** How often the connections of this replica are compared with what it published. */
export const PRESENCE_PUBLISH_MS = 1_000;
const PRESENCE_HEARTBEAT_MS = 10_000;
/** A replica whose heartbeat is older than this is taken for dead. */
export const PRESENCE_STALE_MS = 3 * PRESENCE_HEARTBEAT_MS;
/** Connections of one app listed per replica, at most (the count says how many there are). */
export const PRESENCE_CONNECTIONS_LIMIT = 5_000;

export interface PresenceListing {
  replicas: number;
  clients: SyncConnectedClient[];
  truncated: boolean;
}

@Injectable()
export class SyncPresence implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('SyncService');
  private readonly collection: CollectionHandle;
  /** App id -> what this replica last published for it. */
  private readonly published = new Map<string, string>();
  private lastHeartbeat = 0;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly connections: SyncConnections,
    private readonly hub: PartitionHub,
    dataSources: DataSources,
  ) {
    this.collection = dataSources.platform().db(SYNC_HISTORY_DATABASE).collection('sync_presence');
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.publish()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'could not publish the sync connections of this replica'))
        .finally(() => (this.running = undefined));
    }, PRESENCE_PUBLISH_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
    await this.collection.deleteMany({ replica: this.hub.replica }).catch(() => undefined);
  }

  /** Publishes what changed since the last time, and the heartbeat when it is due. */
  async publish(now = Date.now()): Promise<void> {
    const replica = this.hub.replica;
    if (now - this.lastHeartbeat >= PRESENCE_HEARTBEAT_MS) {
      await this.collection.replaceOne({ _id: replica }, { replica, kind: 'replica', heartbeatAt: now }, { upsert: true });
      await this.collection.updateMany({ replica }, { $set: { heartbeatAt: now } });
      this.lastHeartbeat = now;
    }
    const apps = new Set(this.connections.appIds());
    for (const appId of apps) {
      const connections = this.connections.list(appId, PRESENCE_CONNECTIONS_LIMIT).map((live) => ({ user_id: live.userId, partitions: live.partitions, connected_at: live.connectedAt.toISOString() }));
      const total = this.connections.count(appId);
      const snapshot = JSON.stringify({ connections, total });
      if (this.published.get(appId) === snapshot) continue;
      await this.collection.replaceOne({ _id: `${replica}|${appId}` }, { replica, kind: 'connections', appId, heartbeatAt: this.lastHeartbeat, connections, total }, { upsert: true });
      this.published.set(appId, snapshot);
    }
    for (const appId of [...this.published.keys()]) {
      if (apps.has(appId)) continue;
      await this.collection.deleteOne({ _id: `${replica}|${appId}` });
      this.published.delete(appId);
    }
  }

  /** The app's connections on every live replica. */
  async list(appId: string, now = Date.now()): Promise<PresenceListing> {
    const fresh = { heartbeatAt: { $gte: now - PRESENCE_STALE_MS } };
    const replicas = await this.collection.countDocuments({ kind: 'replica', ...fresh });
    const clients: SyncConnectedClient[] = [];
    let truncated = false;
    for (const doc of await this.collection.find({ kind: 'connections', appId, ...fresh }).toArray()) {
      const connections = doc['connections'] as Array<Omit<SyncConnectedClient, 'replica'>>;
      for (const connection of connections) clients.push({ ...connection, replica: String(doc['replica']) });
      if (Number(doc['total']) > connections.length) truncated = true;
    }
    clients.sort((a, b) => a.connected_at.localeCompare(b.connected_at));
    return { replicas, clients, truncated };
  }
}
