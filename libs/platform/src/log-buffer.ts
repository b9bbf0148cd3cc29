import type { LogStore, NewLogEntry } from './log-store';

/** How long an entry may wait for the entries after it before they are written together. */
export const LOG_BUFFER_FLUSH_MS = 20;
/** Entries buffered at most: a burst larger than this is written at once. */
const MAX_BUFFERED = 500;

/**
 * Entries written in batches: a writer that logs once per call or request (the function runtime's execution
 * log, the Data API's `ENDPOINT` entries) appends here without waiting, and what gathered within
 * LOG_BUFFER_FLUSH_MS goes to the log store in one `appendMany` (one insert, one commit) rather than one write
 * per entry, which cost the Data API 10% of a request. A failed write drops its entries: a log must not fail
 * the call it describes. `flush` writes what waits (call it when the process stops).
 */
export class LogBuffer {
  private buffered: Array<{ appId: string; entry: NewLogEntry }> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logs: LogStore,
    private readonly flushMs = LOG_BUFFER_FLUSH_MS,
  ) {}

  append(appId: string, entry: NewLogEntry): void {
    this.buffered.push({ appId, entry });
    if (this.buffered.length >= MAX_BUFFERED) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Writes the buffered entries; resolves once the log store has them (or dropped them). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffered;
    if (batch.length === 0) return;
    this.buffered = [];
    await this.logs.appendMany(batch).catch(() => undefined);
  }
}
