/**
 * The files of one embedded service: write-ahead log segments (`wal-<first seq>.log`) and snapshots
 * (`snapshot-<seq>.snap`). Every record is framed as [length u32][crc32 u32][payload] with a BSON payload,
 * so a record torn by an interrupted write is detected and cut off at recovery, while damage before the
 * tail refuses the cluster (see replay). Appends are group-committed: every write
 * queued while a flush runs goes out with the next synchronous write (O_DSYNC, or write + fdatasync).
 * Records are encoded straight into a reused buffer (bson-writer.ts). Snapshots are written to a
 * temporary file, synced and renamed, so the directory always holds a readable state.
 */
import {
  chmodSync,
  closeSync,
  constants as fsConstants,
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
  statSync,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { BSON } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import { type Document, isPlainObject, toStoredForm } from '../bson/values';
import { type UpdatePaths } from '../engine/update-description';
import { encodeDocument } from './bson-writer';
import { describeError, embeddedDatastoreOptions, reportDatastore } from './embedded-reporting';

const HEADER = 8;
const writeAsync = promisify(write);
const datasyncAsync = promisify(fdatasync);
/**
 * Log segments are opened O_DSYNC where the platform has it: each write returns once its data is on
 * disk (what a write followed by fdatasync guarantees), so a flush is one call on the thread pool
 * instead of two, and does not wait for the busy main thread between the write and the sync.
 */
const DSYNC: number | undefined = fsConstants.O_DSYNC;
/** How long the log must have had nothing to write for its next write to be made on the event loop's thread. */
const IDLE_WRITE_MS = 2;
const APPEND_FLAGS = fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | (DSYNC ?? 0);
/** Data files are the owner's alone (issue 14: they were created world-readable). */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;
// bsonRegExp: a stored regex is read back as the BSON value it was (a RegExp cannot hold PCRE options or syntax).
// Numbers are read as their BSON types and then put in stored form (a double holding an integer stays a Double).
const DESERIALIZE: BSON.DeserializeOptions = { promoteLongs: false, promoteValues: false, promoteBuffers: false, bsonRegExp: true };

/** One document of the log or a snapshot, in the engine's stored form. */
function readDocument(bytes: Buffer): Document {
  return toStoredForm(BSON.deserialize(bytes, DESERIALIZE));
}

/** Insert, update, replace, delete; create, drop (collection, database), create and drop index, modify (collMod). */
export type LogOpKind = 'i' | 'u' | 'r' | 'd' | 'cc' | 'dc' | 'dd' | 'ci' | 'di' | 'cm';

/** One change inside a commit record. */
export interface LogOp {
  k: LogOpKind;
  d: string;
  c?: string;
  /** Document after the change (insert, update, replace). */
  doc?: Document;
  /** Document before the change (update, replace, delete). */
  pre?: Document;
  /**
   * The paths an operator update touched (u), from which its change event's description is made as
   * MongoDB's delta would be; absent for a pipeline update, described by a diff of `pre` and `doc`.
   */
  up?: UpdatePaths;
  /** Index spec (ci), index name (di), view definition (cc). */
  spec?: Document;
  name?: string;
  view?: Document;
  /** A collection's default collation (cc). */
  collation?: Document;
  /** A collection's UUID (cc), as change events report it (`collectionUUID`). */
  uuid?: string;
  /** What a collMod changed (cm), or a collection was created with (cc): `changeStreamPreAndPostImages`. */
  options?: Document;
  /** The UUID of the collection a rename dropped at its target (on the drop of its old name). */
  dropTarget?: string;
  /** Part of a rename or a view's redefinition (the change feed reports no event of its own for it). */
  m?: boolean;
  /** The new namespace of a renamed collection (on the drop of its old name). */
  to?: { db: string; coll: string };
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
  collation?: Document;
  uuid?: string;
  /** `changeStreamPreAndPostImages.enabled`, once set. */
  images?: boolean;
  indexes: Document[];
  docs: Document[];
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

function tooLarge(): DatastoreError {
  return new DatastoreError('BadValue', 'document is larger than the maximum BSON size', { code: 10334 });
}

/** The bson package's own serialization buffer (17 MB) unless grown. */
const BSON_BUFFER_SIZE = 17 * 1024 * 1024;

/** Buffers above this size (after a very large record) are not kept for reuse. */
const KEEP_BYTES = 8 * 1024 * 1024;

/**
 * A growable buffer that framed records are encoded into and written from. It is reused from one write
 * to the next, and bson-writer.ts encodes straight into it, so a document costs one encoding pass and no
 * allocation: at tens of thousands of documents a second the per-document buffers, their copies and the
 * per-record concatenation were a large part of the insert cost (garbage collection included).
 */
export class RecordBuffer {
  bytes: Buffer;
  length = 0;
  private frameStart = -1;

  constructor(private readonly initialSize = 256 * 1024) {
    this.bytes = Buffer.allocUnsafe(initialSize);
  }

  /** Room for `extra` bytes after the first `used` (which are kept). */
  ensure(used: number, extra: number): void {
    const needed = used + extra;
    if (needed <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.bytes.length * 2));
    this.bytes.copy(grown, 0, 0, used);
    this.bytes = grown;
  }

  /** Starts a frame: [length u32][crc32 u32], filled in by endFrame. */
  beginFrame(): void {
    this.ensure(this.length, HEADER);
    this.frameStart = this.length;
    this.length += HEADER;
  }

  endFrame(): void {
    const start = this.frameStart;
    const payload = this.bytes.subarray(start + HEADER, this.length);
    this.bytes.writeUInt32LE(payload.length, start);
    this.bytes.writeUInt32LE(crc32(payload), start + 4);
    this.frameStart = -1;
  }

  /** Drops an unfinished frame (its record could not be encoded). */
  abandonFrame(): void {
    if (this.frameStart >= 0) this.length = this.frameStart;
    this.frameStart = -1;
  }

  /**
   * Appends one BSON document. `limited` are the user documents inside it: if one is over MongoDB's
   * limit the append fails with code 10334 (nothing is appended). So does a document over the limit
   * when not `allowLarge`.
   */
  appendDocument(doc: Document, limited: (Document | undefined)[] = [], allowLarge = true): void {
    const start = this.length;
    const end = encodeDocument(this, start, doc);
    if (end >= 0) {
      if (end - start > MAX_BSON_SIZE) this.checkLarge(limited, allowLarge);
      this.length = end;
      return;
    }
    // A value encodeDocument leaves to the bson package: sized first, so that both this buffer and the
    // package's own (which silently misreports a document it cannot hold) are large enough.
    const size = BSON.calculateObjectSize(doc, { ignoreUndefined: true });
    if (size > MAX_BSON_SIZE) this.checkLarge(limited, allowLarge);
    BSON.setInternalBufferSize(size);
    this.ensure(start, size);
    const options = { index: start, checkKeys: false, ignoreUndefined: true };
    try {
      this.length = BSON.serializeWithBufferAndIndex(doc, this.bytes, options) + 1;
    } catch (error) {
      // calculateObjectSize undercounts a few values (a Map): room for all the serializer can hold.
      if (!(error instanceof RangeError)) throw error;
      this.ensure(start, Math.max(2 * size, BSON_BUFFER_SIZE));
      this.length = BSON.serializeWithBufferAndIndex(doc, this.bytes, options) + 1;
    }
  }

  /** A record over the BSON limit is refused if not `allowLarge` or if a user document in it is over the limit. */
  private checkLarge(limited: (Document | undefined)[], allowLarge: boolean): void {
    if (!allowLarge) throw tooLarge();
    for (const part of limited) if (part && BSON.calculateObjectSize(part, { ignoreUndefined: true }) > MAX_BSON_SIZE) throw tooLarge();
  }

  /** The encoded bytes (a view: valid until the next reset or append). */
  view(): Buffer {
    return this.bytes.subarray(0, this.length);
  }

  reset(): void {
    this.length = 0;
    this.frameStart = -1;
    if (this.bytes.length > KEEP_BYTES) this.bytes = Buffer.allocUnsafe(this.initialSize);
  }
}

function documentsIn(payload: Buffer): Document[] {
  const docs: Document[] = [];
  let offset = 0;
  while (offset < payload.length) {
    const size = payload.readInt32LE(offset);
    docs.push(readDocument(payload.subarray(offset, offset + size)));
    offset += size;
  }
  return docs;
}

/** MongoDB's largest document. */
export const MAX_BSON_SIZE = 16 * 1024 * 1024;

/**
 * Appends one framed commit record to `out`: a header document, then one document per operation. On
 * failure (a document over the size limit) nothing is appended.
 */
export function encodeCommitInto(out: RecordBuffer, record: CommitRecord): void {
  out.beginFrame();
  try {
    out.appendDocument({ s: record.seq, t: record.time, n: record.ops.length });
    for (const op of record.ops) out.appendDocument(op as unknown as Document, [op.doc, op.pre]);
    out.endFrame();
  } catch (error) {
    out.abandonFrame();
    throw error;
  }
}

export function decodeCommit(payload: Buffer): CommitRecord {
  const [header, ...ops] = documentsIn(payload);
  return { seq: Number(header.s), time: Number(header.t), ops: ops as unknown as LogOp[] };
}

const SEQ_NAME = Buffer.from([0x73, 0x00]);
/** BSON types a sequence number is written as: double, int32, int64. */
const NUMBER_TYPES = new Set([0x01, 0x10, 0x12]);

/**
 * Intact frames after a checksum failure at `from`: the first offset past it where a frame with a valid
 * checksum and a commit header starts, and how many valid frames run on from there. A corrupted length
 * field hides where the next frame starts, so every plausible offset is tried.
 */
function framesAfter(buf: Buffer, from: number): { count: number; offset?: number; firstSeq?: number; lastSeq?: number } {
  // A commit payload starts with its header document, whose first element is the number `s`: candidates
  // are found by a native search for its name, 13 bytes into the frame ([length][crc][size][type]s\0).
  for (let at = buf.indexOf(SEQ_NAME, from + HEADER + 5 + 1); at !== -1; at = buf.indexOf(SEQ_NAME, at + 1)) {
    const offset = at - HEADER - 5;
    const p = offset + HEADER;
    const length = buf.readUInt32LE(offset);
    if (length < 7 || p + length > buf.length || !NUMBER_TYPES.has(buf[p + 4])) continue;
    const headerSize = buf.readInt32LE(p);
    if (headerSize < 8 || headerSize > length) continue;
    if (crc32(buf.subarray(p, p + length)) !== buf.readUInt32LE(offset + 4)) continue;
    let count = 0;
    let firstSeq: number | undefined;
    let lastSeq: number | undefined;
    for (const { payload } of readFrames(buf.subarray(offset))) {
      count++;
      lastSeq = decodeSeq(payload);
      firstSeq ??= lastSeq;
    }
    return { count, offset, firstSeq, lastSeq };
  }
  return { count: 0 };
}

function corruptionMessage(path: string, offset: number, size: number, replayed: number, intact: { count: number; offset?: number; firstSeq?: number; lastSeq?: number }, laterSegments: number): string {
  const after = [
    intact.count > 0 ? `${intact.count} intact records follow it from byte ${intact.offset} (records ${intact.firstSeq}-${intact.lastSeq})` : '',
    laterSegments > 0 ? `${laterSegments} later log segments follow this one` : '',
  ].filter(Boolean);
  return [
    `the write-ahead log is corrupt: the record at byte ${offset} of ${path} (${size} bytes) fails its checksum, and ${after.join(' and ')}, so this is damage to acknowledged writes, not a write torn by a crash.`,
    `Tessera refuses to open this cluster rather than drop them, and has changed nothing on disk (${replayed} records before the damage are intact).`,
    `To proceed: stop Tessera and copy the whole data directory somewhere safe; then either restore the directory from a backup, or start once with TESSERA_DATASTORE_TRUNCATE_LOG=${path}:${offset} to discard the log from that byte on (the damaged bytes are kept in ${path}.damaged-${offset}), and unset it afterwards.`,
  ].join(' ');
}

/** Cuts a segment at `offset`, synced. */
function cutTail(path: string, offset: number): void {
  const fd = openSync(path, 'r+');
  try {
    ftruncateSync(fd, offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Copies the bytes of a segment from `offset` on into a file of their own (synced) before they are cut off. */
function keepDamaged(path: string, buf: Buffer, offset: number): string {
  const target = `${path}.damaged-${offset}`;
  const fd = openSync(target, 'w', FILE_MODE);
  try {
    const bytes = buf.subarray(offset);
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return target;
}

/**
 * The directory and its files made the owner's alone, for data written by releases that created them
 * world-readable (0755 and 0644). A few chmod calls at open; files created since are 0600 from the start.
 */
function tightenModes(dir: string): void {
  if (process.platform === 'win32') return;
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, DIR_MODE);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(dir, entry.name);
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, FILE_MODE);
  }
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
  onDurable?: () => void;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class LogFiles {
  private fd?: number;
  private activeStart = 1;
  activeSize = 0;
  /** Records queued for the next write, and the buffer the write in flight (if any) goes from. */
  private queued = new RecordBuffer();
  private writing = new RecordBuffer();
  private pending: Pending[] = [];
  private flushing = false;
  /** When the last write of the writer loop ended (performance.now()), to tell an idle log from a busy one. */
  private lastFlushEnd = Number.NEGATIVE_INFINITY;
  private failed?: DatastoreError;
  /** Called after each flush, inside the writer loop, with nothing being written (the store compacts here). */
  afterFlush?: () => void;
  /** Called once when a write or sync fails and the log stops taking writes. */
  onFailure?: (error: DatastoreError) => void;

  /**
   * `idleWriteMs`: how long the log must have had nothing to write for its next write to be made on the event
   * loop's thread (default IDLE_WRITE_MS; Infinity: always on the thread pool).
   */
  constructor(
    readonly dir: string,
    private readonly options: { idleWriteMs?: number } = {},
  ) {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    tightenModes(dir);
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

  /**
   * The newest snapshot, or undefined for an empty directory. A snapshot is renamed into place only once
   * written and synced, so one that does not read to its end marker is damaged: refused, not skipped
   * (the log it replaced is gone).
   */
  loadSnapshot(): { seq: number; collections: SnapshotCollection[] } | undefined {
    const snap = this.snapshots().pop();
    if (!snap) return undefined;
    const collections = new Map<string, SnapshotCollection>();
    const buf = readFileSync(snap.path);
    let validEnd = 0;
    for (const { payload, end } of readFrames(buf)) {
      validEnd = end;
      const doc = readDocument(payload);
      if (doc.end === true) return { seq: snap.seq, collections: [...collections.values()] };
      const key = `${String(doc.d)}.${String(doc.c)}`;
      if (doc.meta === true) {
        collections.set(key, {
          d: String(doc.d),
          c: String(doc.c),
          view: doc.view as Document | undefined,
          ...(isPlainObject(doc.collation) ? { collation: doc.collation } : {}),
          ...(typeof doc.uuid === 'string' ? { uuid: doc.uuid } : {}),
          ...(typeof doc.images === 'boolean' ? { images: doc.images } : {}),
          indexes: doc.indexes as Document[],
          docs: [],
        });
      } else {
        collections.get(key)?.docs.push(...(doc.docs as Document[]));
      }
    }
    throw new DatastoreError(
      'InternalError',
      `the snapshot ${snap.path} is corrupt: the frame at byte ${validEnd} (of ${buf.length}) fails its checksum or the file ends before its end marker. Tessera refuses to open this cluster and has changed nothing on disk. To proceed: stop Tessera, copy the whole data directory somewhere safe, and restore it from a backup.`,
    );
  }

  /**
   * Replays every commit after `afterSeq`. Returns the last sequence number found.
   *
   * A frame that fails its checksum is a torn write only when nothing valid follows it in the last
   * segment: an interrupted append leaves a prefix of its batch, never a gap before intact records. Such
   * a tail is cut off (and reported). Anything else is corruption of acknowledged records: the cluster
   * is refused, naming the file and byte offset, and no byte is changed, unless the operator named that
   * very point in TESSERA_DATASTORE_TRUNCATE_LOG (then the bytes from it on are kept aside first).
   */
  replay(afterSeq: number, apply: (record: CommitRecord) => void): number {
    const segments = this.segments();
    let last = afterSeq;
    for (const [i, segment] of segments.entries()) {
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
      if (validEnd === buf.length) continue;
      const later = segments.slice(i + 1);
      const intact = framesAfter(buf, validEnd);
      if (later.length === 0 && intact.count === 0) {
        cutTail(segment.path, validEnd);
        reportDatastore('warn', `recovery: cut ${buf.length - validEnd} bytes off the end of ${segment.path} at byte ${validEnd}, a record torn by an interrupted write (nothing valid followed it); ${last} records replayed`);
        continue;
      }
      const point = `${segment.path}:${validEnd}`;
      if (embeddedDatastoreOptions().truncateLogAt === point) {
        const kept = keepDamaged(segment.path, buf, validEnd);
        cutTail(segment.path, validEnd);
        for (const next of later) renameSync(next.path, `${next.path}.damaged`);
        fsyncDir(this.dir);
        reportDatastore('warn', `recovery: discarded the write-ahead log from byte ${validEnd} of ${segment.path} as TESSERA_DATASTORE_TRUNCATE_LOG asked (${intact.count} intact records after the damage and ${later.length} later segments lost; the bytes are kept in ${kept}${later.length ? ' and the *.damaged segments' : ''}); ${last} records replayed. Unset TESSERA_DATASTORE_TRUNCATE_LOG now.`);
        return last;
      }
      throw new DatastoreError('InternalError', corruptionMessage(segment.path, validEnd, buf.length, last, intact, later.length));
    }
    const asked = embeddedDatastoreOptions().truncateLogAt;
    if (asked && asked.startsWith(`${this.dir}/`)) reportDatastore('warn', `TESSERA_DATASTORE_TRUNCATE_LOG=${asked} names no corruption in ${this.dir} (already repaired?): nothing was cut; unset it`);
    return last;
  }

  /** Opens the newest segment for appending (creating the first one in an empty directory). */
  openForAppend(nextSeq: number): void {
    const segments = this.segments();
    const last = segments[segments.length - 1];
    if (last) {
      this.activeStart = last.start;
      this.fd = openSync(last.path, APPEND_FLAGS, FILE_MODE);
      this.activeSize = fstatSync(this.fd).size;
    } else {
      this.startSegment(nextSeq);
    }
  }

  private startSegment(start: number): void {
    const path = join(this.dir, `wal-${pad(start)}.log`);
    const fd = openSync(path, APPEND_FLAGS, FILE_MODE);
    fsyncSync(fd);
    fsyncDir(this.dir);
    const previous = this.fd;
    this.fd = fd;
    this.activeStart = start;
    this.activeSize = 0;
    if (previous !== undefined) closeSync(previous);
  }

  /**
   * Encodes a commit record into the write queue (in call order) and resolves once it is on disk. An
   * encoding failure (a document over the size limit) throws synchronously with nothing queued.
   */
  append(record: CommitRecord, onDurable?: () => void): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    encodeCommitInto(this.queued, record);
    return new Promise((resolve, reject) => {
      this.pending.push({ onDurable, resolve, reject });
      if (!this.flushing) void this.flushLoop();
    });
  }

  /** Takes what is queued for writing: the pending records and their bytes (valid until the next take). */
  private take(): { batch: Pending[]; data: Buffer } {
    const batch = this.pending;
    this.pending = [];
    const full = this.queued;
    this.queued = this.writing;
    this.queued.reset();
    this.writing = full;
    return { batch, data: full.view() };
  }

  get idle(): boolean {
    return !this.flushing && this.pending.length === 0;
  }

  /** Set once a write or sync failed: memory is then ahead of disk, and every later write is refused. */
  get failure(): DatastoreError | undefined {
    return this.failed;
  }

  /**
   * Acknowledges a batch that is on disk. What `onDurable` does with it (the change feed) is not the log's
   * business: its failure is reported and the record stays acknowledged, since it is durable. Treating
   * it as a write failure latched the log and stopped every write to the cluster (issue 14).
   */
  private settle(batch: Pending[], error?: Error): void {
    for (const p of batch) {
      if (error) {
        p.reject(error);
        continue;
      }
      try {
        p.onDurable?.();
      } catch (callbackError) {
        reportDatastore('error', `a callback after a durable write to ${this.dir} failed (the write stands): ${describeError(callbackError)}`);
      }
      p.resolve();
    }
  }

  private fail(batch: Pending[], error: unknown): void {
    // A failed write leaves memory ahead of disk: refuse every later write.
    this.failed = new DatastoreError('InternalError', `the write-ahead log in ${this.dir} could not be written (${describeError(error)}); writes to this cluster are refused until the server restarts`, { cause: error });
    try {
      this.onFailure?.(this.failed);
    } finally {
      this.settle(batch, this.failed);
    }
  }

  /** The compaction hook runs between flushes; its failure is reported, and is the log's only if it failed it. */
  private runAfterFlush(): void {
    if (this.failed || !this.afterFlush) return;
    try {
      this.afterFlush();
    } catch (error) {
      if (!this.failed) reportDatastore('error', `compacting the log in ${this.dir} failed (the log is intact; retried later): ${describeError(error)}`);
    }
  }

  /**
   * Writes what is queued until nothing is. A log that was idle (its last write ended IDLE_WRITE_MS ago or
   * more) writes its first batch on this thread, after the committing code's turn; a busy log writes on the
   * thread pool, so that commits and reads go on while the disk works and queue into the next batch. The
   * pool costs an idle log two thread wake-ups per write, which on a virtual machine took most of a lone
   * write's p99 (bench sync-flexible: commit to last DOWNLOAD p99 6-7 ms with every write on the pool,
   * 3-4 ms with the idle log's written here). Every write here stalled the loop under load (8 writers
   * fanning out to sync sessions: -40% inserts/s); with the idle rule, those 8 writers lose about 7%.
   * See docs/decisions/0036.
   */
  private async flushLoop(): Promise<void> {
    this.flushing = true;
    try {
      const idleMs = this.options.idleWriteMs ?? IDLE_WRITE_MS;
      let onThisThread = idleMs < Number.POSITIVE_INFINITY && performance.now() - this.lastFlushEnd >= idleMs;
      // After the turn that appended: the store finishes its commit first, and what else that turn commits
      // joins the batch.
      if (onThisThread) await Promise.resolve();
      while (this.pending.length > 0) {
        const { batch, data } = this.take();
        if (this.failed) {
          // Queued behind a write that failed: on disk they would follow a torn frame, which recovery
          // stops at, so acknowledging them would lose them.
          this.settle(batch, this.failed);
          continue;
        }
        try {
          const fd = this.fd;
          if (fd === undefined) throw new DatastoreError('InternalError', 'the write-ahead log is closed');
          let written = 0;
          if (onThisThread) {
            while (written < data.length) written += writeSync(fd, data, written, data.length - written);
            if (DSYNC === undefined) fdatasyncSync(fd);
          } else {
            while (written < data.length) written += (await writeAsync(fd, data, written, data.length - written, null)).bytesWritten;
            if (DSYNC === undefined) await datasyncAsync(fd);
          }
          this.activeSize += data.length;
          this.settle(batch);
        } catch (error) {
          this.fail(batch, error);
        }
        this.lastFlushEnd = performance.now();
        onThisThread = false;
        this.runAfterFlush();
      }
    } finally {
      this.flushing = false;
    }
  }

  /**
   * Writes whatever is queued synchronously, blocking the event loop, so that memory and disk agree when
   * it returns (used just before a snapshot, never while a write is in flight).
   */
  flushNow(): void {
    if (this.pending.length === 0) return;
    const { batch, data } = this.take();
    if (this.failed) {
      this.settle(batch, this.failed);
      throw this.failed;
    }
    try {
      const fd = this.fd;
      if (fd === undefined) throw new DatastoreError('InternalError', 'the write-ahead log is closed');
      let written = 0;
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
      if (DSYNC === undefined) fdatasyncSync(fd);
      this.activeSize += data.length;
      this.settle(batch);
    } catch (error) {
      this.fail(batch, error);
      throw this.failure ?? error;
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
    const fd = openSync(tmpPath, 'w', FILE_MODE);
    let size = 0;
    // Frames are gathered into one reused buffer and written a few megabytes at a time.
    const out = new RecordBuffer(4 * 1024 * 1024);
    const writeOut = () => {
      const buf = out.view();
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off);
      size += buf.length;
      out.reset();
    };
    const writeDoc = (doc: Document, allowLarge = true) => {
      out.beginFrame();
      try {
        out.appendDocument(doc, [], allowLarge);
      } catch (error) {
        out.abandonFrame();
        throw error;
      }
      out.endFrame();
      if (out.length >= 4 * 1024 * 1024) writeOut();
    };
    try {
      writeDoc({ seq });
      for (const coll of collections) {
        writeDoc({ meta: true, d: coll.d, c: coll.c, view: coll.view, ...(coll.collation ? { collation: coll.collation } : {}), ...(coll.uuid ? { uuid: coll.uuid } : {}), ...(coll.images === undefined ? {} : { images: coll.images }), indexes: coll.indexes });
        // Up to 500 documents a frame, fewer where they are large, so no frame outgrows the BSON limit.
        for (let i = 0, n = 500; i < coll.docs.length; i += n) {
          for (n = Math.min(500, coll.docs.length - i); ; n = Math.ceil(n / 2)) {
            try {
              writeDoc({ d: coll.d, c: coll.c, docs: coll.docs.slice(i, i + n) }, n === 1);
              break;
            } catch (error) {
              if (n === 1 || !(error instanceof DatastoreError)) throw error;
            }
          }
        }
      }
      writeDoc({ end: true });
      writeOut();
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
  const header = readDocument(payload.subarray(0, size));
  return Number(header.s);
}
