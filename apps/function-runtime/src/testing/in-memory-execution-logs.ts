import { type ExecutionLogEntry, type ExecutionLogQuery, type ExecutionLogStore, matchesLogQuery } from '../execution-logs/execution-log.store';

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
