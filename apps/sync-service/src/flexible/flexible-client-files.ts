/**
 * What the server keeps per flexible-sync client file between connections, in the app's own cluster (so
 * that the upload cursor moves in the same transaction as the documents an upload writes, on any replica):
 *
 * - `clientVersion`: the last client version integrated. A client that reconnects re-sends every changeset
 *   after the upload cursor it learnt from its last DOWNLOAD; those already integrated are skipped.
 * - `held`: a superset of the objects the client holds, with the server and client versions it was taken at:
 *   the objects sent to it, and those erased at versions it may not have integrated. On reconnect the objects
 *   that left its view meanwhile are erased from it (an erasure of an object it does not hold is a no-op
 *   for realm-core). A snapshot older than what the client has integrated (the process ended before it was
 *   written) says nothing reliable: the client resets.
 *
 * It must not decide anything about views or permissions.
 */
import { type DataSourceClient, type DataSession } from '@tessera/datastore';

/** Where the states live in the app's cluster, beside the write origins. */
export const FlexibleFilesNamespace = { db: '__tessera', coll: 'flexible_sync_files' } as const;

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

export async function loadFileState(client: DataSourceClient, key: string): Promise<FlexibleFileState | null> {
  const stored = await files(client).findOne({ _id: key });
  if (!stored) return null;
  const clientVersion = typeof stored['clientVersion'] === 'number' ? stored['clientVersion'] : 0;
  const held = stored['held'] as HeldSnapshot | undefined;
  return held ? { clientVersion, held } : { clientVersion };
}

/** Moves the upload cursor forward (never back); inside the upload's transaction when it wrote documents. */
export async function recordIntegrated(client: DataSourceClient, key: string, clientVersion: number, session?: DataSession): Promise<void> {
  await files(client).updateOne({ _id: key }, { $max: { clientVersion } }, { upsert: true, ...(session ? { session } : {}) });
}

/** Objects (held and released) one write of snapshots carries at most, beyond its first snapshot. */
const OBJECTS_PER_SNAPSHOT_WRITE = 100_000;

interface QueuedSnapshot {
  held: HeldSnapshot;
  /** Everyone who handed in a snapshot of this file since the last write, told when the latest is written. */
  waiting: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/**
 * Writes the snapshots of what clients hold, many to one write: whatever sessions hand in before a write
 * starts goes into it (the latest per client file), what comes while it is under way goes into the next.
 * Each write is a log flush and a change event that the writes clients wait for queue behind, so an app
 * whose sessions all changed in one burst pays one write, not one per session.
 */
export class HeldSnapshotWriter {
  private readonly queued = new Map<DataSourceClient, Map<string, QueuedSnapshot>>();
  private draining = false;

  /** Resolves once `held` (or a later snapshot of the same file) is written. */
  save(client: DataSourceClient, key: string, held: HeldSnapshot): Promise<void> {
    let forClient = this.queued.get(client);
    if (!forClient) this.queued.set(client, (forClient = new Map<string, QueuedSnapshot>()));
    const entry: QueuedSnapshot = { held, waiting: forClient.get(key)?.waiting ?? [] };
    // Re-inserted, so that the batches keep the order in which the latest snapshots came.
    forClient.delete(key);
    forClient.set(key, entry);
    const written = new Promise<void>((resolve, reject) => entry.waiting.push({ resolve, reject }));
    if (!this.draining) {
      this.draining = true;
      // After the turn of the event loop that handed it in: the other sessions of the burst join it.
      setImmediate(() => void this.drain());
    }
    return written;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queued.size > 0) {
        const clients = [...this.queued];
        this.queued.clear();
        await Promise.all(clients.map(([client, snapshots]) => this.writeAll(client, [...snapshots])));
      }
    } finally {
      this.draining = false;
    }
  }

  private async writeAll(client: DataSourceClient, snapshots: Array<[string, QueuedSnapshot]>): Promise<void> {
    for (let first = 0; first < snapshots.length; ) {
      let objects = 0;
      let end = first;
      do {
        const { held } = snapshots[end][1];
        objects += held.objects.length + held.released.length;
      } while (++end < snapshots.length && objects < OBJECTS_PER_SNAPSHOT_WRITE);
      const batch = snapshots.slice(first, end);
      first = end;
      const at = new Date();
      try {
        await files(client).bulkWrite(
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
