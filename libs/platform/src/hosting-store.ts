import { createHash } from 'node:crypto';
import { Binary } from 'bson';
import { type Document } from '@tessera/datastore';
import { newObjectIdHex } from './ids';
import { bytesOf, type PlatformDatabase } from './platform-database';

/** One attribute of a hosted file (a response header): `{ name: 'Cache-Control', value: 'max-age=300' }`. */
export interface HostedAttribute {
  name: string;
  value: string;
}

/** A hosted file's metadata, as the admin API lists it (`hash` is the MD5 of the content, hex). */
export interface HostedAsset {
  app_id: string;
  /** Resource path, starting with '/'. */
  path: string;
  hash: string;
  size: number;
  /** Seconds since the epoch. */
  last_modified: number;
  attrs: HostedAttribute[];
}

/** A file to host: its resource path, content and complete attributes. */
export interface HostedFileInput {
  path: string;
  bytes: Uint8Array;
  attrs: HostedAttribute[];
}

/** Content is kept in pieces well under the 16 MB document limit of MongoDB (and of the embedded engine). */
const CHUNK_BYTES = 1024 * 1024;

const metaProjection: Document = { _id: 0, content_id: 0, chunks: 0 };

const sameAttrs = (a: readonly HostedAttribute[], b: readonly HostedAttribute[]): boolean =>
  a.length === b.length && a.every((attr, i) => attr.name === b[i]?.name && attr.value === b[i]?.value);

/**
 * The files an app hosts (static hosting), in the platform database so every gateway replica of a
 * distributed deployment serves the same files: `hosting_assets` holds one document per file (path,
 * MD5, size, attributes, and the id of its content), `hosting_content` the content in 1 MB chunks. A file
 * is replaced by writing the new content under a new id first and pointing the asset at it after, so a
 * reader sees the old file or the new one, never a mix; the old chunks go last. Limits are the callers'.
 */
export class HostingStore {
  constructor(private readonly db: PlatformDatabase) {}

  /** Every hosted file of the app (metadata only), by path; with `prefix`, those whose path starts with it. */
  async list(appId: string, prefix?: string): Promise<HostedAsset[]> {
    const assets = await this.db.collection('hosting_assets');
    const found = await assets.find({ app_id: appId }, metaProjection).sort({ path: 1 }).toArray();
    const all = found as unknown as HostedAsset[];
    return prefix ? all.filter((asset) => asset.path.startsWith(prefix)) : all;
  }

  /** The file at `path` (metadata only), or undefined. */
  async get(appId: string, path: string): Promise<HostedAsset | undefined> {
    const found = await (await this.db.collection('hosting_assets')).findOne({ _id: assetId(appId, path) }, metaProjection);
    return (found as unknown as HostedAsset | null) ?? undefined;
  }

  /** The file at `path` with its content, or undefined. */
  async read(appId: string, path: string, attempt = 1): Promise<{ asset: HostedAsset; bytes: Uint8Array } | undefined> {
    const found = await (await this.db.collection('hosting_assets')).findOne({ _id: assetId(appId, path) });
    if (!found) return undefined;
    const { _id, content_id: contentId, chunks, ...asset } = found;
    const pieces = await (await this.db.collection('hosting_content')).find({ content_id: contentId }).sort({ n: 1 }).toArray();
    // A replacement removed this content between the two reads: read the new file (a few times at most).
    if (pieces.length !== Number(chunks)) {
      if (attempt < 3) return this.read(appId, path, attempt + 1);
      throw new Error(`hosted file ${path} of app ${appId} has ${pieces.length} of its ${String(chunks)} content chunks`);
    }
    const bytes = pieces.length === 1 ? bytesOf(pieces[0]?.['data']) : Buffer.concat(pieces.map((piece) => bytesOf(piece['data'])));
    return { asset: asset as unknown as HostedAsset, bytes };
  }

  /** Adds or replaces one file. */
  async put(appId: string, file: HostedFileInput): Promise<HostedAsset> {
    const assets = await this.db.collection('hosting_assets');
    const previous = await assets.findOne({ _id: assetId(appId, file.path) }, { content_id: 1 });
    const contentId = await this.writeContent(file.bytes);
    const asset: HostedAsset = {
      app_id: appId,
      path: file.path,
      hash: md5(file.bytes),
      size: file.bytes.length,
      last_modified: Math.floor(Date.now() / 1000),
      attrs: file.attrs.map(({ name, value }) => ({ name, value })),
    };
    await assets.replaceOne({ _id: assetId(appId, file.path) }, { ...asset, content_id: contentId, chunks: chunkCount(file.bytes) }, { upsert: true });
    const previousContent: unknown = previous?.['content_id'];
    if (typeof previousContent === 'string') await this.removeContent(previousContent);
    return asset;
  }

  /** Replaces the attributes of a file; false when there is no such file. */
  async setAttributes(appId: string, path: string, attrs: HostedAttribute[]): Promise<boolean> {
    const result = await (await this.db.collection('hosting_assets')).updateOne({ _id: assetId(appId, path) }, { $set: { attrs: attrs.map(({ name, value }) => ({ name, value })), last_modified: Math.floor(Date.now() / 1000) } });
    return result.matchedCount > 0;
  }

  /** Removes a file; false when there was none. */
  async remove(appId: string, path: string): Promise<boolean> {
    const removed = await (await this.db.collection('hosting_assets')).findOneAndDelete({ _id: assetId(appId, path) });
    if (!removed) return false;
    const contentId: unknown = removed['content_id'];
    if (typeof contentId === 'string') await this.removeContent(contentId);
    return true;
  }

  /** Copies a file to another path (its content is copied, so either can change alone); false when `from` does not exist. */
  async copy(appId: string, from: string, to: string): Promise<boolean> {
    const source = await this.read(appId, from);
    if (!source) return false;
    await this.put(appId, { path: to, bytes: source.bytes, attrs: source.asset.attrs });
    return true;
  }

  /**
   * Makes the app host exactly `files`: new and changed files (content or attributes) are written, files
   * not listed are removed, unchanged ones are left as they are (their ETag and Last-Modified stay).
   */
  async replaceAll(appId: string, files: readonly HostedFileInput[]): Promise<{ added: string[]; modified: string[]; deleted: string[] }> {
    const current = new Map((await this.list(appId)).map((asset) => [asset.path, asset]));
    const plan = planReplacement(current, files);
    for (const file of files) if (plan.added.includes(file.path) || plan.modified.includes(file.path)) await this.put(appId, file);
    for (const path of plan.deleted) await this.remove(appId, path);
    return plan;
  }

  /** What replaceAll(appId, files) would change. */
  async diff(appId: string, files: readonly HostedFileInput[]): Promise<{ added: string[]; modified: string[]; deleted: string[] }> {
    return planReplacement(new Map((await this.list(appId)).map((asset) => [asset.path, asset])), files);
  }

  private async writeContent(bytes: Uint8Array): Promise<string> {
    const contentId = newObjectIdHex();
    const content = await this.db.collection('hosting_content');
    const count = chunkCount(bytes);
    for (let n = 0; n < count; n++) {
      await content.insertOne({ _id: `${contentId}:${n}`, content_id: contentId, n, data: new Binary(bytes.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES)) });
    }
    return contentId;
  }

  private async removeContent(contentId: string): Promise<void> {
    await (await this.db.collection('hosting_content')).deleteMany({ content_id: contentId });
  }
}

function planReplacement(current: ReadonlyMap<string, HostedAsset>, files: readonly HostedFileInput[]): { added: string[]; modified: string[]; deleted: string[] } {
  const added: string[] = [];
  const modified: string[] = [];
  const wanted = new Set<string>();
  for (const file of files) {
    wanted.add(file.path);
    const existing = current.get(file.path);
    if (!existing) added.push(file.path);
    else if (existing.hash !== md5(file.bytes) || !sameAttrs(existing.attrs, file.attrs)) modified.push(file.path);
  }
  const deleted = [...current.keys()].filter((path) => !wanted.has(path));
  return { added: added.sort(), modified: modified.sort(), deleted: deleted.sort() };
}

function assetId(appId: string, path: string): string {
  return `${appId}:${path}`;
}

function chunkCount(bytes: Uint8Array): number {
  return Math.max(1, Math.ceil(bytes.length / CHUNK_BYTES));
}

export function md5(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex');
}
