import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedClient, openEmbeddedClient } from './embedded-client';

describe('snapshot reads of the embedded engine', () => {
  let dir: string;
  let client: EmbeddedClient;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-snapshot-'));
    client = openEmbeddedClient(dir);
  });
  afterEach(async () => {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows a collection as it was after an earlier commit, whatever was inserted, changed or deleted since', async () => {
    const coll = client.db('app').collection('c');
    await coll.insertMany([{ _id: 1, x: 1 }, { _id: 2, x: 2 }]);
    const at = client.store.lastCommit().seq;
    await coll.updateOne({ _id: 1 }, { $set: { x: 10 } });
    await coll.deleteOne({ _id: 2 });
    await coll.insertOne({ _id: 3, x: 3 });
    const byId = (docs: Record<string, unknown>[]) => [...docs].sort((a, b) => Number(a._id) - Number(b._id));
    expect(byId(client.store.snapshotView('app', 'c', at))).toEqual([{ _id: 1, x: 1 }, { _id: 2, x: 2 }]);
    expect(byId(client.store.snapshotView('app', 'c', client.store.lastCommit().seq))).toEqual([{ _id: 1, x: 10 }, { _id: 3, x: 3 }]);
    expect(client.store.snapshotView('app', 'c', 0)).toEqual([]);
  });

  it('refuses a snapshot from before the collection was dropped', async () => {
    const coll = client.db('app').collection('c');
    await coll.insertOne({ _id: 1 });
    const at = client.store.lastCommit().seq;
    await client.db('app').dropCollection('c');
    expect(() => client.store.snapshotView('app', 'c', at)).toThrow(expect.objectContaining({ codeName: 'SnapshotUnavailable' }));
  });

  it('gives a transaction the snapshot it started with until it writes, then its own writes', async () => {
    const coll = client.db('app').collection('c');
    await coll.insertOne({ _id: 1, x: 1 });
    const session = client.startSession();
    session.startTransaction();
    await coll.updateOne({ _id: 1 }, { $set: { x: 2 } });
    await coll.insertOne({ _id: 2, x: 2 });
    expect(await coll.find({}, undefined, { session }).toArray()).toEqual([{ _id: 1, x: 1 }]);
    expect(await coll.countDocuments({}, { session })).toBe(1);
    await coll.insertOne({ _id: 3, x: 3 }, { session });
    expect(await coll.countDocuments({}, { session })).toBe(3);
    await session.commitTransaction();
    // Outside a transaction the session reads the latest commit again.
    expect(await coll.countDocuments({}, { session })).toBe(3);
    await session.endSession();
  });

  it('reads a collection no commit changed since the snapshot from its live state, without rebuilding it', async () => {
    const a = client.db('app').collection('a');
    const b = client.db('app').collection('b');
    await a.insertOne({ _id: 1 });
    await b.insertOne({ _id: 1 });
    const session = client.startSession();
    session.startTransaction();
    await b.insertOne({ _id: 2 });
    const rebuilt = vi.spyOn(client.store, 'snapshotView');
    expect(await a.find({}, undefined, { session }).toArray()).toEqual([{ _id: 1 }]);
    expect(rebuilt).not.toHaveBeenCalled();
    expect(await b.find({}, undefined, { session }).toArray()).toEqual([{ _id: 1 }]);
    expect(rebuilt).toHaveBeenCalled();
    await session.abortTransaction();
    await session.endSession();
  });

  it('keeps a transaction lifetime of history whatever was written, and beyond it no more than its operation bound', async () => {
    const start = Date.now();
    let now = start;
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    const coll = client.db('app').collection('c');
    await coll.insertOne({ _id: 'first' });
    const at = client.store.lastCommit().seq;
    const bulk = client.db('app').collection('bulk');
    for (let batch = 0; batch < 6; batch++) await bulk.insertMany(Array.from({ length: 10_000 }, (_, i) => ({ _id: batch * 10_000 + i })));
    await coll.insertOne({ _id: 'second' });
    now = start + 30_000;
    await bulk.insertOne({ _id: 'later' });
    // Within a transaction's lifetime the 60,000 operations are kept, so the snapshot still reads.
    expect(client.store.snapshotView('app', 'c', at)).toEqual([{ _id: 'first' }]);
    now = start + 61_000;
    await bulk.insertOne({ _id: 'last' });
    // Older than that and past the bound, the oldest commits went.
    expect(() => client.store.snapshotView('app', 'c', at)).toThrow(expect.objectContaining({ codeName: 'SnapshotTooOld' }));
    vi.restoreAllMocks();
  });
});
