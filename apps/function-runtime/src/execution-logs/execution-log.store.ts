/** One function call, as the admin API lists it. */
export interface ExecutionLogEntry {
  id: string;
  appId: string;
  functionName: string;
  /** Who called: a user id, or `system`. */
  callerId: string;
  /** Whom the function ran as: a user id, or `system`. */
  runAsId: string;
  origin: CallOrigin;
  startedAt: Date;
  durationMs: number;
  /** Used heap of the sandbox after the call, in bytes. */
  memoryBytes: number;
  logs: string[];
  error?: { code: string; message: string };
  /** Canonical EJSON of the arguments; absent when the function sets disable_arg_logs. */
  arguments?: string;
  argumentsOmitted: boolean;
}

/** Where a call came from; `client` calls are the only ones subject to `private` and `can_evaluate`. */
export type CallOrigin = 'client' | 'http' | 'trigger' | 'system';

export interface ExecutionLogQuery {
  appId: string;
  functionName?: string;
  limit?: number;
}

/** Where execution logs go (the admin API reads them back). */
export interface ExecutionLogStore {
  append(entry: ExecutionLogEntry): void | Promise<void>;
  list(query: ExecutionLogQuery): Promise<ExecutionLogEntry[]>;
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
    const result: ExecutionLogEntry[] = [];
    for (let i = 1; i <= this.size && result.length < limit; i++) {
      const entry = this.entries[(this.next - i + this.capacity) % this.capacity];
      if (entry && entry.appId === query.appId && (query.functionName === undefined || entry.functionName === query.functionName)) {
        result.push(entry);
      }
    }
    return Promise.resolve(result);
  }
}
