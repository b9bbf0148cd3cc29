/**
 * The sync history's housekeeping across replicas, next to `DatastoreHistoryStorage` in the same database:
 * a compaction lease per partition (one replica compacts a partition at a time), when each client file was
 * last seen by any replica (so `client_max_offline_days` counts activity on every replica, not only on the
 * one compacting), the size of each partition of an app (operations), and dropping everything an app left
 * (when it is deleted). It must not read or write history entries' contents: that is the storage's.
 */
import { type CollectionHandle, type DataSourceClient, type Document, isDuplicateKeyError } from '@tessera/datastore';
import { type HistoryCollection, historyCollection, partitionPrefix, SYNC_HISTORY_DATABASE } from './datastore-history-storage';

/** One partition's history, as operations see it. */
export interface PartitionHistorySize {
  /** The history key: `<app id>[@<epoch>]/<partition value as canonical Extended JSON>`. */
  key: string;
  /** Versions in the history (its head version). */
  versions: number;
  /** Changeset bytes up to the head (after compaction of what was compacted). */
  bytes: number;
  compactedUntil: number;
  clientFiles: number;
}

/** What deleting an app removed from the sync history. */
export interface PurgedHistory {
  partitions: number;
  batches: number;
  clientFiles: number;
}

/** Partition listings stop here (an app with more partitions is listed in part, and says so). */
export const PARTITION_LISTING_LIMIT = 1_000;

function numberOf(value: unknown): number {
  return typeof value === 'number' ? value : Number(value ?? 0);
}

/** Every history key of an app, whatever its reset epoch: `<app>/...` and `<app>@<epoch>/...`. */
function appKeyRanges(appId: string): Array<{ $gte: string; $lt: string }> {
  return [
    { $gte: `${appId}/`, $lt: `${appId}/\uffff` },
    { $gte: `${appId}@`, $lt: `${appId}@\uffff` },
  ];
}

export class HistoryHousekeeping {
  constructor(
    private readonly client: DataSourceClient,
    private readonly databaseName: string = SYNC_HISTORY_DATABASE,
  ) {}

  private collection(name: HistoryCollection): CollectionHandle {
    return historyCollection(this.client, this.databaseName, name);
  }

  /**
   * Takes the partition's compaction lease for `holder` until `until` (ms), unless another holder has it and
   * it has not expired. A replica that dies holding it only delays compaction until the lease ends.
   */
  async claimCompaction(partition: string, holder: string, now: number, until: number): Promise<boolean> {
    const free = { $or: [{ compactionLease: { $exists: false } }, { 'compactionLease.until': { $lt: now } }, { 'compactionLease.holder': holder }] };
    try {
      const claimed = await this.collection('partitions').findOneAndUpdate({ _id: partition, ...free }, { $set: { compactionLease: { holder, until } } }, { upsert: true, returnNewDocument: true });
      return (claimed?.['compactionLease'] as { holder?: string } | undefined)?.holder === holder;
    } catch (error) {
      // The upsert met the partition's record, held by another replica: not ours.
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  async releaseCompaction(partition: string, holder: string): Promise<void> {
    await this.collection('partitions').updateOne({ _id: partition, 'compactionLease.holder': holder }, { $unset: { compactionLease: '' } });
  }

  /** Records that client files were active (the latest time wins, whichever replica saw them). */
  async noteClientsSeen(partition: string, seen: ReadonlyMap<number, number>): Promise<void> {
    if (seen.size === 0) return;
    await this.collection('client_activity').bulkWrite(
      [...seen].map(([ident, at]) => ({
        updateOne: { filter: { _id: `${partitionPrefix(partition)}${ident}` }, update: { $max: { seenAt: at }, $set: { partition, ident } }, upsert: true },
      })),
      { ordered: false },
    );
  }

  /** When each client file of the partition was last seen by any replica (ms). */
  async clientsSeen(partition: string): Promise<Map<number, number>> {
    const stored = await this.collection('client_activity').find({ partition }).toArray();
    return new Map(stored.map((doc) => [numberOf(doc['ident']), numberOf(doc['seenAt'])]));
  }

  /** The histories of an app's partitions (every reset epoch), in key order, at most `limit`. */
  async partitionSizes(appId: string, limit = PARTITION_LISTING_LIMIT): Promise<{ partitions: PartitionHistorySize[]; truncated: boolean }> {
    const metas: Document[] = [];
    for (const range of appKeyRanges(appId)) metas.push(...(await this.collection('partitions').find({ _id: range }).sort({ _id: 1 }).limit(limit + 1).toArray()));
    const keys = metas.map((meta) => String(meta['_id'])).sort();
    const partitions: PartitionHistorySize[] = [];
    for (const key of keys.slice(0, limit)) {
      const meta = metas.find((candidate) => candidate['_id'] === key);
      const prefix = partitionPrefix(key);
      const [last] = await this.collection('batches').find({ end: { $gte: prefix, $lt: `${prefix}\uffff` } }, { to: 1, cumulativeSize: 1 }).sort({ end: -1 }).limit(1).toArray();
      partitions.push({
        key,
        versions: numberOf(last?.['to']),
        bytes: numberOf(last?.['cumulativeSize']),
        compactedUntil: numberOf(meta?.['compactedUntil']),
        clientFiles: await this.collection('client_files').countDocuments({ partition: key }),
      });
    }
    return { partitions, truncated: keys.length > limit };
  }

  /** The partitions of history keys starting with `keyPrefix` (`<app>/` or `<app>@<epoch>/`) that hold client file `ident`. */
  async partitionsWithClientFile(keyPrefix: string, ident: number): Promise<string[]> {
    const files = await this.collection('client_files').find({ ident, partition: { $gte: keyPrefix, $lt: `${keyPrefix}\uffff` } }, { partition: 1 }).limit(PARTITION_LISTING_LIMIT).toArray();
    return files.map((file) => String(file['partition'])).sort();
  }

  /**
   * Drops every history, client file, reciprocal changeset and activity record of an app (every reset
   * epoch). Idempotent: every replica may run it when the app is deleted.
   */
  async purgeApp(appId: string): Promise<PurgedHistory> {
    const purged: PurgedHistory = { partitions: 0, batches: 0, clientFiles: 0 };
    for (const range of appKeyRanges(appId)) {
      const keys = new Set<string>([
        ...(await this.collection('partitions').distinct('_id', { _id: range })).map(String),
        ...(await this.collection('client_files').distinct('partition', { partition: range })).map(String),
      ]);
      // Large changesets live in chunk documents that only their batch names.
      for (const batch of await this.collection('batches').find({ partition: range, 'entries.chunks': { $exists: true } }, { 'entries.chunks': 1 }).toArray()) {
        const chunks = (batch['entries'] as Array<{ chunks?: string[] }>).flatMap((entry) => entry.chunks ?? []);
        if (chunks.length > 0) await this.collection('chunks').deleteMany({ _id: { $in: chunks } });
      }
      purged.batches += (await this.collection('batches').deleteMany({ partition: range })).deletedCount;
      purged.clientFiles += (await this.collection('client_files').deleteMany({ partition: range })).deletedCount;
      for (const key of keys) {
        const prefix = partitionPrefix(key);
        await this.collection('reciprocals').deleteMany({ key: { $gte: prefix, $lt: `${prefix}\uffff` } });
      }
      await this.collection('client_activity').deleteMany({ partition: range });
      await this.collection('partitions').deleteMany({ _id: range });
      purged.partitions += keys.size;
    }
    return purged;
  }
}
