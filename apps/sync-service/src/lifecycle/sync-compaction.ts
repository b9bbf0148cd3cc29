/**
 * Backend compaction (spec 2.6), in the background: each partition this process serves is compacted up to
 * the oldest position a client still needs. A client offline longer than the app's
 * `client_max_offline_days` no longer holds compaction back: the history is compacted past it, its file is
 * marked expired, and its next IDENT gets 222 (client file expired) and a client reset instead of a
 * download from trimmed history.
 *
 * With several replicas: activity is recorded in the shared history database (at most once an hour per
 * client and replica, and at each pass), so a client active on another replica is not taken for offline
 * here; a client never recorded counts as seen when this process started, so nobody is expired sooner than
 * the setting says. One replica compacts a partition at a time (a lease in the database). A client that
 * downloads from another replica while this one compacts meets a consistent history (see
 * `DatastoreHistoryStorage.rewriteEntries`), and compaction never reaches past the position of a client
 * seen within the setting, so its next downloads and uploads never meet compacted versions.
 */
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { type ClientFileRecord } from '@tessera/sync-protocol';
import { historyKeyParts, PartitionHub } from '../sessions/partition-hub';
import { HistoryHousekeeping } from '../storage/history-housekeeping';
import { SyncApps } from './sync-apps.service';

const dayMs = 24 * 60 * 60 * 1000;
/** How often compaction looks at the partitions. */
export const compactionIntervalMs = 10 * 60 * 1000;
/** How long a replica holds a partition's compaction lease (a replica that dies delays compaction this long). */
const compactionLeaseMs = 5 * 60 * 1000;
/** A client's activity is written to the shared database at most this often per replica. */
const activityWriteMs = 60 * 60 * 1000;

interface PartitionActivity {
  appId: string;
  /** Client file ident -> last time it was seen (ms). */
  seen: Map<number, number>;
  /** Client file ident -> last time its activity was written to the shared database (ms). */
  recorded: Map<number, number>;
}

export interface CompactionRun {
  partitions: number;
  removedInstructions: number;
  expiredClients: number;
  /** Partitions another replica was compacting (skipped this time). */
  leased: number;
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
    private readonly housekeeping: HistoryHousekeeping,
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
      partition = { appId, seen: new Map(), recorded: new Map() };
      this.partitions.set(key, partition);
    }
    partition.seen.set(clientFileIdent, now);
    if (now - (partition.recorded.get(clientFileIdent) ?? 0) < activityWriteMs) return;
    partition.recorded.set(clientFileIdent, now);
    // Best effort: a lost write only makes the client count as seen at this replica's start, or at the next pass.
    this.housekeeping.noteClientsSeen(key, new Map([[clientFileIdent, now]])).catch((error: unknown) => this.logger.warn({ err: error, partition: key }, 'could not record sync client activity'));
  }

  /** The app was deleted: its partitions are no longer compacted here. */
  forgetApp(appId: string): void {
    for (const [key, partition] of this.partitions) if (partition.appId === appId || historyKeyParts(key).appId === appId) this.partitions.delete(key);
  }

  /** One pass over every partition (one pass at a time); `now` lets an operator or a test look ahead. */
  compactAll(now = Date.now()): Promise<CompactionRun> {
    this.running ??= this.pass(now).finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(now: number): Promise<CompactionRun> {
    const run: CompactionRun = { partitions: 0, removedInstructions: 0, expiredClients: 0, leased: 0 };
    for (const [key, partition] of this.partitions) {
      const { mode } = await this.apps.view(partition.appId);
      if (mode.kind !== 'partition') continue;
      // The lease runs on the real clock, whatever `now` the caller looks ahead to.
      if (!(await this.housekeeping.claimCompaction(key, this.hub.replica, Date.now(), Date.now() + compactionLeaseMs))) {
        run.leased++;
        continue;
      }
      try {
        const result = await this.compactPartition(key, partition, now - mode.clientMaxOfflineDays * dayMs);
        if (!result) continue;
        run.partitions++;
        run.removedInstructions += result.removedInstructions;
        run.expiredClients += result.expiredClients.length;
        for (const ident of result.expiredClients) partition.seen.delete(ident);
        if (result.expiredClients.length > 0) {
          this.logger.warn({ appId: partition.appId, partition: key, clients: result.expiredClients }, `compaction expired ${result.expiredClients.length} client file(s) offline longer than ${mode.clientMaxOfflineDays} days: they will reset`);
        }
      } finally {
        await this.housekeeping.releaseCompaction(key, this.hub.replica);
      }
    }
    return run;
  }

  private async compactPartition(key: string, partition: PartitionActivity, offlineSince: number): Promise<{ removedInstructions: number; expiredClients: number[] } | undefined> {
    // What this replica saw goes to the shared record first, and what the others saw comes back with it.
    await this.housekeeping.noteClientsSeen(key, partition.seen);
    const seen = await this.housekeeping.clientsSeen(key);
    // Under the partition's lock: an upload integrating here meanwhile would meet a history being rewritten.
    return this.hub.exclusive(key, async () => {
      const history = this.hub.history(key);
      const head = await history.latestVersion();
      const clients = await this.hub.storage.listClientFiles(key);
      const active = clients.filter((client) => !client.expired && Math.max(seen.get(client.ident) ?? this.startedAt, partition.seen.get(client.ident) ?? 0) >= offlineSince);
      const horizon = active.reduce((least, client) => Math.min(least, position(client)), head);
      const behind = clients.some((client) => !client.expired && position(client) < horizon);
      if (horizon <= 0 || (!behind && horizon <= (await this.hub.storage.head(key)).compactedUntil)) return undefined;
      return history.compact(horizon);
    });
  }
}

/** How far a client is known to be: history before it cannot meet its unsynced changes. */
function position(client: ClientFileRecord): number {
  return Math.min(client.downloadServerVersion, client.uploadProgressServerVersion, client.lockedServerVersion);
}
