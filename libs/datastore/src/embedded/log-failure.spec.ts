import type * as fs from 'node:fs';
import { makeTempDir } from '@tessera/testing';
import { configureEmbeddedDatastore } from './embedded-reporting';
import { LogFiles } from './log-files';

// The first log write is held until the test fails it, as a disk error in the middle of a write would.
const held: { fail?: (error: Error) => void } = {};
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
  return { ...actual, write, default: { ...actual, write } };
});

describe('the write-ahead log after a failed write', () => {
  it('refuses the records queued behind the failed write instead of writing them after a torn frame', async () => {
    const dir = makeTempDir('tessera-log-failure-');
    const lines: string[] = [];
    configureEmbeddedDatastore({ log: (level, message) => lines.push(`${level}: ${message}`) });
    const log = new LogFiles(dir.path);
    log.onFailure = (error) => lines.push(`error: ${error.message}`);
    log.openForAppend(1);
    const record = (seq: number) => ({ seq, time: Date.now(), ops: [{ k: 'i' as const, d: 'db', c: 'c', doc: { _id: seq } }] });
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
});
