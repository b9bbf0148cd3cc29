/**
 * What the server keeps per flexible-sync client file between connections:
 *
 * - `clientVersion`, in the app's own cluster (so that the upload cursor moves in the same transaction as
 *   the documents an upload writes, on any replica): the last client version integrated. A client that
 *   reconnects re-sends every changeset after the upload cursor it learnt from its last DOWNLOAD; those
 *   already integrated are skipped.
 * - `held`, in the platform cluster beside the partition histories: a superset of the objects the client
 *   holds, with the server and client versions it was taken at: the objects sent to it, and those erased at
 *   versions it may not have integrated. On reconnect the objects that left its view meanwhile are erased
 *   from it (an erasure of an object it does not hold is a no-op for realm-core). A snapshot older than what
 *   the client has integrated (the process ended before it was written) says nothing reliable: the client
 *   resets. Snapshots are written often (every session whose client's holdings changed, within seconds); in
 *   the app's cluster each was a change event for the change feed, its publisher and every consumer, and a
 *   flush of the log that the app's own writes (the ones clients wait to see) queued behind.
 *
 * It must not decide anything about views or permissions.
 */
import { type DataSourceClient, type DataSession } from '@tessera/datastore';
import { SYNC_HISTORY_DATABASE } from '../storage/datastore-history-storage';

/** Where upload cursors live in the app's cluster, beside the write origins. */
export const FlexibleFilesNamespace = { db: '__tessera', coll: 'flexible_sync_files' } as const;
/** Where the snapshots of what clients hold live in the platform cluster (`_id`: the file's key). */
export const FlexibleHeldNamespace = { db: SYNC_HISTORY_DATABASE, coll: 'flexible_held' } as const;

/** One object of a snapshot: its type and `_id`. */
export interface HeldEntry {
  t: string;
  id: unknown;
}

export interface HeldSnapshot {
  /** The last server version sent to the client when the snapshot was taken. */
  serverVersion: number;
  /** The last client version integrated when the snapshot was taken. */
  clientVersion: number;
  /** Objects sent to the client (and not erased since). */
  objects: HeldEntry[];
  /** Objects erased at server version `v`, kept until the client has integrated `v`. */
  released: Array<HeldEntry & { v: number }>;
}

export interface FlexibleFileState {
  clientVersion: number;
  held?: HeldSnapshot;
}

/** The state's key: per app, per reset epoch (a re-enable starts over), per client file ident. */
export function flexibleFileKey(appId: string, epoch: number, ident: number): string {
  return `${appId}/${epoch}/${ident}`;
}

function files(client: DataSourceClient) {
  return client.db(FlexibleFilesNamespace.db).collection(FlexibleFilesNamespace.coll);
}

/** A client file's upload cursor (from the app's cluster) and snapshot (from `snapshots`); null when neither is kept. */
export async function loadFileState(client: DataSourceClient, snapshots: HeldSnapshots, key: string): Promise<FlexibleFileState | null> {
  const [stored, held] = await Promise.all([files(client).findOne({ _id: key }), snapshots.load(key)]);
  if (!stored && !held) return null;
  const clientVersion = typeof stored?.['clientVersion'] === 'number' ? stored['clientVersion'] : 0;
  return held ? { clientVersion, held } : { clientVersion };
}

/** Moves the upload cursor forward (never back); inside the upload's transaction when it wrote documents. */
export async function recordIntegrated(client: DataSourceClient, key: string, clientVersion: number, session?: DataSession): Promise<void> {
  await files(client).updateOne({ _id: key }, { $max: { clientVersion } }, { upsert: true, ...(session ? { session } : {}) });
}

/**
 * What one write of snapshots carries at most (beyond its first snapshot): a write runs on the event loop
 * from start to end (700 snapshots took 60 ms under load), and the DOWNLOADs of changes wait meanwhile.
 */
const SNAPSHOTS_PER_WRITE = 50;
const OBJECTS_PER_SNAPSHOT_WRITE = 100_000;

interface QueuedSnapshot {
  held: HeldSnapshot;
  /** Everyone who handed in a snapshot of this file since the last write, told when the latest is written. */
  waiting: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/**
 * The snapshots of what clients hold (FlexibleHeldNamespace in the cluster it is given, the platform's),
 * written many to one write: whatever sessions hand in before a write starts goes into it (the latest per
 * client file), what comes while it is under way goes into the next. Each write is a flush of the log, so a
 * burst of sessions pays one, not one each.
 */
export class HeldSnapshots {
  private queued = new Map<string, QueuedSnapshot>();
  /** The writes under way, until nothing is queued. */
  private draining?: Promise<void>;
  /** Apps deleted while this process ran: snapshots of their files that sessions hand in late are dropped. */
  private readonly purged = new Set<string>();

  constructor(private readonly platform: DataSourceClient) {}

  private collection() {
    return this.platform.db(FlexibleHeldNamespace.db).collection(FlexibleHeldNamespace.coll);
  }

  async load(key: string): Promise<HeldSnapshot | undefined> {
    const stored = await this.collection().findOne({ _id: key });
    return stored ? (stored['held'] as HeldSnapshot) : undefined;
  }

  /** Resolves once `held` (or a later snapshot of the same file) is written. */
  save(key: string, held: HeldSnapshot): Promise<void> {
    if (this.purged.has(key.slice(0, key.indexOf('/')))) return Promise.resolve();
    const entry: QueuedSnapshot = { held, waiting: this.queued.get(key)?.waiting ?? [] };
    // Re-inserted, so that the batches keep the order in which the latest snapshots came.
    this.queued.delete(key);
    this.queued.set(key, entry);
    const written = new Promise<void>((resolve, reject) => entry.waiting.push({ resolve, reject }));
    // After the turn of the event loop that handed it in: the other sessions of the burst join it.
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
    return written;
  }

  /**
   * Drops the snapshots of every client file of an app (file keys start with the app id), those queued and
   * those its sessions hand in from now on (its connections are closing) included.
   */
  async purgeApp(appId: string): Promise<number> {
    this.purged.add(appId);
    for (const [key, { waiting }] of this.queued) {
      if (!key.startsWith(`${appId}/`)) continue;
      this.queued.delete(key);
      for (const waiter of waiting) waiter.resolve();
    }
    // A write under way may hold some of them: after it.
    await this.draining;
    return (await this.collection().deleteMany({ _id: { $gte: `${appId}/`, $lt: `${appId}/\uffff` } })).deletedCount;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queued.size > 0) {
        const snapshots = [...this.queued];
        this.queued = new Map();
        await this.writeAll(snapshots);
      }
    } finally {
      this.draining = undefined;
    }
  }

  private async writeAll(snapshots: Array<[string, QueuedSnapshot]>): Promise<void> {
    for (let first = 0; first < snapshots.length; ) {
      let objects = 0;
      let end = first;
      do {
        const { held } = snapshots[end][1];
        objects += held.objects.length + held.released.length;
      } while (++end < snapshots.length && end - first < SNAPSHOTS_PER_WRITE && objects < OBJECTS_PER_SNAPSHOT_WRITE);
      const batch = snapshots.slice(first, end);
      first = end;
      const at = new Date();
      try {
        await this.collection().bulkWrite(
          batch.map(([key, { held }]) => ({ updateOne: { filter: { _id: key }, update: { $set: { held, at } }, upsert: true } })),
          { ordered: false },
        );
        for (const [, { waiting }] of batch) for (const waiter of waiting) waiter.resolve();
      } catch (error) {
        for (const [, { waiting }] of batch) for (const waiter of waiting) waiter.reject(error);
      }
    }
  }
}

/** Whether a snapshot covers everything the client has integrated (download cursor, integrated uploads). */
export function snapshotCovers(state: FlexibleFileState | null, downloadServerVersion: number): state is FlexibleFileState & { held: HeldSnapshot } {
  return state?.held !== undefined && state.held.serverVersion >= downloadServerVersion && state.held.clientVersion >= state.clientVersion;
}
