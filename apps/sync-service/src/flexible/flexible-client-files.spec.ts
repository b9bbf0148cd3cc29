import { join } from 'node:path';
import { type ChangeEvent, type DataSourceClient, openEmbeddedClient } from '@tessera/datastore';
import { makeTempDir } from '@tessera/testing';
import { FlexibleHeldNamespace, type HeldSnapshot, HeldSnapshots, loadFileState, recordIntegrated } from './flexible-client-files';

const snapshot = (serverVersion: number, ids: number[]): HeldSnapshot => ({ serverVersion, clientVersion: 1, objects: ids.map((id) => ({ t: 'Item', id })), released: [] });

describe('HeldSnapshots', () => {
  const dir = makeTempDir('tessera-flexible-snapshots-');
  let platform: DataSourceClient;
  let app: DataSourceClient;

  beforeAll(() => {
    platform = openEmbeddedClient(join(dir.path, 'platform'));
    app = openEmbeddedClient(join(dir.path, 'app'));
  });
  afterAll(async () => {
    await platform.close();
    await app.close();
    dir.remove();
  });

  /** The change events of the snapshot collection while `work` runs, once `count` of them arrived. */
  async function eventsDuring(count: number, work: () => Promise<unknown>): Promise<ChangeEvent[]> {
    const stream = platform.db(FlexibleHeldNamespace.db).collection(FlexibleHeldNamespace.coll).watch();
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
    const snapshots = new HeldSnapshots(platform);
    const events = await eventsDuring(3, () =>
      Promise.all([snapshots.save('app1/1/1', snapshot(10, [1])), snapshots.save('app1/1/2', snapshot(11, [2])), snapshots.save('app1/1/1', snapshot(12, [1, 3])), snapshots.save('app1/1/3', snapshot(13, []))]),
    );
    // One commit: the embedded engine numbers a commit's events with one cluster time.
    expect(new Set(events.map((event) => event.clusterTime?.i)).size).toBe(1);
    expect(events.map((event) => event.documentKey?._id).sort()).toEqual(['app1/1/1', 'app1/1/2', 'app1/1/3']);
    expect(await snapshots.load('app1/1/1')).toEqual(snapshot(12, [1, 3]));
    expect(await snapshots.load('app1/1/2')).toEqual(snapshot(11, [2]));
  });

  it('puts a snapshot handed in while a write is under way into the next write, which supersedes the first', async () => {
    const snapshots = new HeldSnapshots(platform);
    const events = await eventsDuring(2, async () => {
      const first = snapshots.save('app2/1/1', snapshot(20, [1]));
      // The first write has started (the turn it was handed in has passed).
      await new Promise((resolve) => setImmediate(resolve));
      const second = snapshots.save('app2/1/1', snapshot(21, [1, 2]));
      await Promise.all([first, second]);
    });
    expect(events.map((event) => event.operationType)).toEqual(['insert', 'update']);
    expect(await snapshots.load('app2/1/1')).toEqual(snapshot(21, [1, 2]));
  });

  it('reads a file state from the upload cursor in the app cluster and the snapshot in the platform cluster', async () => {
    const snapshots = new HeldSnapshots(platform);
    expect(await loadFileState(app, snapshots, 'app3/1/1')).toBeNull();
    await recordIntegrated(app, 'app3/1/1', 4);
    expect(await loadFileState(app, snapshots, 'app3/1/1')).toEqual({ clientVersion: 4 });
    await snapshots.save('app3/1/1', snapshot(30, [7]));
    expect(await loadFileState(app, snapshots, 'app3/1/1')).toEqual({ clientVersion: 4, held: snapshot(30, [7]) });
    await snapshots.save('app3/1/2', snapshot(31, []));
    expect(await loadFileState(app, snapshots, 'app3/1/2')).toEqual({ clientVersion: 0, held: snapshot(31, []) });
  });

  it("drops an app's snapshots, those queued and those handed in after, and no other app's", async () => {
    const snapshots = new HeldSnapshots(platform);
    await Promise.all([snapshots.save('app4/1/1', snapshot(40, [1])), snapshots.save('app4/2/7', snapshot(41, [])), snapshots.save('app40/1/1', snapshot(42, []))]);
    const queued = snapshots.save('app4/1/2', snapshot(43, []));
    expect(await snapshots.purgeApp('app4')).toBe(2);
    await queued;
    await snapshots.save('app4/1/3', snapshot(44, []));
    await snapshots.save('app40/1/2', snapshot(45, []));
    const left = await platform.db(FlexibleHeldNamespace.db).collection(FlexibleHeldNamespace.coll).find({ _id: { $regex: '^app4' } }).toArray();
    expect(left.map((doc) => doc['_id']).sort()).toEqual(['app40/1/1', 'app40/1/2']);
  });

  it('tells every session that handed in a snapshot of a write that failed', async () => {
    const closed = openEmbeddedClient(join(dir.path, 'closed'));
    await closed.close();
    const snapshots = new HeldSnapshots(closed);
    const results = await Promise.allSettled([snapshots.save('app5/1/1', snapshot(50, [])), snapshots.save('app5/1/2', snapshot(51, []))]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });
});
