/**
 * Backend compaction (spec 2.6), in the background: each partition this process serves is compacted up to
 * the oldest position a client still needs. A client offline longer than the app's
 * `client_max_offline_days` no longer holds compaction back: the history is compacted past it, its file is
 * marked expired, and its next IDENT gets 222 (client file expired) and a client reset instead of a
 * download from trimmed history. Activity is kept in memory: after a restart every known client counts as
 * seen at boot, so nobody is expired sooner than the setting says.
 */
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { type ClientFileRecord } from '@tessera/sync-protocol';
import { PartitionHub } from '../sessions/partition-hub';
import { SyncApps } from './sync-apps.service';

const dayMs = 24 * 60 * 60 * 1000;
/** How often compaction looks at the partitions. */
export const compactionIntervalMs = 10 * 60 * 1000;

interface PartitionActivity {
  appId: string;
  /** Client file ident -> last time it was seen (ms). */
  seen: Map<number, number>;
}

export interface CompactionRun {
  partitions: number;
  removedInstructions: number;
  expiredClients: number;
}

@Injectable()
export class SyncCompaction implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('SyncService');
  private readonly partitions = new Map<string, PartitionActivity>();
  private readonly startedAt = Date.now();
  private timer?: NodeJS.Timeout;
  private running?: Promise<CompactionRun>;

  constructor(
    private readonly hub: PartitionHub,
    private readonly apps: SyncApps,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.compactAll().catch((error: unknown) => this.logger.warn({ err: error }, 'sync compaction failed')), compactionIntervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** A client file was active on a partition of the app. */
  seen(appId: string, key: string, clientFileIdent: number, now = Date.now()): void {
    let partition = this.partitions.get(key);
    if (!partition) {
      partition = { appId, seen: new Map() };
      this.partitions.set(key, partition);
    }
    partition.seen.set(clientFileIdent, now);
  }

  /** One pass over every partition (one pass at a time); `now` lets an operator or a test look ahead. */
  compactAll(now = Date.now()): Promise<CompactionRun> {
    this.running ??= this.pass(now).finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(now: number): Promise<CompactionRun> {
    const run: CompactionRun = { partitions: 0, removedInstructions: 0, expiredClients: 0 };
    for (const [key, partition] of this.partitions) {
      const { mode } = await this.apps.view(partition.appId);
      if (mode.kind !== 'partition') continue;
      const offlineSince = now - mode.clientMaxOfflineDays * dayMs;
      // Under the partition's lock: an upload integrating meanwhile would meet a history being rewritten.
      const result = await this.hub.exclusive(key, async () => {
        const history = this.hub.history(key);
        const head = await history.latestVersion();
        const clients = await this.hub.storage.listClientFiles(key);
        const horizon = clients.filter((client) => !client.expired && (partition.seen.get(client.ident) ?? this.startedAt) >= offlineSince).reduce((least, client) => Math.min(least, position(client)), head);
        const behind = clients.some((client) => !client.expired && position(client) < horizon);
        if (horizon <= 0 || (!behind && horizon <= (await this.hub.storage.head(key)).compactedUntil)) return undefined;
        return history.compact(horizon);
      });
      if (!result) continue;
      run.partitions++;
      run.removedInstructions += result.removedInstructions;
      run.expiredClients += result.expiredClients.length;
      for (const ident of result.expiredClients) partition.seen.delete(ident);
      if (result.expiredClients.length > 0) {
        this.logger.warn({ appId: partition.appId, partition: key, clients: result.expiredClients }, `compaction expired ${result.expiredClients.length} client file(s) offline longer than ${mode.clientMaxOfflineDays} days: they will reset`);
      }
    }
    return run;
  }
}

/** How far a client is known to be: history before it cannot meet its unsynced changes. */
function position(client: ClientFileRecord): number {
  return Math.min(client.downloadServerVersion, client.uploadProgressServerVersion, client.lockedServerVersion);
}
