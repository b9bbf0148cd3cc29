import { Binary } from 'bson';
import { newObjectIdHex } from './ids';
import { bytesOf, type PlatformDatabase } from './platform-database';

/** One package the app's functions can require by name (a top-level package of the upload). */
export interface DependencyEntry {
  name: string;
  version: string;
}

/** What the admin API lists of an app's dependencies (App Services' DependenciesSummary, plus the status). */
export interface DependenciesRecord {
  _id: string;
  user_id?: string;
  /** Seconds since the epoch. */
  last_modified: number;
  dependencies_list: DependencyEntry[];
  archive_name: string;
  status: 'successful' | 'failed';
  status_message: string;
}

export interface DependenciesUpload {
  userId?: string;
  list: DependencyEntry[];
  /** The module files the sandbox loads (JSON text, see the function runtime's module loader). */
  bundle: Uint8Array;
  /** The archive as uploaded, for export. */
  archive: Uint8Array;
  archiveName: string;
}

const CHUNK_BYTES = 1024 * 1024;
const recordFields = { bundle_id: 0, archive_id: 0, bundle_chunks: 0, archive_chunks: 0 };

/**
 * An app's function dependencies, in the platform database so every runtime replica loads the same modules:
 * `function_dependencies` holds one document per app (what was uploaded, when, by whom, and the ids of its
 * content), `function_dependency_chunks` the module bundle and the uploaded archive in 1 MB chunks (a bundle
 * may pass MongoDB's 16 MB document limit). New content is written before the record points at it, and the
 * old content removed after, so a reader sees the old set or the new one. Limits are the callers'.
 */
export class DependencyStore {
  constructor(private readonly db: PlatformDatabase) {}

  async get(appId: string): Promise<DependenciesRecord | undefined> {
    const found = await (await this.db.collection('function_dependencies')).findOne({ _id: appId }, recordFields);
    return (found as unknown as DependenciesRecord | null) ?? undefined;
  }

  async put(appId: string, upload: DependenciesUpload): Promise<DependenciesRecord> {
    const records = await this.db.collection('function_dependencies');
    const previous = await records.findOne({ _id: appId });
    const bundleId = await this.write(upload.bundle);
    const archiveId = await this.write(upload.archive);
    const record: DependenciesRecord = {
      _id: appId,
      ...(upload.userId ? { user_id: upload.userId } : {}),
      last_modified: Math.floor(Date.now() / 1000),
      dependencies_list: upload.list,
      archive_name: upload.archiveName,
      status: 'successful',
      status_message: '',
    };
    await records.replaceOne({ _id: appId }, { ...record, bundle_id: bundleId, bundle_chunks: chunkCount(upload.bundle), archive_id: archiveId, archive_chunks: chunkCount(upload.archive) }, { upsert: true });
    await this.removeContent(previous);
    return record;
  }

  /** Records a refused upload: the status says why, the dependencies in use stay as they were. */
  async markFailed(appId: string, message: string): Promise<void> {
    const records = await this.db.collection('function_dependencies');
    const updated = await records.updateOne({ _id: appId }, { $set: { status: 'failed', status_message: message } });
    if (updated.matchedCount === 0) {
      await records.replaceOne({ _id: appId }, { _id: appId, last_modified: Math.floor(Date.now() / 1000), dependencies_list: [], archive_name: '', status: 'failed', status_message: message }, { upsert: true });
    }
  }

  /** The module bundle (JSON text), or undefined when the app has none. */
  async bundle(appId: string): Promise<string | undefined> {
    const bytes = await this.read(appId, 'bundle');
    return bytes && new TextDecoder().decode(bytes);
  }

  async archive(appId: string): Promise<{ name: string; bytes: Uint8Array } | undefined> {
    const record = await this.get(appId);
    const bytes = await this.read(appId, 'archive');
    return record && bytes ? { name: record.archive_name, bytes } : undefined;
  }

  /** Removes the app's dependencies; false when it had none. */
  async remove(appId: string): Promise<boolean> {
    const removed = await (await this.db.collection('function_dependencies')).findOneAndDelete({ _id: appId });
    await this.removeContent(removed);
    return typeof removed?.['bundle_id'] === 'string';
  }

  private async read(appId: string, kind: 'bundle' | 'archive', attempt = 1): Promise<Uint8Array | undefined> {
    const record = await (await this.db.collection('function_dependencies')).findOne({ _id: appId });
    const contentId: unknown = record?.[`${kind}_id`];
    if (typeof contentId !== 'string') return undefined;
    const pieces = await (await this.db.collection('function_dependency_chunks')).find({ content_id: contentId }).sort({ n: 1 }).toArray();
    // A newer upload replaced this content between the two reads: read the new one.
    if (pieces.length !== Number(record?.[`${kind}_chunks`])) {
      if (attempt < 3) return this.read(appId, kind, attempt + 1);
      throw new Error(`the ${kind} of the dependencies of app ${appId} is incomplete`);
    }
    return Buffer.concat(pieces.map((piece) => bytesOf(piece['data'])));
  }

  private async write(bytes: Uint8Array): Promise<string> {
    const contentId = newObjectIdHex();
    const chunks = await this.db.collection('function_dependency_chunks');
    for (let n = 0; n < chunkCount(bytes); n++) {
      await chunks.insertOne({ _id: `${contentId}:${n}`, content_id: contentId, n, data: new Binary(bytes.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES)) });
    }
    return contentId;
  }

  private async removeContent(record: Record<string, unknown> | null | undefined): Promise<void> {
    const ids = [record?.['bundle_id'], record?.['archive_id']].filter((id): id is string => typeof id === 'string');
    if (ids.length) await (await this.db.collection('function_dependency_chunks')).deleteMany({ content_id: { $in: ids } });
  }
}

const chunkCount = (bytes: Uint8Array): number => Math.max(1, Math.ceil(bytes.length / CHUNK_BYTES));
