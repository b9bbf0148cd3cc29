import type * as fs from 'node:fs';
import { makeTempDir } from '@tessera/testing';
import { configureEmbeddedDatastore } from './embedded-reporting';
import { LogFiles } from './log-files';

// The first log write on the thread pool is held until the test fails it, as a disk error in the middle of
// a write would; a write on the event loop's thread fails at once while `failSync` is set.
const held: { fail?: (error: Error) => void; failSync?: boolean } = {};
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof fs>();
  let calls = 0;
  const write = (...args: unknown[]): void => {
    const callback = args[args.length - 1] as (error: Error | null, written?: number) => void;
    if (calls++ === 0) {
      held.fail = (error) => callback(error);
      return;
    }
    (actual.write as (...a: unknown[]) => void)(...args);
  };
  const writeSync = (...args: unknown[]): number => {
    if (held.failSync && typeof args[0] === 'number' && args[0] > 2) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    return (actual.writeSync as (...a: unknown[]) => number)(...args);
  };
  return { ...actual, write, writeSync, default: { ...actual, write, writeSync } };
});

describe('the write-ahead log after a failed write', () => {
  it('refuses the records queued behind the failed write instead of writing them after a torn frame', async () => {
    const dir = makeTempDir('tessera-log-failure-');
    const lines: string[] = [];
    configureEmbeddedDatastore({ log: (level, message) => lines.push(`${level}: ${message}`) });
    // Every write on the thread pool, as a busy log writes: the second record queues behind the first.
    const log = new LogFiles(dir.path, { idleWriteMs: Number.POSITIVE_INFINITY });
    log.onFailure = (error) => lines.push(`error: ${error.message}`);
    log.openForAppend(1);
    const first = log.append(record(1));
    // Queued while the first write is in flight: acknowledging it would lose it, since recovery stops at
    // the torn frame the failed write left.
    const second = log.append(record(2));
    await vi.waitFor(() => expect(held.fail).toBeDefined());
    held.fail?.(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
    await expect(first).rejects.toThrow(/could not be written/);
    await expect(second).rejects.toThrow(/could not be written/);
    await expect(log.append(record(3))).rejects.toThrow(/could not be written/);
    expect(lines).toEqual([expect.stringMatching(/^error: the write-ahead log in .* could not be written \(EIO: i\/o error, write\)/)]);
    configureEmbeddedDatastore({});
    dir.remove();
  });

  it('fails an idle log written on the event loop thread the same way, with what its turn committed, once', async () => {
    const dir = makeTempDir('tessera-log-failure-');
    const lines: string[] = [];
    configureEmbeddedDatastore({ log: (level, message) => lines.push(`${level}: ${message}`) });
    const log = new LogFiles(dir.path);
    log.onFailure = (error) => lines.push(`error: ${error.message}`);
    log.openForAppend(1);
    const durable: number[] = [];
    await log.append(record(1), () => durable.push(1));
    await new Promise((resolve) => setTimeout(resolve, 10));
    held.failSync = true;
    try {
      // Appended in one turn: written together, so both fail with the write.
      const second = log.append(record(2), () => durable.push(2));
      const third = log.append(record(3), () => durable.push(3));
      await expect(second).rejects.toThrow(/could not be written/);
      await expect(third).rejects.toThrow(/could not be written/);
    } finally {
      held.failSync = false;
    }
    await expect(log.append(record(4))).rejects.toThrow(/could not be written/);
    expect(durable).toEqual([1]);
    expect(lines).toEqual([expect.stringMatching(/^error: the write-ahead log in .* could not be written \(EIO: i\/o error, write\)/)]);
    configureEmbeddedDatastore({});
    dir.remove();
  });
});

const record = (seq: number) => ({ seq, time: Date.now(), ops: [{ k: 'i' as const, d: 'db', c: 'c', doc: { _id: seq } }] });
