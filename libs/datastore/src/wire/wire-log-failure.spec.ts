import type * as fs from 'node:fs';
import { makeTempDir } from '@tessera/testing';
import { MongoClient } from 'mongodb';
import { configureEmbeddedDatastore } from '../embedded/embedded-reporting';
import { WireServer } from './wire-server';

// Once armed, every write to a file fails with ENOSPC, as the log's write would on a full disk: on the thread
// pool (a busy log's) or on the event loop's thread (an idle log's).
const disk = { failing: false };
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof fs>();
  const write = (...args: unknown[]): void => {
    const callback = args[args.length - 1] as (error: Error | null) => void;
    if (disk.failing && typeof args[0] === 'number' && args[0] > 2) {
      setImmediate(() => callback(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })));
      return;
    }
    (actual.write as (...a: unknown[]) => void)(...args);
  };
  const writeSync = (...args: unknown[]): number => {
    if (disk.failing && typeof args[0] === 'number' && args[0] > 2) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    return (actual.writeSync as (...a: unknown[]) => number)(...args);
  };
  return { ...actual, write, writeSync, default: { ...actual, write, writeSync } };
});

// Issue 14, item 1: after the log latched, drivers saw E11000 for writes that had never been stored.
describe('the wire server over a failed write-ahead log', () => {
  it('answers later writes with the log failure, never a duplicate key', async () => {
    const lines: string[] = [];
    configureEmbeddedDatastore({ log: (level, message) => lines.push(`${level}: ${message}`) });
    const dir = makeTempDir('tessera-wire-log-failure-');
    const server = await WireServer.start({ clustersDir: dir.path });
    const client = new MongoClient(server.uri(), { serverSelectionTimeoutMS: 5000, retryWrites: false });
    try {
      const items = client.db('app').collection<{ _id: string }>('items');
      await items.insertOne({ _id: 'stored' });
      disk.failing = true;
      await expect(items.insertOne({ _id: 'lost' })).rejects.toMatchObject({ code: 1, message: expect.stringMatching(/could not be written \(ENOSPC/) });
      disk.failing = false;
      for (const _id of ['lost', 'stored', 'new']) {
        const refused = await items.insertOne({ _id }).then(
          () => undefined,
          (error: { code?: number; message?: string }) => error,
        );
        expect(refused).toMatchObject({ code: 1, message: expect.stringMatching(/refused until the server restarts/) });
      }
      expect(lines).toContainEqual(expect.stringMatching(/^error: the write-ahead log in .* could not be written \(ENOSPC/));
    } finally {
      disk.failing = false;
      await client.close();
      await server.close();
      configureEmbeddedDatastore({});
      dir.remove();
    }
  });
});
