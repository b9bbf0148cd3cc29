/**
 * Server-side cursors of the wire server: the rest of a query's result handed out batch by batch through
 * `getMore`, and change-stream cursors that wait (awaitData) for the next committed change.
 */
import { randomInt } from 'node:crypto';
import { BSON, Long } from 'bson';
import { type ChangeEvent, type Document, type ResumeToken } from '../api/data-source';
import { type EmbeddedChangeStream, encodeToken } from '../embedded/change-stream';
import { type ServiceStore } from '../embedded/service-store';
import { MAX_BSON_SIZE } from './protocol';

/** Room left in a 16 MB reply for the batch (the reply's envelope is small). */
const batchBytes = MAX_BSON_SIZE - 64 * 1024;

export interface Batch {
  docs: Document[];
  /** True when the cursor has nothing more (id 0 in the reply). */
  exhausted: boolean;
  postBatchResumeToken?: ResumeToken;
}

export interface ServerCursor {
  readonly id: Long;
  readonly ns: string;
  readonly cluster: string;
  lastUsed: number;
  /** Set while a getMore runs: MongoDB refuses a second concurrent getMore on one cursor. */
  busy: boolean;
  next(batchSize: number | undefined, waitMs: number): Promise<Batch>;
  close(): Promise<void>;
}

/** Takes documents up to `batchSize` and the reply size limit. */
function takeBatch(docs: Document[], from: number, batchSize: number | undefined): number {
  const max = batchSize && batchSize > 0 ? batchSize : Number.MAX_SAFE_INTEGER;
  let bytes = 0;
  let end = from;
  while (end < docs.length && end - from < max) {
    bytes += BSON.calculateObjectSize(docs[end]);
    if (bytes > batchBytes && end > from) break;
    end++;
  }
  return end;
}

/** A finished query's documents, handed out in batches. */
export class DocumentCursor implements ServerCursor {
  private position = 0;
  lastUsed = Date.now();
  busy = false;

  constructor(
    readonly id: Long,
    readonly ns: string,
    readonly cluster: string,
    private docs: Document[],
  ) {}

  /** The first batch (MongoDB's default is 101 documents). */
  async next(batchSize: number | undefined): Promise<Batch> {
    const end = takeBatch(this.docs, this.position, batchSize);
    const docs = this.docs.slice(this.position, end);
    this.position = end;
    return { docs, exhausted: this.position >= this.docs.length };
  }

  async close(): Promise<void> {
    this.docs = [];
  }
}

/**
 * A change stream: events queued by the embedded feed, or the wait for the next one. A wait that times out
 * keeps its pending promise for the next getMore, so an event arriving in between is not lost.
 */
export class ChangeStreamCursor implements ServerCursor {
  lastUsed = Date.now();
  busy = false;
  private pending?: Promise<{ event?: ChangeEvent; error?: unknown }>;

  constructor(
    readonly id: Long,
    readonly ns: string,
    readonly cluster: string,
    private readonly stream: EmbeddedChangeStream,
    private readonly store: ServiceStore,
  ) {}

  private async take(waitMs: number): Promise<ChangeEvent | undefined> {
    this.pending ??= this.stream.next().then(
      (event) => ({ event }),
      (error: unknown) => ({ error }),
    );
    const pending = this.pending;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), waitMs);
    });
    const settled = await Promise.race([pending, timeout]);
    clearTimeout(timer);
    if (!settled) return undefined;
    this.pending = undefined;
    if (settled.error) throw settled.error;
    return settled.event;
  }

  async next(batchSize: number | undefined, waitMs: number): Promise<Batch> {
    const max = batchSize && batchSize > 0 ? batchSize : Number.MAX_SAFE_INTEGER;
    const docs: ChangeEvent[] = [];
    const drain = async (): Promise<void> => {
      if (this.pending) {
        const ready = await this.take(0);
        if (!ready) return;
        docs.push(ready);
      }
      while (docs.length < max) {
        const event = await this.stream.tryNext();
        if (!event) break;
        docs.push(event);
      }
    };
    await drain();
    if (docs.length === 0 && waitMs > 0) {
      const event = await this.take(waitMs);
      if (event) {
        docs.push(event);
        await drain();
      }
    }
    // With the queue empty every durable record was seen: the stream's position is the store's.
    const last = docs[docs.length - 1];
    const postBatchResumeToken = last ? last._id : this.position();
    // A stream that handed out its `invalidate` event is over: the reply closes the cursor, as MongoDB's does.
    return { docs: docs as unknown as Document[], exhausted: this.stream.ended, postBatchResumeToken };
  }

  /** A token after every record durable now; resuming from it repeats none of them. */
  position(): ResumeToken {
    return encodeToken(this.store.durableSeq, 0xffffffff);
  }

  async close(): Promise<void> {
    await this.stream.close();
  }
}

export class CursorRegistry {
  private readonly cursors = new Map<string, ServerCursor>();

  add(cursor: ServerCursor): void {
    this.cursors.set(cursor.id.toString(), cursor);
  }

  get(id: Long | number): ServerCursor | undefined {
    return this.cursors.get(id.toString());
  }

  async remove(id: Long | number): Promise<boolean> {
    const cursor = this.cursors.get(id.toString());
    if (!cursor) return false;
    this.cursors.delete(id.toString());
    await cursor.close();
    return true;
  }

  get size(): number {
    return this.cursors.size;
  }

  /** Closes cursors idle longer than `idleMs`. Never rejects: a cursor that fails to close goes to `onError`. */
  async sweep(idleMs: number, onError: (error: unknown) => void): Promise<void> {
    const now = Date.now();
    const idle = [...this.cursors.values()].filter((cursor) => !cursor.busy && now - cursor.lastUsed > idleMs);
    await Promise.all(idle.map((cursor) => this.remove(cursor.id).catch(onError)));
  }

  async closeAll(): Promise<void> {
    const all = [...this.cursors.values()];
    this.cursors.clear();
    await Promise.all(all.map((cursor) => cursor.close()));
  }
}

/** A cursor id the driver reads back as the same number (positive, below 2^53). */
export function newCursorId(): Long {
  return Long.fromNumber(randomInt(1, 2 ** 47) * 64 + randomInt(0, 64));
}
