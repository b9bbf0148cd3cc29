/**
 * The embedded engine's change feed: committed log records turned into MongoDB change events. A stream
 * registers for live commits first and then reads the history after its resume token from the log on
 * disk, up to the last durable record, so resuming after a restart neither skips nor repeats an event.
 */
import { Timestamp, UUID } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import { type ChangeEvent, type ChangeStream, type ResumeToken, type WatchOptions } from '../api/data-source';
import { type Document, cloneValue } from '../bson/values';
import { runPipeline } from '../engine/mingo';
import { describeOperatorUpdate, describePipelineUpdate } from '../engine/update-description';
import { type CommitRecord, type LogOp } from './log-files';
import { type ServiceStore } from './service-store';

/** How many events the async iterator hands out before it lets the event loop turn once. */
const YIELD_EVERY = 64;

export interface ChangeScope {
  db?: string;
  coll?: string;
}

/** The cluster time of a commit: its time in seconds, its sequence number as the increment. */
export function commitTimestamp(seq: number, time: number): Timestamp {
  return new Timestamp({ t: Math.floor(time / 1000), i: seq % 0x1_0000_0000 });
}

export function encodeToken(seq: number, index: number): ResumeToken {
  return { _data: `${seq.toString(16).padStart(16, '0')}${index.toString(16).padStart(8, '0')}` };
}

/**
 * The operation index of an `invalidate` event's token: after every operation of its record, so a stream
 * started after it (`startAfter`) begins with the next record; `resumeAfter` it is refused, as MongoDB does.
 */
const INVALIDATE_INDEX = 0xfffffffe;

export function decodeToken(token: ResumeToken): { seq: number; index: number } {
  const data = typeof token?._data === 'string' ? token._data : '';
  if (!/^[0-9a-f]{24}$/.test(data)) throw new DatastoreError('BadValue', 'invalid resume token');
  return { seq: Number.parseInt(data.slice(0, 16), 16), index: Number.parseInt(data.slice(16), 16) };
}

/**
 * Whether an operation ends a stream over `scope` with an `invalidate` event, as MongoDB's do: a
 * collection's stream at the collection's drop or rename and at its database's drop, a database's stream
 * at the database's drop. A stream over the whole cluster is never invalidated.
 */
function invalidates(op: LogOp, scope: ChangeScope): boolean {
  if (op.m || scope.db === undefined || op.d !== scope.db) return false;
  if (op.k === 'dd') return true;
  return op.k === 'dc' && scope.coll !== undefined && op.c === scope.coll;
}

/** Whether a pipeline left an event's resume token as it was (a stream cannot resume from one it changed). */
function sameToken(a: unknown, b: ResumeToken): boolean {
  const token = a as ResumeToken | undefined;
  return typeof token === 'object' && token !== null && Object.keys(token).length === 1 && token._data === b._data;
}

function inScope(op: LogOp, scope: ChangeScope): boolean {
  if (scope.db !== undefined && op.d !== scope.db) return false;
  if (scope.coll !== undefined && op.c !== undefined && op.c !== scope.coll) return false;
  return true;
}

/** What an event takes from its collection when the change is accepted: its UUID, whether it keeps images. */
export interface CollectionFacts {
  uuid?: string;
  /** False once `changeStreamPreAndPostImages` was disabled: no pre- or post-image for its events. */
  images: boolean;
}

/** A pre- or post-image the stream requires (`required`) and the collection does not keep. */
function missingImage(which: 'pre' | 'post', op: LogOp): never {
  throw new DatastoreError(
    'NoMatchingDocument',
    `Change stream was configured to require a ${which}-image for all update, delete and replace events, but the ${which}-image was not found for the event on ${op.d}.${String(op.c)} (changeStreamPreAndPostImages is disabled)`,
  );
}

/** The change event for one logged operation, or undefined for operations the feed does not report. */
export function toChangeEvent(
  record: CommitRecord,
  index: number,
  options: WatchOptions,
  lookup: (db: string, coll: string, id: unknown) => Document | null,
  facts: CollectionFacts = { images: true },
): ChangeEvent | undefined {
  const op = record.ops[index];
  const clusterTime = commitTimestamp(record.seq, record.time);
  const expanded = options.showExpandedEvents === true;
  const base: Pick<ChangeEvent, '_id' | 'clusterTime' | 'wallTime' | 'ns' | 'collectionUUID'> = { _id: encodeToken(record.seq, index), clusterTime, wallTime: new Date(record.time), ns: op.c === undefined ? { db: op.d } : { db: op.d, coll: op.c } };
  // MongoDB 6.0 adds the collection's UUID to events when asked for expanded events.
  if (expanded && facts.uuid && op.k !== 'dd') base.collectionUUID = new UUID(facts.uuid);
  const withPre = options.fullDocumentBeforeChange === 'whenAvailable' || options.fullDocumentBeforeChange === 'required';
  /** The pre-image the stream asks for: null, or a refusal (`required`), when the collection keeps none. */
  const preImage = (): Document | null => {
    if (facts.images) return cloneValue(op.pre as Document);
    if (options.fullDocumentBeforeChange === 'required') missingImage('pre', op);
    return null;
  };
  const replaceEvent = (): ChangeEvent => {
    const event: ChangeEvent = { ...base, operationType: 'replace', documentKey: { _id: op.doc?._id }, fullDocument: cloneValue(op.doc) };
    if (withPre) event.fullDocumentBeforeChange = preImage();
    return event;
  };
  // A renamed collection's documents moving, a view redefined: one event (the rename) or none, as MongoDB.
  if (op.m) return undefined;
  switch (op.k) {
    case 'i':
      return { ...base, operationType: 'insert', documentKey: { _id: op.doc?._id }, fullDocument: cloneValue(op.doc) };
    case 'u': {
      const doc = op.doc as Document;
      const pre = op.pre as Document;
      // A pipeline update whose delta would outweigh the new document is logged by MongoDB as a
      // replacement, and reported as one.
      const description = op.up ? describeOperatorUpdate(pre, doc, op.up) : describePipelineUpdate(pre, doc);
      if (!description) return replaceEvent();
      const { updatedFields, removedFields, truncatedArrays, disambiguatedPaths } = cloneValue(description);
      const event: ChangeEvent = { ...base, operationType: 'update', documentKey: { _id: doc._id }, updateDescription: { updatedFields, removedFields, truncatedArrays } };
      if (expanded && event.updateDescription) event.updateDescription.disambiguatedPaths = disambiguatedPaths;
      if (options.fullDocument === 'updateLookup') event.fullDocument = lookup(op.d, op.c as string, doc._id);
      else if (options.fullDocument === 'whenAvailable' || options.fullDocument === 'required') {
        if (facts.images) event.fullDocument = cloneValue(doc);
        else if (options.fullDocument === 'required') missingImage('post', op);
        else event.fullDocument = null;
      }
      if (withPre) event.fullDocumentBeforeChange = preImage();
      return event;
    }
    case 'r':
      return replaceEvent();
    case 'd': {
      const event: ChangeEvent = { ...base, operationType: 'delete', documentKey: { _id: op.pre?._id } };
      if (withPre) event.fullDocumentBeforeChange = preImage();
      return event;
    }
    case 'dc':
      if (op.to) {
        const to = { db: op.to.db, coll: op.to.coll };
        const event: ChangeEvent = { ...base, operationType: 'rename', to };
        if (expanded) event.operationDescription = { to, ...(op.dropTarget ? { dropTarget: new UUID(op.dropTarget) } : {}) };
        return event;
      }
      return { ...base, operationType: 'drop' };
    case 'dd':
      return { ...base, operationType: 'dropDatabase' };
    // Changes of the catalog: reported only with showExpandedEvents, as MongoDB 6.0 does.
    case 'cc':
      if (!expanded) return undefined;
      return {
        ...base,
        operationType: 'create',
        operationDescription: op.view ? { viewOn: op.view.viewOn, pipeline: op.view.pipeline } : { idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } },
      };
    case 'ci':
      return expanded ? { ...base, operationType: 'createIndexes', operationDescription: { indexes: [{ v: 2, ...op.spec }] } } : undefined;
    case 'di':
      return expanded ? { ...base, operationType: 'dropIndexes', operationDescription: { indexes: [{ v: 2, name: op.name }] } } : undefined;
    case 'cm':
      return expanded ? { ...base, operationType: 'modify', operationDescription: cloneValue(op.options ?? {}) } : undefined;
    default:
      return undefined;
  }
}

/** An operation of a durable commit record whose event is made when a consumer takes it. */
class LoggedOp {
  constructor(
    readonly record: CommitRecord,
    readonly index: number,
    /** The document an update's `updateLookup` found when the change was accepted. */
    readonly found: Document | null | undefined,
    /** What the event takes from its collection, as it was when the change was accepted. */
    readonly facts: CollectionFacts,
  ) {}
}

function cloneOrNull(doc: Document | null): Document | null {
  return doc ? cloneValue(doc) : null;
}

export class EmbeddedChangeStream implements ChangeStream {
  /** Events not yet handed out, from `head` on: shift() on an array of 10,000 copies the rest each time. */
  private queue: Array<ChangeEvent | LoggedOp | undefined> = [];
  private head = 0;
  private waiter?: { resolve: (e: ChangeEvent) => void; reject: (error: unknown) => void };
  private unsubscribe?: () => void;
  private closed = false;
  /** Set once the stream's `invalidate` event is queued: it takes no more events, and ends once that one is out. */
  private invalidated = false;
  private failure?: unknown;
  resumeToken: ResumeToken | undefined;

  constructor(
    private readonly store: ServiceStore,
    private readonly scope: ChangeScope,
    private readonly pipeline: Document[],
    private readonly options: WatchOptions,
  ) {
    const from = options.startAfter ?? options.resumeAfter;
    this.unsubscribe = store.subscribe({
      commit: (record) => this.accept(record, -1, -1),
      // The store has already dropped this listener: the stream ends with the error its pipeline raised.
      fail: (error) => this.end(error),
      close: () => this.fail(new DatastoreError('IllegalOperation', 'the datastore was closed')),
    });
    if (from) {
      const { seq, index } = decodeToken(from);
      if (index === INVALIDATE_INDEX && !options.startAfter) {
        this.end(new DatastoreError('InvalidResumeToken', "Attempting to resume a change stream using 'resumeAfter' is not allowed from an invalidate notification."));
        return;
      }
      this.resumeToken = from;
      try {
        for (const record of store.history(seq - 1)) this.accept(record, seq, index);
      } catch (error) {
        this.end(error);
      }
    }
  }

  private accept(record: CommitRecord, afterSeq: number, afterIndex: number): void {
    if (this.closed || this.failure || this.invalidated) return;
    for (let i = 0; i < record.ops.length; i++) {
      if (record.seq < afterSeq || (record.seq === afterSeq && i <= afterIndex)) continue;
      const op = record.ops[i];
      if (!inScope(op, this.scope)) continue;
      this.acceptOp(record, i, op);
      if (invalidates(op, this.scope)) {
        this.invalidated = true;
        this.unsubscribe?.();
        this.unsubscribe = undefined;
        const clusterTime = commitTimestamp(record.seq, record.time);
        this.deliver({ _id: encodeToken(record.seq, INVALIDATE_INDEX), clusterTime, wallTime: new Date(record.time), operationType: 'invalidate' } as ChangeEvent);
        return;
      }
    }
  }

  private acceptOp(record: CommitRecord, i: number, op: LogOp): void {
    if (this.pipeline.length === 0 && !this.waiter) {
      // Made into an event when handed out, not here: this runs when the write is durable, before the
      // writer hears so, and an insertMany of 10,000 documents waited for 10,000 events to be built.
      // Stored documents are never changed in place (a write replaces them), so the event is the same;
      // an update's looked-up document is taken now, as it is at the time of the change.
      this.queue.push(new LoggedOp(record, i, op.k === 'u' && this.options.fullDocument === 'updateLookup' ? this.lookup(op.d, op.c as string, (op.doc as Document)._id) : undefined, this.facts(op)));
      return;
    }
    const event = toChangeEvent(record, i, this.options, (db, coll, id) => cloneOrNull(this.lookup(db, coll, id)), this.facts(op));
    if (!event) return;
    const passed = this.pipeline.length === 0 ? event : (runPipeline([event as unknown as Document], this.pipeline)[0] as unknown as ChangeEvent | undefined);
    if (!passed) return;
    if (!sameToken(passed._id, event._id)) {
      // Thrown to the store, which ends this stream with it (the error the next read reports).
      const error = new DatastoreError(
        'ChangeStreamFatalError',
        'Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. Modifying the _id field of an event makes it impossible to resume the stream from that point. Only transformations that retain the unmodified _id field are allowed.',
      );
      error.errorResponse = { errorLabels: ['NonResumableChangeStreamError'] };
      throw error;
    }
    this.deliver(passed);
  }

  private deliver(event: ChangeEvent): void {
    if (this.waiter) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      this.resumeToken = event._id;
      resolve(event);
    } else {
      this.queue.push(event);
    }
  }

  /** The operation's collection as it is now (when the change is accepted, close to when it was made). */
  private facts(op: LogOp): CollectionFacts {
    const coll = op.c === undefined ? undefined : this.store.collection(op.d, op.c);
    // A collection's own creation names its UUID; a later event takes it from the collection.
    return { uuid: op.k === 'cc' ? op.uuid : coll?.uuid, images: coll?.changeStreamImages !== false };
  }

  private lookup(db: string, coll: string, id: unknown): Document | null {
    return this.store.collection(db, coll)?.get(id)?.doc ?? null;
  }

  /** Ends the stream with `error` (its pipeline failed on an event): no more events, next() rejects. */
  private end(error: unknown): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.fail(error instanceof DatastoreError ? error : new DatastoreError('InternalError', `the change stream failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
  }

  private fail(error: DatastoreError): void {
    this.failure = error;
    if (this.waiter) {
      const { reject } = this.waiter;
      this.waiter = undefined;
      reject(error);
    }
  }

  async next(): Promise<ChangeEvent> {
    if (this.failure) throw this.failure;
    const ready = this.take();
    if (ready) {
      this.resumeToken = ready._id;
      return ready;
    }
    if (this.closed) throw new DatastoreError('IllegalOperation', 'the change stream is closed');
    if (this.invalidated) throw new DatastoreError('IllegalOperation', 'the change stream was invalidated');
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The next event to hand out, if any (made from its logged operation now when accept() deferred it). */
  private take(): ChangeEvent | undefined {
    while (this.head < this.queue.length) {
      const item = this.queue[this.head];
      this.queue[this.head++] = undefined;
      if (this.head === this.queue.length) {
        this.queue = [];
        this.head = 0;
      } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      if (!(item instanceof LoggedOp)) return item;
      const event = toChangeEvent(item.record, item.index, this.options, () => cloneOrNull(item.found ?? null), item.facts);
      if (event) return event;
    }
    return undefined;
  }

  /** True once the stream's `invalidate` event has been handed out: it has nothing more to give. */
  get ended(): boolean {
    return this.invalidated && this.head >= this.queue.length;
  }

  async tryNext(): Promise<ChangeEvent | null> {
    if (this.failure) throw this.failure;
    const ready = this.take();
    if (!ready) return null;
    this.resumeToken = ready._id;
    return ready;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.waiter) {
      const { reject } = this.waiter;
      this.waiter = undefined;
      reject(new DatastoreError('IllegalOperation', 'the change stream is closed'));
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ChangeEvent> {
    let handed = 0;
    while (!this.closed) {
      try {
        // A backlog (one insertMany of 10,000 documents) resolves every next() at once, in one chain of
        // microtasks that would hold the event loop (HTTP responses, timers, I/O) until it is drained.
        if (++handed % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
        yield await this.next();
      } catch (error) {
        if (this.closed) return;
        throw error;
      }
    }
  }
}
