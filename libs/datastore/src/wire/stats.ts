/**
 * `collStats` and `dbStats` as MongoDB 7 shapes them, from the embedded engine's committed state: counts are
 * exact; data sizes are the documents' BSON sizes (the engine keeps documents, not pages, so storage size is
 * the data size and index sizes are estimated from their entries). mongodump asks `collStats` which storage
 * engine runs; mongosh's `db.stats()` and Compass show these numbers.
 */
import { calculateObjectSize, Long } from 'bson';
import { type Document } from '../api/data-source';
import { type CollectionState } from '../engine/collection-state';
import { WireCommandError } from './errors';

/** Bytes counted per index entry: a record id and a key reference, about what a B-tree entry costs. */
const indexEntryBytes = 16;

/** The `scale` of a stats command: a positive number, 1 by default (sizes are divided by it, rounded down). */
export function statsScale(command: Document): number {
  const raw = command.scale;
  if (raw === undefined || raw === null) return 1;
  const scale = raw instanceof Long ? raw.toNumber() : raw;
  if (typeof scale !== 'number' || !Number.isFinite(scale)) throw new WireCommandError(14, 'TypeMismatch', "'scale' must be a number");
  if (scale < 1) throw new WireCommandError(51024, 'Location51024', `BSON field 'scale' value must be >= 1, actual value '${scale}'`);
  return Math.floor(scale);
}

interface Sizes {
  count: number;
  dataSize: number;
  indexSizes: Record<string, number>;
}

/** Documents sized between two yields to the event loop (a million take seconds; other clients go on meanwhile). */
const sizingSlice = 5000;

async function sizesOf(state: CollectionState): Promise<Sizes> {
  let dataSize = 0;
  let sized = 0;
  // Writes that land while this yields are counted or not, as with MongoDB's own statistics.
  for (const record of state.records.values()) {
    dataSize += calculateObjectSize(record.doc);
    if (++sized % sizingSlice === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  const indexSizes: Record<string, number> = {};
  for (const [name, index] of state.indexes) indexSizes[name] = index.list.size * indexEntryBytes;
  return { count: state.records.size, dataSize, indexSizes };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** `collStats` of `ns` (a collection that does not exist has zeros, as MongoDB 7 answers; a view is refused). */
export async function collectionStats(ns: string, state: CollectionState | undefined, scale: number): Promise<Document> {
  if (state?.view) throw new WireCommandError(166, 'CommandNotSupportedOnView', `Namespace ${ns} is a view, not a collection`);
  const sizes = state ? await sizesOf(state) : { count: 0, dataSize: 0, indexSizes: {} };
  const indexSizes = Object.fromEntries(Object.entries(sizes.indexSizes).map(([name, bytes]) => [name, Math.floor(bytes / scale)]));
  const totalIndexSize = Math.floor(sum(Object.values(sizes.indexSizes)) / scale);
  const size = Math.floor(sizes.dataSize / scale);
  return {
    ns,
    size,
    count: sizes.count,
    ...(sizes.count > 0 ? { avgObjSize: Math.floor(sizes.dataSize / sizes.count) } : {}),
    numOrphanDocs: 0,
    storageSize: size,
    freeStorageSize: 0,
    capped: false,
    nindexes: Object.keys(indexSizes).length,
    indexBuilds: [],
    totalIndexSize,
    totalSize: size + totalIndexSize,
    indexSizes,
    scaleFactor: scale,
    ok: 1,
  };
}

/** `dbStats` over the collections and views of one database. */
export async function databaseStats(db: string, states: CollectionState[], scale: number): Promise<Document> {
  const collections: Sizes[] = [];
  for (const state of states) if (!state.view) collections.push(await sizesOf(state));
  const objects = sum(collections.map((c) => c.count));
  const dataBytes = sum(collections.map((c) => c.dataSize));
  const indexBytes = sum(collections.map((c) => sum(Object.values(c.indexSizes))));
  return {
    db,
    collections: collections.length,
    views: states.length - collections.length,
    objects,
    avgObjSize: objects > 0 ? dataBytes / objects : 0,
    dataSize: Math.floor(dataBytes / scale),
    storageSize: Math.floor(dataBytes / scale),
    indexes: sum(collections.map((c) => Object.keys(c.indexSizes).length)),
    indexSize: Math.floor(indexBytes / scale),
    totalSize: Math.floor((dataBytes + indexBytes) / scale),
    scaleFactor: scale,
    ok: 1,
  };
}
