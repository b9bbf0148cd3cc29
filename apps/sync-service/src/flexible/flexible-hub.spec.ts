import { type DataSourceClient, openEmbeddedClient } from '@tessera/datastore';
import { type MessageBus } from '@tessera/messaging';
import { type DataSources, type DeployedApps } from '@tessera/platform';
import { makeTempDir } from '@tessera/testing';
import { type FlexibleApp, FlexibleHub, type FlexibleListener, heldKey } from './flexible-hub';

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
    const items = () => client.db(ref.db).collection(ref.coll);

    /** Sessions of the app holding Item `id`; each handles a change told to it with `onChange`, in a promise job. */
    function sessions(id: number, onChange: Array<(session: FlexibleListener) => void>): FlexibleListener[] {
      return onChange.map((handle, i) => {
        const session: FlexibleListener = { id: `s${id}-${i}`, appId: 'app', documentChanged: () => queueMicrotask(() => handle(session)) };
        hub.register(session);
        hub.hold(session, heldKey('Item', id), true);
        return session;
      });
    }

    it('gives the sessions a change reached one read of the document, once all of them asked', async () => {
      await items().insertOne({ _id: 1, n: 1 });
      const reads: Array<Promise<unknown>> = [];
      const ask = (): void => void reads.push(hub.current(app(), ref, 'Item', 1));
      sessions(1, [ask, ask, ask]);
      hub.fanOut('app', 'Item', 1, { _id: 1, n: 1 });
      await vi.waitFor(() => expect(reads).toHaveLength(3));
      expect(new Set(reads).size).toBe(1);
      expect(await reads[0]).toEqual({ _id: 1, n: 1 });
      // Asked after that read: a read of its own, which sees what changed since.
      await items().updateOne({ _id: 1 }, { $set: { n: 2 } });
      const later = hub.current(app(), ref, 'Item', 1);
      expect(reads).not.toContain(later);
      expect(await later).toEqual({ _id: 1, n: 2 });
    });

    it("reads for a session after the writes it made before asking, and does not wait for a session that never asks", async () => {
      await items().insertOne({ _id: 2, n: 1 });
      const got: Record<string, unknown> = {};
      sessions(2, [
        // Writes first (an upload of its own), then handles the change.
        (session) => void items().updateOne({ _id: 2 }, { $set: { n: 2 } }).then(async () => (got[session.id] = await hub.current(app(), ref, 'Item', 2))),
        (session) => void hub.current(app(), ref, 'Item', 2).then((doc) => (got[session.id] = doc)),
        // Ended before its turn came: never asks.
        () => undefined,
      ]);
      hub.fanOut('app', 'Item', 2, { _id: 2, n: 1 });
      await vi.waitFor(() => expect(Object.keys(got)).toHaveLength(2));
      expect(got['s2-0']).toEqual({ _id: 2, n: 2 });
      expect(got['s2-1']).toMatchObject({ _id: 2 });
      expect(await hub.current(app(), ref, 'Item', 3)).toBeNull();
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

  describe('changed', () => {
    function hubOver(local: boolean): { hub: FlexibleHub; emit: ReturnType<typeof vi.fn> } {
      const emit = vi.fn(() => Promise.resolve());
      return { hub: new FlexibleHub(undefined as unknown as DeployedApps, undefined as unknown as DataSources, { local, emit } as unknown as MessageBus), emit };
    }

    it('announces a changed document to the other replicas over a bus that reaches other processes', () => {
      const { hub: replica, emit } = hubOver(false);
      replica.changed('app', 'Item', 7, { _id: 7 });
      expect(emit).toHaveBeenCalledWith('sync.flexible-document.changed', expect.objectContaining({ appId: 'app', table: 'Item', documentKey: '{"$numberInt":"7"}' }));
    });

    it('announces nothing in a process whose bus reaches no other (one replica)', () => {
      const { hub: only, emit } = hubOver(true);
      only.changed('app', 'Item', 7, { _id: 7 });
      expect(emit).not.toHaveBeenCalled();
    });
  });
});
