/**
 * The files of one embedded service: write-ahead log segments (`wal-<first seq>.log`) and snapshots
 * (`snapshot-<seq>.snap`). Every record is framed as [length u32][crc32 u32][payload] with a BSON payload,
 * so a torn or corrupt tail is detected and cut off at recovery. Appends are group-committed: every write
 * queued while a flush runs goes out with the next write + fdatasync. Snapshots are written to a temporary
 * file, synced and renamed, so the directory always holds a readable state.
 */
import {
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { BSON } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import { type Document } from '../bson/values';

const HEADER = 8;
const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);
const DESERIALIZE: BSON.DeserializeOptions = { promoteLongs: true, promoteValues: true, promoteBuffers: false };

export type LogOpKind = 'i' | 'u' | 'r' | 'd' | 'cc' | 'dc' | 'dd' | 'ci' | 'di';

/** One change inside a commit record. */
export interface LogOp {
  k: LogOpKind;
  d: string;
  c?: string;
  /** Document after the change (insert, update, replace). */
  doc?: Document;
  /** Document before the change (update, replace, delete). */
  pre?: Document;
  /** Index spec (ci), index name (di), view definition (cc). */
  spec?: Document;
  name?: string;
  view?: Document;
}

export interface CommitRecord {
  seq: number;
  time: number;
  ops: LogOp[];
}

export interface SnapshotCollection {
  d: string;
  c: string;
  view?: Document;
  indexes: Document[];
  docs: Document[];
}

export function frame(payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER + payload.length);
  out.writeUInt32LE(payload.length, 0);
  out.writeUInt32LE(crc32(payload), 4);
  payload.copy(out, HEADER);
  return out;
}

/** Valid frames from the start of `buf`; `end` of the last one is where the valid prefix stops. */
export function* readFrames(buf: Buffer): Generator<{ payload: Buffer; end: number }> {
  let offset = 0;
  while (offset + HEADER <= buf.length) {
    const length = buf.readUInt32LE(offset);
    const end = offset + HEADER + length;
    if (end > buf.length) return;
    const payload = buf.subarray(offset + HEADER, end);
    if (crc32(payload) !== buf.readUInt32LE(offset + 4)) return;
    yield { payload, end };
    offset = end;
  }
}

function serialize(doc: Document): Buffer {
  const bytes = BSON.serialize(doc, { ignoreUndefined: true, checkKeys: false });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function documentsIn(payload: Buffer): Document[] {
  const docs: Document[] = [];
  let offset = 0;
  while (offset < payload.length) {
    const size = payload.readInt32LE(offset);
    docs.push(BSON.deserialize(payload.subarray(offset, offset + size), DESERIALIZE));
    offset += size;
  }
  return docs;
}

/** MongoDB's largest document. */
export const MAX_BSON_SIZE = 16 * 1024 * 1024;

/** One framed commit record: a header document, then one document per operation. */
export function encodeCommit(record: CommitRecord): Buffer {
  const parts = [serialize({ s: record.seq, t: record.time, n: record.ops.length })];
  let size = parts[0].length;
  for (const op of record.ops) {
    const part = serialize(op as unknown as Document);
    if (part.length > MAX_BSON_SIZE && op.doc && BSON.calculateObjectSize(op.doc) > MAX_BSON_SIZE) {
      throw new DatastoreError('BadValue', 'document is larger than the maximum BSON size', { code: 10334 });
    }
    parts.push(part);
    size += part.length;
  }
  const out = Buffer.allocUnsafe(HEADER + size);
  let offset = HEADER;
  for (const part of parts) offset += part.copy(out, offset);
  out.writeUInt32LE(size, 0);
  out.writeUInt32LE(crc32(out.subarray(HEADER)), 4);
  return out;
}

export function decodeCommit(payload: Buffer): CommitRecord {
  const [header, ...ops] = documentsIn(payload);
  return { seq: Number(header.s), time: Number(header.t), ops: ops as unknown as LogOp[] };
}

function pad(n: number): string {
  return String(n).padStart(16, '0');
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

interface Pending {
  buf: Buffer;
  onDurable?: () => void;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class LogFiles {
  private fd?: number;
  private activeStart = 1;
  activeSize = 0;
  private pending: Pending[] = [];
  private flushing = false;
  private failure?: Error;
  /** Called after each flush, inside the writer loop, with nothing being written (the store compacts here). */
  afterFlush?: () => void;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  segments(): { start: number; path: string }[] {
    return readdirSync(this.dir)
      .map((name) => /^wal-(\d+)\.log$/.exec(name))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ start: Number(m[1]), path: join(this.dir, m[0]) }))
      .sort((a, b) => a.start - b.start);
  }

  private snapshots(): { seq: number; path: string }[] {
    return readdirSync(this.dir)
      .map((name) => /^snapshot-(\d+)\.snap$/.exec(name))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ seq: Number(m[1]), path: join(this.dir, m[0]) }))
      .sort((a, b) => a.seq - b.seq);
  }

  /** The newest complete snapshot, or undefined for an empty directory. */
  loadSnapshot(): { seq: number; collections: SnapshotCollection[] } | undefined {
    for (const snap of this.snapshots().reverse()) {
      const collections = new Map<string, SnapshotCollection>();
      let complete = false;
      for (const { payload } of readFrames(readFileSync(snap.path))) {
        const doc = BSON.deserialize(payload, DESERIALIZE);
        if (doc.end === true) {
          complete = true;
          break;
        }
        const key = `${String(doc.d)}.${String(doc.c)}`;
        if (doc.meta === true) {
          collections.set(key, { d: String(doc.d), c: String(doc.c), view: doc.view as Document | undefined, indexes: doc.indexes as Document[], docs: [] });
        } else {
          collections.get(key)?.docs.push(...(doc.docs as Document[]));
        }
      }
      if (complete) return { seq: snap.seq, collections: [...collections.values()] };
    }
    return undefined;
  }

  /**
   * Replays every commit after `afterSeq`, cutting a torn or corrupt tail off the last segment.
   * Returns the last sequence number found.
   */
  replay(afterSeq: number, apply: (record: CommitRecord) => void): number {
    const segments = this.segments();
    let last = afterSeq;
    segments.forEach((segment, i) => {
      const buf = readFileSync(segment.path);
      let validEnd = 0;
      for (const { payload, end } of readFrames(buf)) {
        validEnd = end;
        const record = decodeCommit(payload);
        if (record.seq <= afterSeq) continue;
        if (record.seq !== last + 1) {
          throw new DatastoreError('InternalError', `write-ahead log gap: expected record ${last + 1}, found ${record.seq} in ${segment.path}`);
        }
        apply(record);
        last = record.seq;
      }
      if (validEnd < buf.length) {
        if (i !== segments.length - 1) throw new DatastoreError('InternalError', `corrupt write-ahead log segment ${segment.path}`);
        const fd = openSync(segment.path, 'r+');
        try {
          ftruncateSync(fd, validEnd);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
    });
    return last;
  }

  /** Opens the newest segment for appending (creating the first one in an empty directory). */
  openForAppend(nextSeq: number): void {
    const segments = this.segments();
    const last = segments[segments.length - 1];
    if (last) {
      this.activeStart = last.start;
      this.fd = openSync(last.path, 'a');
      this.activeSize = fstatSync(this.fd).size;
    } else {
      this.startSegment(nextSeq);
    }
  }

  private startSegment(start: number): void {
    const path = join(this.dir, `wal-${pad(start)}.log`);
    const fd = openSync(path, 'a');
    fsyncSync(fd);
    fsyncDir(this.dir);
    const previous = this.fd;
    this.fd = fd;
    this.activeStart = start;
    this.activeSize = 0;
    if (previous !== undefined) closeSync(previous);
  }

  /** Queues a framed record (in call order); resolves once it is on disk. */
  append(buf: Buffer, onDurable?: () => void): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.push({ buf, onDurable, resolve, reject });
      if (!this.flushing) void this.flushLoop();
    });
  }

  get idle(): boolean {
    return !this.flushing && this.pending.length === 0;
  }

  private settle(batch: Pending[], error?: Error): void {
    for (const p of batch) {
      if (error) p.reject(error);
      else {
        p.onDurable?.();
        p.resolve();
      }
    }
  }

  private fail(batch: Pending[], error: unknown): void {
    // A failed write leaves memory ahead of disk: refuse every later write.
    this.failure = new DatastoreError('InternalError', 'the write-ahead log could not be written', { cause: error });
    this.settle(batch, this.failure);
  }

  private async flushLoop(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0);
        try {
          const fd = this.fd;
          if (fd === undefined) throw new DatastoreError('InternalError', 'the write-ahead log is closed');
          const data = batch.length === 1 ? batch[0].buf : Buffer.concat(batch.map((p) => p.buf));
          let written = 0;
          while (written < data.length) written += (await writeAsync(fd, data, written, data.length - written, null)).bytesWritten;
          await datasyncAsync(fd);
          this.activeSize += data.length;
          this.settle(batch);
        } catch (error) {
          this.fail(batch, error);
        }
        if (!this.failure) this.afterFlush?.();
      }
    } finally {
      this.flushing = false;
    }
  }

  /**
   * Writes whatever is queued synchronously, blocking the event loop, so that memory and disk agree when
   * it returns (used just before a snapshot).
   */
  flushNow(): void {
    const batch = this.pending.splice(0);
    if (batch.length === 0) return;
    try {
      const fd = this.fd;
      if (fd === undefined) throw new DatastoreError('InternalError', 'the write-ahead log is closed');
      const data = Buffer.concat(batch.map((p) => p.buf));
      let written = 0;
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
      fdatasyncSync(fd);
      this.activeSize += data.length;
      this.settle(batch);
    } catch (error) {
      this.fail(batch, error);
      throw this.failure;
    }
  }

  /** Waits until every queued record is on disk. */
  async drain(): Promise<void> {
    while (!this.idle) await new Promise<void>((r) => setImmediate(r));
  }

  /**
   * Writes a snapshot of the state at `seq` (every record up to it must already be on disk), starts a new
   * segment after it, and deletes what the snapshot makes unnecessary: older snapshots, and segments
   * beyond `keepSegments` kept as change-feed history. Synchronous: nothing is written meanwhile.
   */
  writeSnapshot(seq: number, collections: Iterable<SnapshotCollection>, keepSegments: number): number {
    const finalPath = join(this.dir, `snapshot-${pad(seq)}.snap`);
    const tmpPath = `${finalPath}.tmp`;
    const fd = openSync(tmpPath, 'w');
    let size = 0;
    try {
      const writeDoc = (doc: Document) => {
        const buf = frame(serialize(doc));
        let off = 0;
        while (off < buf.length) off += writeSync(fd, buf, off);
        size += buf.length;
      };
      writeDoc({ seq });
      for (const coll of collections) {
        writeDoc({ meta: true, d: coll.d, c: coll.c, view: coll.view, indexes: coll.indexes });
        for (let i = 0; i < coll.docs.length; i += 500) writeDoc({ d: coll.d, c: coll.c, docs: coll.docs.slice(i, i + 500) });
      }
      writeDoc({ end: true });
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmpPath, finalPath);
    fsyncDir(this.dir);
    this.startSegment(seq + 1);
    for (const snap of this.snapshots()) if (snap.seq < seq) unlinkSync(snap.path);
    const segments = this.segments();
    for (const segment of segments.slice(0, Math.max(0, segments.length - 1 - keepSegments))) unlinkSync(segment.path);
    for (const name of readdirSync(this.dir)) if (name.endsWith('.tmp')) unlinkSync(join(this.dir, name));
    return size;
  }

  /** First sequence number still in the log (change history before it is gone). */
  firstRetainedSeq(): number {
    return this.segments()[0]?.start ?? this.activeStart;
  }

  /** Commits after `afterSeq` up to `uptoSeq`, read back from the segments on disk. */
  *history(afterSeq: number, uptoSeq: number): Generator<CommitRecord> {
    const segments = this.segments();
    for (const [i, segment] of segments.entries()) {
      // A segment only holds records before the next one's first: skip those wholly at or before the token.
      const next = segments[i + 1];
      if (next && next.start <= afterSeq + 1) continue;
      if (!existsSync(segment.path)) continue;
      for (const { payload } of readFrames(readFileSync(segment.path))) {
        const seq = payload.readInt32LE(0) > 0 ? decodeSeq(payload) : 0;
        if (seq <= afterSeq) continue;
        if (seq > uptoSeq) return;
        yield decodeCommit(payload);
      }
    }
  }

  async close(): Promise<void> {
    await this.drain();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

function decodeSeq(payload: Buffer): number {
  const size = payload.readInt32LE(0);
  const header = BSON.deserialize(payload.subarray(0, size), DESERIALIZE);
  return Number(header.s);
}
