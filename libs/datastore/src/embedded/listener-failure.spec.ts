import { makeTempDir } from '@tessera/testing';
import { configureEmbeddedDatastore, type DatastoreLogLevel } from './embedded-reporting';
import { embeddedStoreProblems, openEmbeddedClient } from './embedded-client';

// Issue 14, item 1: a change-stream listener runs from the write's durable callback; its failure used to be
// taken for a disk failure and latched the log, refusing every later write to the cluster.
describe('a change stream whose listener fails', () => {
  const lines: { level: DatastoreLogLevel; message: string }[] = [];
  beforeEach(() => {
    lines.length = 0;
    configureEmbeddedDatastore({ log: (level, message) => lines.push({ level, message }) });
  });
  afterEach(() => configureEmbeddedDatastore({}));

  it('ends that stream with its error while writes and the other streams go on', async () => {
    const dir = makeTempDir('tessera-listener-');
    const client = openEmbeddedClient(dir.path);
    const items = client.db('app').collection('items');
    const poisoned = items.watch([{ $match: { 'fullDocument.summary': { $foo: 1 } } }]);
    const healthy = items.watch();

    await items.insertOne({ _id: 1, summary: 'first' });
    await items.insertOne({ _id: 2, summary: 'second' });
    await client.db('other').collection('things').insertOne({ _id: 'x' });

    await expect(poisoned.next()).rejects.toThrow(/\$foo/);
    expect((await healthy.next()).documentKey).toEqual({ _id: 1 });
    expect((await healthy.next()).documentKey).toEqual({ _id: 2 });
    expect(embeddedStoreProblems()).toEqual([]);
    expect(lines).toContainEqual({ level: 'warn', message: expect.stringMatching(/change stream .* failed and was closed: .*\$foo/) });
    await healthy.close();
    await client.close();

    const reopened = openEmbeddedClient(dir.path);
    expect(await reopened.db('app').collection('items').countDocuments({})).toBe(2);
    await reopened.close();
    dir.remove();
  });

  it('isolates any listener that throws, whatever it throws', async () => {
    const dir = makeTempDir('tessera-listener-');
    const client = openEmbeddedClient(dir.path);
    const failed: unknown[] = [];
    let calls = 0;
    client.store.subscribe({
      commit: () => {
        calls++;
        throw new TypeError('listener bug');
      },
      fail: (error) => failed.push(error),
      close: () => undefined,
    });
    const items = client.db('app').collection('items');
    for (let i = 0; i < 5; i++) await items.insertOne({ _id: i });
    expect(await items.countDocuments({})).toBe(5);
    expect(calls).toBe(1);
    expect(failed).toEqual([expect.objectContaining({ message: 'listener bug' })]);
    await client.close();
    dir.remove();
  });
});
