import { type DataSourceClient, openEmbeddedClient } from '@tessera/datastore';
import { type MessageBus } from '@tessera/messaging';
import { type DataSources, type DeployedApps } from '@tessera/platform';
import { makeTempDir } from '@tessera/testing';
import { type FlexibleApp, FlexibleHub, type FlexibleListener } from './flexible-hub';

describe('FlexibleHub', () => {
  const dir = makeTempDir('tessera-flexible-hub-');
  let client: DataSourceClient;
  // Reading documents and timing snapshots use neither the deployments, the data sources nor the bus.
  const hub = new FlexibleHub(undefined as unknown as DeployedApps, undefined as unknown as DataSources, undefined as unknown as MessageBus);
  const ref = { db: 'shop', coll: 'items' };

  beforeAll(() => {
    client = openEmbeddedClient(dir.path);
  });
  afterAll(async () => {
    await client.close();
    dir.remove();
  });

  describe('current', () => {
    const app = (): FlexibleApp => ({ appId: 'app', client }) as FlexibleApp;

    it('gives the sessions a change reached one read of the document, made after all of them asked', async () => {
      const items = client.db(ref.db).collection(ref.coll);
      await items.insertOne({ _id: 1, n: 1 });
      const reads = [hub.current(app(), ref, 'Item', 1), hub.current(app(), ref, 'Item', 1)];
      // A write after both asked and before the read started: both get it, as if each had read in its turn.
      const written = items.updateOne({ _id: 1 }, { $set: { n: 2 } });
      // A session whose turn comes a promise job later joins too (wrapped: awaiting would unwrap its read).
      const third = Promise.resolve().then(() => ({ read: hub.current(app(), ref, 'Item', 1) }));
      expect(reads[1]).toBe(reads[0]);
      expect((await third).read).toBe(reads[0]);
      await written;
      expect(await reads[0]).toEqual({ _id: 1, n: 2 });
    });

    it('reads again for a session that asks once the read started, and keeps documents apart', async () => {
      const items = client.db(ref.db).collection(ref.coll);
      await items.insertMany([
        { _id: 10, n: 1 },
        { _id: 11, n: 1 },
      ]);
      const first = hub.current(app(), ref, 'Item', 10);
      const other = hub.current(app(), ref, 'Item', 11);
      expect(other).not.toBe(first);
      expect(await first).toEqual({ _id: 10, n: 1 });
      await items.updateOne({ _id: 10 }, { $set: { n: 2 } });
      const later = hub.current(app(), ref, 'Item', 10);
      expect(later).not.toBe(first);
      expect(await later).toEqual({ _id: 10, n: 2 });
      expect(await hub.current(app(), ref, 'Item', 12)).toBeNull();
    });
  });

  describe('snapshotSoon', () => {
    const listener = (id: string): FlexibleListener => ({ id, appId: 'app', documentChanged: () => undefined });

    it('takes the snapshots of every session due by the time the first one is, together', async () => {
      const taken: string[] = [];
      const a = listener('a');
      const b = listener('b');
      const c = listener('c');
      hub.snapshotSoon(a, () => taken.push('a'), 20);
      hub.snapshotSoon(b, () => taken.push('b'), 20);
      hub.snapshotSoon(c, () => taken.push('c'), 20);
      // c took its own meanwhile (its session ended): it is no longer due.
      hub.snapshotTaken(c);
      // a is due again before the timer: once.
      hub.snapshotSoon(a, () => taken.push('a again'), 20);
      await vi.waitFor(() => expect(taken.length).toBeGreaterThan(0));
      expect(taken.sort()).toEqual(['a again', 'b']);
    });
  });
});
