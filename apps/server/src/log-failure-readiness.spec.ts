import type * as fs from 'node:fs';
import { DataSources } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';
import { startHost, type RunningHost } from './host';

// A disk that starts failing: once armed, every asynchronous write to a file (not stdout or stderr) fails
// with EIO, as the log's write would on a dying disk. Only the log writes files with fs.write here.
const disk = { failing: false };
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof fs>();
  const write = (...args: unknown[]): void => {
    const callback = args[args.length - 1] as (error: Error | null) => void;
    if (disk.failing && typeof args[0] === 'number' && args[0] > 2) {
      setImmediate(() => callback(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO', errno: -5, syscall: 'write' })));
      return;
    }
    (actual.write as (...a: unknown[]) => void)(...args);
  };
  return { ...actual, write, default: { ...actual, write } };
});

describe('readiness when a write-ahead log fails', () => {
  const dir = makeTempDir('tessera-log-readiness-');
  let host: RunningHost;

  beforeAll(async () => {
    host = await startHost(loadSettings({ PORT: '0', HOST: '127.0.0.1', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: '', LOG_LEVEL: 'silent', TESSERA_ADMIN_PASSWORD: 'readiness-password' }));
  });

  afterAll(async () => {
    disk.failing = false;
    await host?.close();
    dir.remove();
  });

  it('turns /readyz red naming the cause, and refuses later writes with that error instead of a duplicate key', async () => {
    const port = (host.nest.getHttpServer().address() as { port: number }).port;
    const ready = () => fetch(`http://127.0.0.1:${port}/readyz`);
    expect((await ready()).status).toBe(200);

    const items = host.nest.get(DataSources).forCluster('Failing').db('app').collection('items');
    await items.insertOne({ _id: 'before' });
    disk.failing = true;
    await expect(items.insertOne({ _id: 'lost' })).rejects.toThrow(/could not be written \(EIO/);
    disk.failing = false;

    const response = await ready();
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: string; error_code: string };
    expect(body.error_code).toBe('ServiceUnavailable');
    expect(body.error).toMatch(/write-ahead log in .*Failing could not be written \(EIO: i\/o error, write\)/);
    // The same _id again: the store says why it refuses, not E11000 from the document the failed write left in memory.
    await expect(items.insertOne({ _id: 'lost' })).rejects.toThrow(/could not be written/);
    await expect(items.insertOne({ _id: 'new' })).rejects.toThrow(/refused until the server restarts/);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
