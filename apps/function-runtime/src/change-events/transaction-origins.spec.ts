import { type ChangeOrigin, WriteOriginsNamespace } from '@tessera/contracts';
import { type ChangeEvent, createDataSourceClient, type DataSourceClient, WireServer } from '@tessera/datastore';
import { makeTempDir } from '@tessera/testing';
import { toDocumentChanged } from './change-event-codec';
import { type OriginVerdict, TransactionOrigins } from './transaction-origins';

const origin: ChangeOrigin = { writer: 'sync-translation', appId: 'app1', partition: 'app1/"a"', version: 7 };

/** The next `count` events of the feed, each with the verdict of one tracker that saw the events before it. */
async function drain(stream: ReturnType<DataSourceClient['watch']>, count: number): Promise<Array<{ event: ChangeEvent; verdict: OriginVerdict; savable: unknown }>> {
  const origins = new TransactionOrigins();
  const out: Array<{ event: ChangeEvent; verdict: OriginVerdict; savable: unknown }> = [];
  let previous: ChangeEvent['_id'] | undefined;
  while (out.length < count) {
    const event = await stream.next();
    const verdict = origins.observe(event, previous);
    previous = event._id;
    out.push({ event, verdict, savable: origins.savable(event._id) });
  }
  return out;
}

function suite(engine: string, open: () => Promise<{ client: DataSourceClient; close: () => Promise<void> }>): void {
  describe(`an origin marker on a transaction (${engine})`, () => {
    let client: DataSourceClient;
    let close: () => Promise<void>;

    beforeEach(async () => {
      ({ client, close } = await open());
    });
    afterEach(async () => {
      await close();
    });

    it('goes onto every other change of its transaction and no further; the marker itself is not published', async () => {
      const stream = client.watch([], { fullDocument: 'updateLookup', fullDocumentBeforeChange: 'whenAvailable' });
      const items = client.db('app').collection('Item');
      await items.insertOne({ _id: 1, name: 'before' });
      const session = client.startSession();
      await session.withTransaction(async (s) => {
        await client.db(WriteOriginsNamespace.db).collection(WriteOriginsNamespace.coll).replaceOne({ _id: 'sync-translation/app1/"a"' }, { origin }, { upsert: true, session: s });
        await items.replaceOne({ _id: 1 }, { name: 'synced' }, { session: s });
        await items.insertOne({ _id: 2, name: 'synced too' }, { session: s });
        await items.deleteOne({ _id: 1 }, { session: s });
      });
      await session.endSession();
      await items.insertOne({ _id: 3, name: 'after' });

      const seen = await drain(stream, 6);
      await stream.close();
      expect(seen.map(({ event, verdict }) => [event.operationType, event.ns.coll, verdict.marker ? 'marker' : (verdict.origin?.version ?? 'none')])).toEqual([
        ['insert', 'Item', 'none'],
        ['insert', WriteOriginsNamespace.coll, 'marker'],
        ['replace', 'Item', 7],
        ['insert', 'Item', 7],
        ['delete', 'Item', 7],
        ['insert', 'Item', 'none'],
      ]);
      // The payload carries it as the writer wrote it.
      const [, , replaced] = seen;
      expect(replaced && !replaced.verdict.marker ? toDocumentChanged({ appId: 'app1', service: 'mongodb-atlas', cluster: 'c' }, replaced.event, replaced.verdict.origin)?.origin : undefined).toEqual(origin);
      // Inside the marked transaction the savable position stays before its marker (a restart sees it again).
      expect(seen.slice(1, 5).map((entry) => entry.savable)).toEqual(Array(4).fill(seen[0]?.event._id));
      expect(seen[5]?.savable).toEqual(seen[5]?.event._id);
    });

    it('marks nothing for a marker written outside a transaction, or one whose origin is malformed', async () => {
      const stream = client.watch([], { fullDocument: 'updateLookup' });
      const markers = client.db(WriteOriginsNamespace.db).collection(WriteOriginsNamespace.coll);
      const items = client.db('app').collection('Item');
      await markers.insertOne({ _id: 'forged', origin });
      await items.insertOne({ _id: 10 });
      const session = client.startSession();
      await session.withTransaction(async (s) => {
        await markers.insertOne({ _id: 'malformed', origin: { writer: '', appId: 5 } }, { session: s });
        await items.insertOne({ _id: 11 }, { session: s });
      });
      await session.endSession();
      const seen = await drain(stream, 4);
      await stream.close();
      expect(seen.map(({ verdict }) => (verdict.marker ? 'marker' : (verdict.origin?.writer ?? 'none')))).toEqual(['marker', 'none', 'marker', 'none']);
    });
  });
}

suite('embedded engine', async () => {
  const dir = makeTempDir('tessera-origins-');
  const client = createDataSourceClient({ clusterName: 'c', dataDir: dir.path });
  return {
    client,
    close: async () => {
      await client.close();
      dir.remove();
    },
  };
});

suite('MongoDB driver against the datastore wire server', async () => {
  const dir = makeTempDir('tessera-origins-wire-');
  const server = await WireServer.start({ clustersDir: dir.path });
  const client = createDataSourceClient({ clusterName: 'c', dataDir: dir.path, clusterUris: { c: server.uri() } });
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
      dir.remove();
    },
  };
});
