import { join } from 'node:path';
import { type ChangeEvent, type DataSourceClient, openEmbeddedClient } from '@tessera/datastore';
import { makeTempDir } from '@tessera/testing';
import { FlexibleFilesNamespace, HeldSnapshotWriter, type HeldSnapshot, loadFileState } from './flexible-client-files';

const snapshot = (serverVersion: number, ids: number[]): HeldSnapshot => ({ serverVersion, clientVersion: 1, objects: ids.map((id) => ({ t: 'Item', id })), released: [] });

describe('HeldSnapshotWriter', () => {
  const dir = makeTempDir('tessera-flexible-snapshots-');
  let client: DataSourceClient;

  beforeAll(() => {
    client = openEmbeddedClient(dir.path);
  });
  afterAll(async () => {
    await client.close();
    dir.remove();
  });

  /** The change events of the snapshot collection while `work` runs, once `count` of them arrived. */
  async function eventsDuring(count: number, work: () => Promise<unknown>): Promise<ChangeEvent[]> {
    const stream = client.db(FlexibleFilesNamespace.db).collection(FlexibleFilesNamespace.coll).watch();
    try {
      await work();
      const events: ChangeEvent[] = [];
      while (events.length < count) events.push(await stream.next());
      expect(await stream.tryNext()).toBeNull();
      return events;
    } finally {
      await stream.close();
    }
  }

  it('writes the snapshots sessions hand in together in one commit, the latest of each client file', async () => {
    const writer = new HeldSnapshotWriter();
    const events = await eventsDuring(3, () =>
      Promise.all([
        writer.save(client, 'app/1/1', snapshot(10, [1])),
        writer.save(client, 'app/1/2', snapshot(11, [2])),
        writer.save(client, 'app/1/1', snapshot(12, [1, 3])),
        writer.save(client, 'app/1/3', snapshot(13, [])),
      ]),
    );
    // One commit: the embedded engine numbers a commit's events with one cluster time.
    expect(new Set(events.map((event) => event.clusterTime?.i)).size).toBe(1);
    expect(events.map((event) => event.documentKey?._id).sort()).toEqual(['app/1/1', 'app/1/2', 'app/1/3']);
    expect((await loadFileState(client, 'app/1/1'))?.held).toEqual(snapshot(12, [1, 3]));
    expect((await loadFileState(client, 'app/1/2'))?.held).toEqual(snapshot(11, [2]));
  });

  it('puts a snapshot handed in while a write is under way into the next write, which supersedes the first', async () => {
    const writer = new HeldSnapshotWriter();
    const events = await eventsDuring(2, async () => {
      const first = writer.save(client, 'app/2/1', snapshot(20, [1]));
      // The first write has started (the turn it was handed in has passed) and is not on disk yet.
      await new Promise((resolve) => setImmediate(resolve));
      const second = writer.save(client, 'app/2/1', snapshot(21, [1, 2]));
      await Promise.all([first, second]);
    });
    expect(events.map((event) => event.operationType)).toEqual(['insert', 'update']);
    expect((await loadFileState(client, 'app/2/1'))?.held).toEqual(snapshot(21, [1, 2]));
  });

  it('tells every session that handed in a snapshot of a write that failed', async () => {
    const closing = openEmbeddedClient(join(dir.path, 'closed'));
    await closing.close();
    const writer = new HeldSnapshotWriter();
    const results = await Promise.allSettled([writer.save(closing, 'app/3/1', snapshot(30, [])), writer.save(closing, 'app/3/2', snapshot(31, []))]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });
});
