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

export async function saveHeld(client: DataSourceClient, key: string, held: HeldSnapshot): Promise<void> {
  await files(client).updateOne({ _id: key }, { $set: { held, at: new Date() } }, { upsert: true });
}

/** Whether a snapshot covers everything the client has integrated (download cursor, integrated uploads). */
export function snapshotCovers(state: FlexibleFileState | null, downloadServerVersion: number): state is FlexibleFileState & { held: HeldSnapshot } {
  return state?.held !== undefined && state.held.serverVersion >= downloadServerVersion && state.held.clientVersion >= state.clientVersion;
}
