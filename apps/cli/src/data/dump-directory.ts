/**
 * mongodump's directory format, written and read by `tessera data export|import` so that MongoDB's own
 * mongodump and mongorestore work on the same directories: `<db>/<collection>.bson` (the documents, BSON one
 * after another), `<db>/<collection>.metadata.json` (canonical Extended JSON: `options` when there are any,
 * `indexes` as listIndexes gave them, `collectionName`), both gzip-compressed with a `.gz` suffix under
 * `--gzip`; collection names path-escaped as mongodump escapes them. Tessera's JSON variant (`--type json`)
 * keeps the metadata files and puts one canonical Extended JSON document per line in `<collection>.json`.
 */
import { createReadStream, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type Readable, type Writable } from 'node:stream';
import { createGunzip, createGzip, gunzipSync } from 'node:zlib';
import { type Document, EJSON } from 'bson';

export type DumpType = 'bson' | 'json';

/** What `<collection>.metadata.json` holds. */
export interface CollectionMetadata {
  options?: Document;
  indexes: Document[];
  uuid?: string;
  collectionName: string;
  /** `collection` or `view` (mongodump 100.x writes it; older dumps lack it). */
  type?: string;
}

/** Characters a URL path segment keeps as they are (mongodump escapes collection names so). */
const unescaped = /[A-Za-z0-9\-_.~$&+:=@]/;

/** A collection name as a file name: every other character as %XX of its UTF-8 bytes. */
export function escapeCollectionName(name: string): string {
  let out = '';
  for (const char of name) {
    if (unescaped.test(char)) out += char;
    else for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function unescapeCollectionName(escaped: string): string {
  return decodeURIComponent(escaped);
}

/** The metadata file's text: canonical Extended JSON, keys in mongodump's order, no empty options. */
export function metadataText(metadata: CollectionMetadata): string {
  const ordered: Document = {};
  if (metadata.options && Object.keys(metadata.options).length > 0) ordered.options = metadata.options;
  ordered.indexes = metadata.indexes;
  if (metadata.uuid) ordered.uuid = metadata.uuid;
  ordered.collectionName = metadata.collectionName;
  if (metadata.type) ordered.type = metadata.type;
  return EJSON.stringify(ordered, { relaxed: false });
}

/** A file to write, gzip-compressed when asked; `close` resolves once every byte is on disk. */
export function openOutput(path: string, gzip: boolean): { stream: Writable; close(): Promise<void> } {
  const file = createWriteStream(gzip ? `${path}.gz` : path, { mode: 0o600 });
  const stream = gzip ? createGzip() : file;
  if (gzip) stream.pipe(file);
  return {
    stream,
    close: () =>
      new Promise<void>((resolve, reject) => {
        file.once('error', reject);
        file.once('close', () => resolve());
        stream.end();
      }),
  };
}

/** Writes `chunk`, waiting when the stream asks (large dumps never sit in memory). */
export async function write(stream: Writable, chunk: Uint8Array | string): Promise<void> {
  if (!stream.write(chunk)) await new Promise<void>((resolve) => stream.once('drain', resolve));
}

function openInput(path: string): Readable {
  const file = createReadStream(path);
  return path.endsWith('.gz') ? file.pipe(createGunzip()) : file;
}

/** The documents of a `.bson` file (or `.bson.gz`), each as its BSON bytes, in file order. */
export async function* bsonDocuments(path: string): AsyncGenerator<Buffer> {
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of openInput(path) as AsyncIterable<Buffer>) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let offset = 0;
    while (pending.length - offset >= 4) {
      const size = pending.readInt32LE(offset);
      if (size < 5 || size > 48 * 1024 * 1024) throw new Error(`${path}: corrupt BSON (a document of ${size} bytes at byte ${offset})`);
      if (pending.length - offset < size) break;
      yield pending.subarray(offset, offset + size);
      offset += size;
    }
    pending = pending.subarray(offset);
  }
  if (pending.length > 0) throw new Error(`${path}: the file ends inside a document (${pending.length} bytes left over)`);
}

/** The documents of a `.json` file (or `.json.gz`): one Extended JSON document per line. */
export async function* jsonDocuments(path: string): AsyncGenerator<Document> {
  let line = 0;
  for await (const text of createInterface({ input: openInput(path), crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    try {
      yield EJSON.parse(text, { relaxed: false }) as Document;
    } catch (error) {
      throw new Error(`${path}: line ${line} is not an Extended JSON document: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** One collection found in a dump directory: where its documents and metadata are. */
export interface DumpedCollection {
  db: string;
  collection: string;
  dataFile?: string;
  metadata?: CollectionMetadata;
}

function readMetadata(path: string): CollectionMetadata {
  const bytes = readFileSync(path);
  const text = (path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
  const parsed = EJSON.parse(text, { relaxed: false }) as CollectionMetadata;
  if (!Array.isArray(parsed.indexes)) throw new Error(`${path}: not a mongodump metadata file (no indexes list)`);
  return parsed;
}

/**
 * The collections of a dump directory (`<dir>/<db>/...`), or of one database's directory when `db` says
 * which database it is. Data files of the other type are left alone; system collections are skipped.
 */
export async function dumpedCollections(dir: string, type: DumpType, db?: string): Promise<DumpedCollection[]> {
  const databases = db !== undefined ? [{ name: db, path: dir }] : (await readdir(dir, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => ({ name: entry.name, path: join(dir, entry.name) }));
  const found: DumpedCollection[] = [];
  const dataSuffix = type === 'bson' ? /\.bson(\.gz)?$/ : /\.json(\.gz)?$/;
  for (const database of databases.sort((a, b) => a.name.localeCompare(b.name))) {
    const byName = new Map<string, DumpedCollection>();
    const entry = (escaped: string): DumpedCollection => {
      let collected = byName.get(escaped);
      if (!collected) byName.set(escaped, (collected = { db: database.name, collection: unescapeCollectionName(escaped) }));
      return collected;
    };
    for (const file of (await readdir(database.path)).sort()) {
      const path = join(database.path, file);
      const metadata = /^(.*)\.metadata\.json(\.gz)?$/.exec(file);
      if (metadata) {
        const collected = entry(metadata[1]);
        collected.metadata = readMetadata(path);
        // A name mongodump had to shorten is whole in its metadata.
        if (collected.metadata.collectionName) collected.collection = collected.metadata.collectionName;
        continue;
      }
      if (dataSuffix.test(file)) entry(file.replace(dataSuffix, '')).dataFile = path;
    }
    for (const collected of byName.values()) if (!collected.collection.startsWith('system.')) found.push(collected);
  }
  return found;
}

export function dumpExists(dir: string): boolean {
  return existsSync(dir);
}
