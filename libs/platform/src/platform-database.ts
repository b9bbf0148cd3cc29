import { Binary } from 'bson';
import { type CollectionHandle, type DataSourceClient, type Document, type SortDirection } from '@tessera/datastore';

/**
 * The platform's own state in the platform cluster (`tessera-platform`, database `platform`): the embedded
 * engine in standalone mode, one MongoDB (or Tessera's datastore service) every replica maps in distributed
 * mode. Every store of this library reaches its collections here, so the indexes that make names unique and
 * versions unrepeatable exist before the first read or write.
 */
export const PLATFORM_DATABASE = 'platform';

interface IndexSpec {
  keys: Record<string, SortDirection>;
  unique: boolean;
}

/** The collections and the indexes each needs; unique indexes are what keeps two replicas from racing. */
const collections: Record<'apps' | 'deployments' | 'live_deployments' | 'drafts' | 'secrets' | 'sync_states' | 'logs' | 'admin_users' | 'admin_sessions' | 'admin_api_keys' | 'signing_keys' | 'meta' | 'hosting_assets' | 'hosting_content' | 'function_dependencies' | 'function_dependency_chunks' | 'auth_event_outbox', IndexSpec[]> = {
  apps: [
    { keys: { client_app_id: 1 }, unique: true },
    { keys: { group_id: 1, name: 1 }, unique: true },
  ],
  /** One document per deployment, files included. */
  deployments: [{ keys: { app_id: 1, version: 1 }, unique: true }],
  /** One document per app (`_id` = app id) naming its live deployment: the stamp replicas compare. */
  live_deployments: [],
  drafts: [{ keys: { app_id: 1 }, unique: true }],
  secrets: [{ keys: { app_id: 1, name: 1 }, unique: true }],
  /** `_id` = app id. */
  sync_states: [],
  logs: [{ keys: { app_id: 1, _id: -1 }, unique: false }],
  admin_users: [{ keys: { username: 1 }, unique: true }],
  admin_sessions: [],
  admin_api_keys: [
    { keys: { public_key: 1 }, unique: true },
    { keys: { user_id: 1, name: 1 }, unique: true },
  ],
  /** `_id` = key purpose. */
  signing_keys: [],
  /** Singletons: the group, the record of the one-time import of the file-based state. */
  meta: [],
  /** One document per hosted file (`_id` = `<app id>:<path>`); its content in `hosting_content`. */
  hosting_assets: [{ keys: { app_id: 1, path: 1 }, unique: true }],
  hosting_content: [{ keys: { content_id: 1, n: 1 }, unique: true }],
  /** One document per app (`_id` = app id): its uploaded function dependencies; content in the chunks. */
  function_dependencies: [],
  function_dependency_chunks: [{ keys: { content_id: 1, n: 1 }, unique: true }],
  /** Auth events not yet handed to the durable stream (`_id` = event id): see AuthEvents. */
  auth_event_outbox: [{ keys: { at: 1 }, unique: false }],
};

export type PlatformCollection = keyof typeof collections;

export class PlatformDatabase {
  private ready?: Promise<void>;

  constructor(readonly client: DataSourceClient) {}

  /** Creates the indexes once per process (creating an existing index is a no-op on both engines). */
  init(): Promise<void> {
    this.ready ??= (async () => {
      const db = this.client.db(PLATFORM_DATABASE);
      for (const [name, indexes] of Object.entries(collections)) {
        for (const index of indexes) await db.collection(name).createIndex(index.keys, { unique: index.unique });
      }
    })();
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
  }

  async collection(name: PlatformCollection): Promise<CollectionHandle> {
    await this.init();
    return this.client.db(PLATFORM_DATABASE).collection(name);
  }

  /** Forgets everything kept per app (the app's record is the registry's to delete). */
  async removeApp(appId: string): Promise<void> {
    for (const name of ['deployments', 'drafts', 'secrets', 'logs'] as const) await (await this.collection(name)).deleteMany({ app_id: appId });
    for (const name of ['live_deployments', 'sync_states'] as const) await (await this.collection(name)).deleteOne({ _id: appId });
    const hosted = await this.collection('hosting_assets');
    const contentIds = (await hosted.find({ app_id: appId }, { content_id: 1 }).toArray()).map((asset) => asset['content_id']);
    await hosted.deleteMany({ app_id: appId });
    if (contentIds.length) await (await this.collection('hosting_content')).deleteMany({ content_id: { $in: contentIds } });
    const dependencies = await (await this.collection('function_dependencies')).findOneAndDelete({ _id: appId });
    const dependencyContent = [dependencies?.['bundle_id'], dependencies?.['archive_id']].filter((id) => typeof id === 'string');
    if (dependencyContent.length) await (await this.collection('function_dependency_chunks')).deleteMany({ content_id: { $in: dependencyContent } });
  }
}


/** App directories are kept as `[{ path, data }]`: paths hold dots, which field names should not. */
export interface StoredFile {
  path: string;
  data: Binary;
}

export function encodeFiles(files: ReadonlyMap<string, Uint8Array>): StoredFile[] {
  return [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([path, bytes]) => ({ path, data: new Binary(bytes) }));
}

export function decodeFiles(stored: unknown): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  for (const file of (stored ?? []) as StoredFile[]) files.set(file.path, bytesOf(file.data));
  return files;
}

/** The bytes of a stored binary, whichever bson copy (the driver's or ours) decoded it. */
export function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  const binary = value as { buffer?: Uint8Array; position?: number };
  if (binary?.buffer instanceof Uint8Array) return binary.buffer.subarray(0, binary.position ?? binary.buffer.length);
  throw new Error('stored value is not binary');
}

/** A copy without the fields set to undefined, which MongoDB would keep as null. */
export function withoutUndefined<T extends object>(value: T): Document {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined));
}
