/**
 * The sync history of every partition, its client files and their reciprocal changesets, kept in the
 * datastore so that a restart loses nothing and several sync-service replicas share one partition. Uses
 * only the data-access API both engines implement (embedded and MongoDB through the official driver), and
 * no transaction, so a standalone MongoDB serves it too.
 *
 * Appends are atomic on the head without a lock: every append is ONE document holding all its entries,
 * whose `_id` names the partition and the first version it adds. Two writers that read the same head
 * both try to insert the same `_id`; the unique `_id` lets exactly one of them in and the other gets
 * `HistoryConflictError` (it re-reads the head and integrates again). A writer that dies mid-append left
 * either the whole document or nothing. The head is the batch with the highest last version.
 *
 * This class must not interpret changesets: it stores the bytes `ServerHistory` gives it.
 */
import { Binary } from 'bson';
import { type CollectionHandle, type DataSourceClient, type Document, isDuplicateKeyError } from '@tessera/datastore';
import { type ClientFileRecord, HistoryConflictError, type HistoryEntry, type HistoryHead, type HistoryStorage } from '@tessera/sync-protocol';

/** Database of the sync history in the cluster it is given (the platform cluster in the service). */
export const SYNC_HISTORY_DATABASE = 'sync';

/**
 * Changesets above this size are kept in chunk documents of their own, written before the batch that
 * names them, so a batch document stays far below the 16 MB document limit whatever the client uploads.
 */
const INLINE_CHANGESET_LIMIT = 4 * 1024 * 1024;
const CHUNK_SIZE = 4 * 1024 * 1024;

/** Versions in keys are zero-padded so that string order is version order. */
const VERSION_DIGITS = 16;

interface StoredEntry {
  version: number;
  originFileIdent: number;
  clientVersion: number;
  originTimestamp: number;
  salt: string;
  originalSize: number;
  cumulativeSize: number;
  /** The changeset, or the ids of the chunks that hold it in order. */
  changeset?: Binary | Uint8Array;
  chunks?: string[];
}

/**
 * A key prefix unique to the partition that no other partition's prefix extends: the length in front makes
 * `<len>:<partition>#` end exactly where the partition does, whatever characters the partition holds.
 */
export function partitionPrefix(partition: string): string {
  return `${partition.length}:${partition}#`;
}

function versionKey(partition: string, version: number): string {
  return `${partitionPrefix(partition)}${String(version).padStart(VERSION_DIGITS, '0')}`;
}

/** Every key of the partition lies in [prefix, prefix + '\uffff'). */
export function partitionRange(partition: string): { $gte: string; $lt: string } {
  const prefix = partitionPrefix(partition);
  return { $gte: prefix, $lt: `${prefix}\uffff` };
}

/** The bytes of a stored binary, whichever engine (or bson copy) decoded it. */
function bytesOf(value: unknown): Uint8Array {
  const binary = value as { buffer?: Uint8Array; position?: number } | undefined;
  const bytes = value instanceof Uint8Array ? value : binary?.buffer instanceof Uint8Array ? binary.buffer.subarray(0, binary.position ?? binary.buffer.length) : undefined;
  if (!bytes) throw new Error('stored sync history value is not binary');
  // A plain view, not the driver's Buffer: callers compare and re-encode these bytes.
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function numberOf(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** The collections of the sync history (`history_<name>` in database `sync`). */
export type HistoryCollection = 'batches' | 'chunks' | 'partitions' | 'client_files' | 'reciprocals' | 'client_activity';

export function historyCollection(client: DataSourceClient, databaseName: string, name: HistoryCollection): CollectionHandle {
  return client.db(databaseName).collection(`history_${name}`);
}

export class DatastoreHistoryStorage implements HistoryStorage {
  private ready?: Promise<void>;

  constructor(
    private readonly client: DataSourceClient,
    private readonly databaseName: string = SYNC_HISTORY_DATABASE,
  ) {}

  private collection(name: HistoryCollection): CollectionHandle {
    return historyCollection(this.client, this.databaseName, name);
  }

  /** Creates the indexes the reads need, once per process (creating an existing index is a no-op). */
  private init(): Promise<void> {
    this.ready ??= (async () => {
      // The head and range reads walk batches by their last version.
      await this.collection('batches').createIndex({ end: 1 }, { unique: true });
      await this.collection('client_files').createIndex({ partition: 1, ident: 1 }, { unique: true });
      await this.collection('reciprocals').createIndex({ key: 1 }, { unique: false });
      // Compaction reads the activity of a partition's client files (lifecycle/, HistoryHousekeeping).
      await this.collection('client_activity').createIndex({ partition: 1 }, { unique: false });
    })();
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
  }

  async head(partition: string): Promise<HistoryHead> {
    await this.init();
    const last = await this.lastBatch(partition);
    const meta = await this.collection('partitions').findOne({ _id: partition }, { compactedUntil: 1 });
    const head: HistoryHead = { version: numberOf(last?.['to'] ?? 0), cumulativeSize: numberOf(last?.['cumulativeSize'] ?? 0), compactedUntil: numberOf(meta?.['compactedUntil'] ?? 0) };
    if (typeof last?.['salt'] === 'string') head.salt = BigInt(last['salt']);
    return head;
  }

  /** The batch holding the head version, without its entries. */
  private async lastBatch(partition: string): Promise<Document | undefined> {
    const [last] = await this.collection('batches').find({ end: partitionRange(partition) }, { to: 1, cumulativeSize: 1, salt: 1 }).sort({ end: -1 }).limit(1).toArray();
    return last;
  }

  async readEntries(partition: string, fromExclusive: number, toInclusive: number): Promise<HistoryEntry[]> {
    await this.init();
    if (toInclusive <= fromExclusive) return [];
    // Every batch ending after `fromExclusive`, in order, until one starts after `toInclusive`; each batch
    // holds at least one version, so no more than that many batches can be needed.
    const cursor = this.collection('batches')
      .find({ end: { $gt: versionKey(partition, fromExclusive), $lt: partitionRange(partition).$lt } })
      .sort({ end: 1 })
      .limit(toInclusive - fromExclusive);
    const out: HistoryEntry[] = [];
    try {
      for await (const batch of cursor) {
        if (numberOf(batch['from']) > toInclusive) break;
        for (const stored of batch['entries'] as StoredEntry[]) {
          const version = numberOf(stored.version);
          if (version <= fromExclusive || version > toInclusive) continue;
          out.push(await this.decodeEntry(stored));
        }
      }
    } finally {
      await cursor.close();
    }
    return out;
  }

  async appendEntries(partition: string, entries: readonly HistoryEntry[], expectedHead: number): Promise<void> {
    await this.init();
    if (entries.length === 0) return;
    entries.forEach((entry, i) => {
      if (entry.version !== expectedHead + i + 1) throw new Error(`entry version ${entry.version} does not continue the history at ${expectedHead}`);
    });
    // A writer whose head is stale must not add a batch above a newer one: the insert below only catches
    // the writer that races for the same first version.
    if (numberOf((await this.lastBatch(partition))?.['to'] ?? 0) !== expectedHead) throw new HistoryConflictError(partition);
    const from = expectedHead + 1;
    const to = expectedHead + entries.length;
    const stored: StoredEntry[] = [];
    for (const entry of entries) stored.push(await this.encodeEntry(partition, entry));
    try {
      await this.collection('batches').insertOne({
        _id: versionKey(partition, from),
        partition,
        from,
        to,
        end: versionKey(partition, to),
        // The head's size and salt, so that reading the head never loads a changeset.
        cumulativeSize: entries[entries.length - 1]?.cumulativeSize ?? 0,
        salt: entries[entries.length - 1]?.salt.toString(),
        entries: stored,
      });
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new HistoryConflictError(partition);
      throw error;
    }
  }

  async rewriteEntries(partition: string, entries: readonly HistoryEntry[], compactedUntil: number): Promise<void> {
    await this.init();
    const byVersion = new Map(entries.map((entry) => [entry.version, entry]));
    if (byVersion.size > 0) {
      const versions = [...byVersion.keys()];
      const low = Math.min(...versions);
      const high = Math.max(...versions);
      // Newest batch first: a replica reading the history meanwhile (a client downloading it, in order) can
      // meet original versions followed by compacted ones, which lead to the same state, but never compacted
      // versions followed by originals (an object whose creation was compacted away, then updated). A crash
      // midway leaves the same safe mix, and the next compaction finishes it.
      const batches = await this.collection('batches')
        .find({ end: { $gte: versionKey(partition, low), $lt: partitionRange(partition).$lt }, from: { $lte: high } })
        .sort({ end: -1 })
        .toArray();
      for (const batch of batches) {
        const current = batch['entries'] as StoredEntry[];
        if (!current.some((stored) => byVersion.has(numberOf(stored.version)))) continue;
        const next: StoredEntry[] = [];
        for (const stored of current) {
          const replacement = byVersion.get(numberOf(stored.version));
          next.push(replacement ? await this.encodeEntry(partition, replacement) : stored);
        }
        await this.collection('batches').updateOne({ _id: batch['_id'] }, { $set: { entries: next as unknown as Document[], cumulativeSize: next[next.length - 1]?.cumulativeSize ?? 0 } });
      }
    }
    await this.collection('partitions').updateOne({ _id: partition }, { $max: { compactedUntil } }, { upsert: true });
  }

  async allocateClientFileIdent(partition: string): Promise<number> {
    await this.init();
    for (let attempt = 0; ; attempt++) {
      try {
        // `allocated` counts idents handed out; the first is 2 (1 is the server's own file).
        const meta = await this.collection('partitions').findOneAndUpdate({ _id: partition }, { $inc: { allocated: 1 } }, { upsert: true, returnNewDocument: true });
        return numberOf(meta?.['allocated']) + 1;
      } catch (error) {
        // Two replicas creating the partition's record at once: one insert loses, and its retry increments.
        if (!isDuplicateKeyError(error) || attempt > 2) throw error;
      }
    }
  }

  async getClientFile(partition: string, ident: number): Promise<ClientFileRecord | null> {
    await this.init();
    const stored = await this.collection('client_files').findOne({ _id: `${partitionPrefix(partition)}${ident}` });
    return stored ? decodeClientFile(stored) : null;
  }

  async putClientFile(partition: string, record: ClientFileRecord): Promise<void> {
    await this.init();
    await this.collection('client_files').replaceOne({ _id: `${partitionPrefix(partition)}${record.ident}` }, encodeClientFile(partition, record), { upsert: true });
  }

  async listClientFiles(partition: string): Promise<ClientFileRecord[]> {
    await this.init();
    return (await this.collection('client_files').find({ partition }).sort({ ident: 1 }).toArray()).map(decodeClientFile);
  }

  async getReciprocal(partition: string, ident: number, version: number): Promise<Uint8Array | null> {
    await this.init();
    const stored = await this.collection('reciprocals').findOne({ _id: `${reciprocalKey(partition, ident)}${version}` });
    return stored ? bytesOf(stored['changeset']) : null;
  }

  async putReciprocal(partition: string, ident: number, version: number, changeset: Uint8Array): Promise<void> {
    await this.init();
    await this.collection('reciprocals').replaceOne(
      { _id: `${reciprocalKey(partition, ident)}${version}` },
      { key: reciprocalKey(partition, ident), version, changeset: new Binary(changeset) },
      { upsert: true },
    );
  }

  async trimReciprocals(partition: string, ident: number, uptoVersion: number): Promise<void> {
    await this.init();
    await this.collection('reciprocals').deleteMany({ key: reciprocalKey(partition, ident), version: { $lte: uptoVersion } });
  }

  private async encodeEntry(partition: string, entry: HistoryEntry): Promise<StoredEntry> {
    const stored: StoredEntry = {
      version: entry.version,
      originFileIdent: entry.originFileIdent,
      clientVersion: entry.clientVersion,
      originTimestamp: entry.originTimestamp,
      salt: entry.salt.toString(),
      originalSize: entry.originalSize,
      cumulativeSize: entry.cumulativeSize,
    };
    if (entry.changeset.length <= INLINE_CHANGESET_LIMIT) {
      stored.changeset = new Binary(entry.changeset);
      return stored;
    }
    // Chunk ids are unique per write: chunks of an append that loses the race are never named by a batch.
    const ids: string[] = [];
    const nonce = `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
    for (let offset = 0; offset < entry.changeset.length; offset += CHUNK_SIZE) {
      const id = `${versionKey(partition, entry.version)}#${nonce}#${ids.length}`;
      await this.collection('chunks').insertOne({ _id: id, data: new Binary(entry.changeset.subarray(offset, offset + CHUNK_SIZE)) });
      ids.push(id);
    }
    stored.chunks = ids;
    return stored;
  }

  private async decodeEntry(stored: StoredEntry): Promise<HistoryEntry> {
    let changeset: Uint8Array;
    if (stored.chunks) {
      const found = await this.collection('chunks').find({ _id: { $in: stored.chunks } }).toArray();
      const byId = new Map(found.map((chunk) => [String(chunk['_id']), bytesOf(chunk['data'])]));
      changeset = bytesOf(Buffer.concat(
        stored.chunks.map((id) => {
          const part = byId.get(id);
          if (!part) throw new Error(`sync history chunk ${id} is missing`);
          return part;
        }),
      ));
    } else {
      changeset = bytesOf(stored.changeset);
    }
    return {
      version: numberOf(stored.version),
      originFileIdent: numberOf(stored.originFileIdent),
      clientVersion: numberOf(stored.clientVersion),
      originTimestamp: numberOf(stored.originTimestamp),
      salt: BigInt(stored.salt),
      changeset,
      originalSize: numberOf(stored.originalSize),
      cumulativeSize: numberOf(stored.cumulativeSize),
    };
  }
}

function reciprocalKey(partition: string, ident: number): string {
  return `${partitionPrefix(partition)}${ident}#`;
}

function encodeClientFile(partition: string, record: ClientFileRecord): Document {
  return { ...record, partition, salt: record.salt.toString() };
}

function decodeClientFile(stored: Document): ClientFileRecord {
  return {
    ident: numberOf(stored['ident']),
    salt: BigInt(String(stored['salt'])),
    lastIntegratedClientVersion: numberOf(stored['lastIntegratedClientVersion']),
    reciprocalBaseVersion: numberOf(stored['reciprocalBaseVersion']),
    lockedServerVersion: numberOf(stored['lockedServerVersion']),
    downloadServerVersion: numberOf(stored['downloadServerVersion']),
    uploadProgressServerVersion: numberOf(stored['uploadProgressServerVersion']),
    expired: stored['expired'] === true,
  };
}
