/** One function call, as the admin API lists it. */
export interface ExecutionLogEntry {
  id: string;
  appId: string;
  functionName: string;
  /** The function's config id, when it has one. */
  functionId?: string;
  /** Correlation id of the request that made the call (App Services logs it as `co_id`). */
  correlationId?: string;
  /** W3C trace id of the request that made the call, when it came with a trace context. */
  traceId?: string;
  /** Who called: a user id, or `system`. */
  callerId: string;
  /** Whom the function ran as: a user id, or `system`. */
  runAsId: string;
  origin: CallOrigin;
  remoteIPAddress?: string;
  startedAt: Date;
  durationMs: number;
  /** Used heap of the sandbox after the call, in bytes. */
  memoryBytes: number;
  logs: string[];
  error?: { code: string; message: string };
  /** Canonical EJSON of the arguments; absent when the function sets disable_arg_logs. */
  arguments?: string;
  argumentsOmitted: boolean;
  /** Set when a trigger fired the call. */
  trigger?: TriggerRun;
}

/** Which trigger a call ran for; App Services logs such a call as a run of the trigger (`DB_TRIGGER`, `SCHEDULED_TRIGGER`). */
export interface TriggerRun {
  name: string;
  id?: string;
  /** `DATABASE` or `SCHEDULED`. */
  type: string;
}

/** Where a call came from; `client` and `http` calls are the only ones subject to `private` and `can_evaluate`. */
export type CallOrigin = 'client' | 'http' | 'trigger' | 'system';

export interface ExecutionLogQuery {
  appId: string;
  functionName?: string;
  /** `only`: failed calls only; `exclude`: successful calls only; absent: both. */
  errors?: 'only' | 'exclude';
  /** Calls made by this user. */
  userId?: string;
  correlationId?: string;
  /** Calls started after this instant (exclusive). */
  startDate?: Date;
  /** Calls started at or before this instant (inclusive). */
  endDate?: Date;
  skip?: number;
  /** At most this many entries (default 100). */
  limit?: number;
}

/** Where execution logs go (the admin API reads them back, newest first). */
export interface ExecutionLogStore {
  append(entry: ExecutionLogEntry): void | Promise<void>;
  list(query: ExecutionLogQuery): Promise<ExecutionLogEntry[]>;
}

/** True when the entry matches every criterion of the query except skip and limit. */
export function matchesLogQuery(entry: ExecutionLogEntry, query: ExecutionLogQuery): boolean {
  if (entry.appId !== query.appId) return false;
  if (query.functionName !== undefined && entry.functionName !== query.functionName) return false;
  if (query.errors === 'only' && !entry.error) return false;
  if (query.errors === 'exclude' && entry.error) return false;
  if (query.userId !== undefined && entry.callerId !== query.userId) return false;
  if (query.correlationId !== undefined && entry.correlationId !== query.correlationId) return false;
  if (query.startDate && entry.startedAt.getTime() <= query.startDate.getTime()) return false;
  if (query.endDate && entry.startedAt.getTime() > query.endDate.getTime()) return false;
  return true;
}

/** Keeps the last `capacity` entries in memory, newest first when listed. */
export class InMemoryExecutionLogStore implements ExecutionLogStore {
  private readonly entries: Array<ExecutionLogEntry | undefined>;
  private next = 0;
  private size = 0;

  constructor(private readonly capacity = 10_000) {
    this.entries = new Array<ExecutionLogEntry | undefined>(capacity);
  }

  append(entry: ExecutionLogEntry): void {
    this.entries[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
    this.size = Math.min(this.size + 1, this.capacity);
  }

  list(query: ExecutionLogQuery): Promise<ExecutionLogEntry[]> {
    const limit = query.limit ?? 100;
    let skip = query.skip ?? 0;
    const result: ExecutionLogEntry[] = [];
    for (let i = 1; i <= this.size && result.length < limit; i++) {
      const entry = this.entries[(this.next - i + this.capacity) % this.capacity];
      if (!entry || !matchesLogQuery(entry, query)) continue;
      if (skip > 0) skip--;
      else result.push(entry);
    }
    return Promise.resolve(result);
  }
}
