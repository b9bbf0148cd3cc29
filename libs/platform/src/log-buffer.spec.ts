import { LogBuffer } from './log-buffer';
import { LogStore, type LogEntry, type LogQuery, type NewLogEntry } from './log-store';

/** A log store that records each appendMany it is handed (the batches), and can be told to fail. */
class RecordingStore extends LogStore {
  readonly batches: Array<Array<{ appId: string; entry: NewLogEntry }>> = [];
  failing = false;

  append(): Promise<LogEntry> {
    throw new Error('LogBuffer writes through appendMany only');
  }

  list(_appId: string, _query?: LogQuery): Promise<LogEntry[]> {
    return Promise.resolve([]);
  }

  override appendMany(entries: ReadonlyArray<{ appId: string; entry: NewLogEntry }>): Promise<void> {
    this.batches.push([...entries]);
    return this.failing ? Promise.reject(new Error('disk full')) : Promise.resolve();
  }
}

const entry = (n: number): NewLogEntry => ({ type: 'ENDPOINT', messages: [String(n)] });

describe('LogBuffer', () => {
  it('writes the entries appended within its interval in one batch, in order, and nothing before it elapses', async () => {
    const store = new RecordingStore();
    const buffer = new LogBuffer(store, 30);
    for (let n = 0; n < 5; n++) buffer.append(n % 2 ? 'a' : 'b', entry(n));
    expect(store.batches).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(store.batches).toHaveLength(1);
    expect(store.batches[0]?.map(({ appId, entry: e }) => `${appId}:${(e as unknown as { messages: string[] }).messages[0]}`)).toEqual(['b:0', 'a:1', 'b:2', 'a:3', 'b:4']);
  });

  it('writes a burst of 500 at once, and what waits when flushed', async () => {
    const store = new RecordingStore();
    const buffer = new LogBuffer(store, 3_600_000);
    for (let n = 0; n < 502; n++) buffer.append('a', entry(n));
    expect(store.batches.map((batch) => batch.length)).toEqual([500]);
    await buffer.flush();
    expect(store.batches.map((batch) => batch.length)).toEqual([500, 2]);
    await buffer.flush();
    expect(store.batches).toHaveLength(2);
  });

  it('drops a batch the store refuses without failing the writer, and goes on with the next', async () => {
    const store = new RecordingStore();
    const buffer = new LogBuffer(store, 3_600_000);
    store.failing = true;
    buffer.append('a', entry(1));
    await expect(buffer.flush()).resolves.toBeUndefined();
    store.failing = false;
    buffer.append('a', entry(2));
    await buffer.flush();
    expect(store.batches.map((batch) => batch.length)).toEqual([1, 1]);
  });
});
