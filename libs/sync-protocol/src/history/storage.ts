/**
 * What the server history needs from storage, per partition. The sync service backs this with the
 * datastore; `MemoryHistoryStorage` is the in-memory implementation used by tests and tools.
 * Implementations must make `appendEntries` atomic and refuse it when `expectedHead` is stale, so that two
 * integrators of the same partition cannot interleave.
 */

/** One server version of a partition's history. */
export interface HistoryEntry {
  version: number;
  /** The client file that made the change (1 = the server itself). */
  originFileIdent: number;
  /** The client version that produced the change (`remote_version`); 0 for server-originated changes. */
  clientVersion: number;
  originTimestamp: number;
  /** The salt of this server version. */
  salt: bigint;
  /** The changeset as integrated (transformed, possibly compacted). */
  changeset: Uint8Array;
  /** Its size before compaction. */
  originalSize: number;
  /** Sum of changeset sizes of versions 1..version. */
  cumulativeSize: number;
}

export interface ClientFileRecord {
  ident: number;
  salt: bigint;
  /** The last client version integrated from this client (upload progress). */
  lastIntegratedClientVersion: number;
  /** The server version the last integrated changeset was based on: the base of its reciprocal history. */
  reciprocalBaseVersion: number;
  /** Server versions from here on must be kept for this client (from UPLOAD). */
  lockedServerVersion: number;
  /** The newest server version the client said it has downloaded. */
  downloadServerVersion: number;
  /** From UPLOAD headers: every future changeset of this client is based on this server version or later. */
  uploadProgressServerVersion: number;
  /** Set by compaction when the client's position is behind the compacted history: it must reset. */
  expired: boolean;
}

export interface HistoryHead {
  version: number;
  cumulativeSize: number;
  /** Versions up to this one have been compacted. */
  compactedUntil: number;
  /** The salt of the head version, when the storage has it at hand (saves reading the entry). */
  salt?: bigint;
}

export interface HistoryStorage {
  head(partition: string): Promise<HistoryHead>;
  /** Entries with versions in (fromExclusive, toInclusive], in order. */
  readEntries(partition: string, fromExclusive: number, toInclusive: number): Promise<HistoryEntry[]>;
  /** Appends entries continuing the history; rejects when the head is no longer `expectedHead`. */
  appendEntries(partition: string, entries: readonly HistoryEntry[], expectedHead: number): Promise<void>;
  /** Replaces existing entries (same versions) after compaction and records the compaction point. */
  rewriteEntries(partition: string, entries: readonly HistoryEntry[], compactedUntil: number): Promise<void>;
  /** Allocates the next client file ident (2, 3, ...; 1 is the server's own file). */
  allocateClientFileIdent(partition: string): Promise<number>;
  getClientFile(partition: string, ident: number): Promise<ClientFileRecord | null>;
  putClientFile(partition: string, record: ClientFileRecord): Promise<void>;
  listClientFiles(partition: string): Promise<ClientFileRecord[]>;
  /** The reciprocal transform of server version `version` for client `ident`, if one was stored. */
  getReciprocal(partition: string, ident: number, version: number): Promise<Uint8Array | null>;
  putReciprocal(partition: string, ident: number, version: number, changeset: Uint8Array): Promise<void>;
  /** Drops reciprocals of versions <= `uptoVersion` for client `ident`. */
  trimReciprocals(partition: string, ident: number, uptoVersion: number): Promise<void>;
}

interface PartitionData {
  entries: HistoryEntry[];
  compactedUntil: number;
  nextIdent: number;
  clients: Map<number, ClientFileRecord>;
  reciprocals: Map<number, Map<number, Uint8Array>>;
}

export class HistoryConflictError extends Error {
  constructor(partition: string) {
    super(`history of partition ${partition} moved on concurrently`);
    this.name = 'HistoryConflictError';
  }
}

export class MemoryHistoryStorage implements HistoryStorage {
  private readonly partitions = new Map<string, PartitionData>();

  private data(partition: string): PartitionData {
    let p = this.partitions.get(partition);
    if (!p) {
      p = { entries: [], compactedUntil: 0, nextIdent: 2, clients: new Map(), reciprocals: new Map() };
      this.partitions.set(partition, p);
    }
    return p;
  }

  head(partition: string): Promise<HistoryHead> {
    const p = this.data(partition);
    const last = p.entries[p.entries.length - 1];
    return Promise.resolve({ version: last?.version ?? 0, cumulativeSize: last?.cumulativeSize ?? 0, compactedUntil: p.compactedUntil });
  }

  readEntries(partition: string, fromExclusive: number, toInclusive: number): Promise<HistoryEntry[]> {
    return Promise.resolve(this.data(partition).entries.slice(Math.max(0, fromExclusive), Math.max(0, toInclusive)));
  }

  appendEntries(partition: string, entries: readonly HistoryEntry[], expectedHead: number): Promise<void> {
    const p = this.data(partition);
    const gap = entries.find((e, i) => e.version !== expectedHead + i + 1);
    if (gap) return Promise.reject(new Error(`entry version ${gap.version} does not continue the history at ${expectedHead}`));
    if (p.entries.length !== expectedHead) return Promise.reject(new HistoryConflictError(partition));
    p.entries.push(...entries);
    return Promise.resolve();
  }

  rewriteEntries(partition: string, entries: readonly HistoryEntry[], compactedUntil: number): Promise<void> {
    const p = this.data(partition);
    for (const e of entries) p.entries[e.version - 1] = e;
    p.compactedUntil = Math.max(p.compactedUntil, compactedUntil);
    return Promise.resolve();
  }

  allocateClientFileIdent(partition: string): Promise<number> {
    const p = this.data(partition);
    return Promise.resolve(p.nextIdent++);
  }

  getClientFile(partition: string, ident: number): Promise<ClientFileRecord | null> {
    const c = this.data(partition).clients.get(ident);
    return Promise.resolve(c ? { ...c } : null);
  }

  putClientFile(partition: string, record: ClientFileRecord): Promise<void> {
    this.data(partition).clients.set(record.ident, { ...record });
    return Promise.resolve();
  }

  listClientFiles(partition: string): Promise<ClientFileRecord[]> {
    return Promise.resolve([...this.data(partition).clients.values()].map((c) => ({ ...c })));
  }

  getReciprocal(partition: string, ident: number, version: number): Promise<Uint8Array | null> {
    return Promise.resolve(this.data(partition).reciprocals.get(ident)?.get(version) ?? null);
  }

  putReciprocal(partition: string, ident: number, version: number, changeset: Uint8Array): Promise<void> {
    const p = this.data(partition);
    let m = p.reciprocals.get(ident);
    if (!m) {
      m = new Map();
      p.reciprocals.set(ident, m);
    }
    m.set(version, changeset);
    return Promise.resolve();
  }

  trimReciprocals(partition: string, ident: number, uptoVersion: number): Promise<void> {
    const m = this.data(partition).reciprocals.get(ident);
    if (m) for (const v of [...m.keys()]) if (v <= uptoVersion) m.delete(v);
    return Promise.resolve();
  }

  /** Number of reciprocal changesets stored for a client (for tests and metrics). */
  reciprocalCount(partition: string, ident: number): number {
    return this.data(partition).reciprocals.get(ident)?.size ?? 0;
  }
}
