import type { Document } from '@tessera/datastore';
import { newObjectIdHex } from './ids';
import type { PlatformDatabase } from './platform-database';

/** One application log entry, in the admin API's shape (`GET .../logs` returns `{ logs: [...] }`). */
export interface LogEntry {
  _id: string;
  /** `FUNCTION`, `TRIGGER`, `AUTH`, `SYNC_*`, `GRAPHQL`, `DEPLOYMENT`, ... */
  type: string;
  messages: string[];
  /** ISO 8601. */
  started: string;
  completed: string;
  error?: string;
  error_code?: string;
  function_id?: string;
  function_name?: string;
  user_id?: string;
  [extra: string]: unknown;
}

export interface NewLogEntry {
  type: string;
  messages: string[];
  started?: string;
  completed?: string;
  error?: string;
  error_code?: string;
  function_id?: string;
  function_name?: string;
  user_id?: string;
  [extra: string]: unknown;
}

export interface LogQuery {
  types?: readonly string[];
  errorsOnly?: boolean;
  /** Entries of the request with this correlation id (`co_id`). */
  coId?: string;
  /** Entries about this user (`user_id`). */
  userId?: string;
  /** Entries whose messages, error, function, trigger or endpoint name or type contain this text (case-insensitive). */
  text?: string;
  /** Inclusive bounds on `started`. */
  start?: Date;
  end?: Date;
  /** Most recent entries first; at most this many (default 100), after skipping this many. */
  limit?: number;
  skip?: number;
  /** Only entries written after the one with this `_id`, oldest first (a reader following the log). */
  afterId?: string;
}

/** Where services write application logs (the function runtime, triggers, sync) and the admin API reads them. */
export abstract class LogStore {
  abstract append(appId: string, entry: NewLogEntry): Promise<LogEntry>;
  abstract list(appId: string, query?: LogQuery): Promise<LogEntry[]>;

  /**
   * Appends entries of one or more apps (a writer that buffers, such as the function runtime's execution
   * log, hands over what it gathered at once); resolves once every one is stored, rejects if one was not.
   */
  async appendMany(entries: ReadonlyArray<{ appId: string; entry: NewLogEntry }>): Promise<void> {
    const results = await Promise.allSettled(entries.map(({ appId, entry }) => this.append(appId, entry)));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/** How an entry is stored: `at` (its start as a date) serves the date range of a query. */
export function logDocument(appId: string, entry: Document): Document {
  const { _id, ...fields } = entry;
  const at = new Date(String(fields['started']));
  return { _id, app_id: appId, at: Number.isNaN(at.getTime()) ? new Date() : at, entry: fields };
}

/**
 * The document storing an entry (as logDocument shapes it): a new id, the entry's start and end (now when it
 * gives none), no undefined fields. Made in one copy of the entry: the function runtime stores one for every
 * call, and copying was most of what storing one cost the process.
 */
function storedDocument(appId: string, entry: NewLogEntry, now: string): Document {
  const fields: Record<string, unknown> = {};
  // The keys in the order `{ ...entry, started, completed }` gives them, without undefined values (the id is the store's).
  for (const key in entry) {
    const value = entry[key];
    if (key !== '_id' && (value !== undefined || key === 'started' || key === 'completed')) fields[key] = value;
  }
  const started = entry.started ?? now;
  fields['started'] = started;
  fields['completed'] = entry.completed ?? started;
  const at = new Date(started);
  return { _id: newObjectIdHex(), app_id: appId, at: Number.isNaN(at.getTime()) ? new Date() : at, entry: fields };
}

/** Entries kept per app: the oldest go once an app has more (the platform database is not a log archive). */
export const LOG_ENTRIES_KEPT_PER_APP = 10_000;
/**
 * Appends between two trims of an app's oldest entries, per process. A trim finds the oldest entry kept by
 * walking past the kept ones, so its cost is spread over this many appends: at 500 it was 3% of a trivial
 * function call. An app holds up to this many entries beyond the kept number between trims.
 */
export const LOG_TRIM_EVERY = 2_000;

/** Where the `text` of a query is looked for. */
const textFields = ['messages', 'error', 'error_code', 'function_name', 'trigger_name', 'request_url', 'type', 'arguments'];

function escapeRegex(text: string): string {
  // A NUL is spelled as an escape: a pattern holding one is refused by the datastore (MongoDB's code 51109).
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\0/g, '\\x00');
}

/** Entries written in one insert at most. */
const batchLimit = 500;

interface PendingAppend {
  document: Document;
  written: () => void;
  failed: (error: unknown) => void;
}

/**
 * Logs in the platform database (`logs`, one document per entry: `app_id`, `at` = `started` as a date for
 * range queries, and the entry). Read newest first (by `_id`, an ObjectId hex that grows with time).
 * Appends made while a write is in flight go together in the next insert: every function call appends
 * an entry, and one round trip (and one commit) per entry would cost a distributed runtime half its calls.
 */
export class DatastoreLogStore extends LogStore {
  private readonly appends = new Map<string, number>();
  private pending: PendingAppend[] = [];
  private writer?: Promise<void>;

  constructor(
    private readonly db: PlatformDatabase,
    private readonly keptPerApp = LOG_ENTRIES_KEPT_PER_APP,
    private readonly trimEvery = LOG_TRIM_EVERY,
  ) {
    super();
  }

  /** Resolves once the entry is stored. */
  async append(appId: string, entry: NewLogEntry): Promise<LogEntry> {
    const document = storedDocument(appId, entry, new Date().toISOString());
    const written = new Promise<void>((resolve, reject) => this.pending.push({ document, written: resolve, failed: reject }));
    this.writer ??= this.writePending();
    await written;
    await this.counted(appId, 1);
    return { ...(document['entry'] as Document), _id: document['_id'] } as LogEntry;
  }

  /**
   * One promise for the whole batch instead of one per entry: the function runtime appends an entry for
   * every call, and the per-entry bookkeeping cost more than the entry's share of the insert.
   */
  override async appendMany(entries: ReadonlyArray<{ appId: string; entry: NewLogEntry }>): Promise<void> {
    if (entries.length === 0) return;
    const now = new Date().toISOString();
    await new Promise<void>((resolve, reject) => {
      let left = entries.length;
      let failure: { error: unknown } | undefined;
      const settle = (): void => {
        if (--left > 0) return;
        if (failure) reject(failure.error instanceof Error ? failure.error : new Error(String(failure.error)));
        else resolve();
      };
      const failed = (error: unknown): void => {
        failure ??= { error };
        settle();
      };
      for (const { appId, entry } of entries) this.pending.push({ document: storedDocument(appId, entry, now), written: settle, failed });
      this.writer ??= this.writePending();
    });
    const perApp = new Map<string, number>();
    for (const { appId } of entries) perApp.set(appId, (perApp.get(appId) ?? 0) + 1);
    for (const [appId, count] of perApp) await this.counted(appId, count);
  }

  /** Counts `added` entries of the app; every `trimEvery` (LOG_TRIM_EVERY) of them, its oldest entries beyond the kept number go. */
  private async counted(appId: string, added: number): Promise<void> {
    const count = (this.appends.get(appId) ?? 0) + added;
    this.appends.set(appId, count % this.trimEvery);
    if (count >= this.trimEvery) await this.trim(appId);
  }

  /** Writes what is pending, a batch at a time, until nothing is; appends of the same tick join the first batch. */
  private async writePending(): Promise<void> {
    try {
      await new Promise((resolve) => setImmediate(resolve));
      const logs = await this.db.collection('logs');
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, batchLimit);
        try {
          await logs.insertMany(
            batch.map((append) => append.document),
            { ordered: false },
          );
          for (const append of batch) append.written();
        } catch (error) {
          for (const append of batch) append.failed(error);
        }
      }
    } catch (error) {
      for (const append of this.pending.splice(0)) append.failed(error);
    } finally {
      this.writer = undefined;
    }
  }

  async list(appId: string, query: LogQuery = {}): Promise<LogEntry[]> {
    const filter: Document = { app_id: appId };
    if (query.types?.length) filter['entry.type'] = { $in: [...query.types] };
    if (query.errorsOnly) filter['entry.error'] = { $exists: true };
    if (query.coId !== undefined) filter['entry.co_id'] = query.coId;
    if (query.userId !== undefined) filter['entry.user_id'] = query.userId;
    if (query.text) {
      const pattern = { $regex: escapeRegex(query.text), $options: 'i' };
      filter['$or'] = textFields.map((field) => ({ [`entry.${field}`]: pattern }));
    }
    if (query.start || query.end) filter['at'] = { ...(query.start ? { $gte: query.start } : {}), ...(query.end ? { $lte: query.end } : {}) };
    if (query.afterId !== undefined) filter['_id'] = { $gt: query.afterId };
    const found = await (await this.db.collection('logs'))
      .find(filter)
      .sort({ _id: query.afterId !== undefined ? 1 : -1 })
      .skip(query.skip ?? 0)
      .limit(query.limit ?? 100)
      .toArray();
    return found.map((stored) => ({ ...(stored['entry'] as Omit<LogEntry, '_id'>), _id: String(stored['_id']) }) as LogEntry);
  }

  /** Drops the app's entries older than the newest `keptPerApp`. */
  async trim(appId: string): Promise<void> {
    const logs = await this.db.collection('logs');
    const [oldestKept] = await logs.find({ app_id: appId }, { _id: 1 }).sort({ _id: -1 }).skip(this.keptPerApp - 1).limit(1).toArray();
    if (oldestKept) await logs.deleteMany({ app_id: appId, _id: { $lt: oldestKept['_id'] } });
  }
}
