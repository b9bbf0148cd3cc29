import { AppWireService } from '@tessera/server';
import { MongoClient, MongoServerError } from 'mongodb';
import { clientLogin } from '../data-api/data-api-support';
import { startTestHost, type TestHost } from '../support/test-host';
import { withWireUsers } from './wire-app';

// `$documents` through the apps' wire endpoint, as an app user with the official driver: it never opens a
// ruled collection ($lookup and $unionWith behind it stay system-only, and a database-level aggregation is
// refused), and a `$range` that would build a huge array is refused instead of holding the process.
describe('$documents and $range on the app wire endpoint, as an app user', () => {
  let host: TestHost;
  let client: MongoClient;
  let userId: string;

  beforeAll(async () => {
    host = await startTestHost({ services: ['graphql-gateway'], settings: { TESSERA_WIRE_PORT: '0' } });
    const port = host.nest.get(AppWireService).port ?? 0;
    const app = await host.createApp('wiredocs', withWireUsers);
    const [email, password] = ['ada@example.com', 'ada-wire-password'];
    const registered = await fetch(`${host.url}/api/client/v2.0/app/${app.clientAppId}/auth/providers/local-userpass/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    expect(registered.status).toBe(201);
    userId = (await clientLogin(host, app.clientAppId, 'local-userpass', { username: email, password })).userId;
    client = new MongoClient(`mongodb://${encodeURIComponent(email)}:${encodeURIComponent(password)}@127.0.0.1:${port}/?authMechanism=PLAIN&authSource=%24external&appName=${encodeURIComponent(`${app.clientAppId}:mongodb-atlas:local-userpass`)}&serverSelectionTimeoutMS=3000&retryReads=false`);
    await client.connect();
    const items = client.db('shop').collection('items');
    await items.insertOne({ owner: userId, name: 'mine' });
  }, 60_000);

  afterAll(async () => {
    await client?.close(true);
    await host?.close();
  });

  it('never reaches a ruled collection from $documents', async () => {
    const shop = client.db('shop');
    const items = shop.collection('items');
    expect(await items.aggregate([{ $documents: [{ a: 1 }] }, { $project: { _id: 0, a: 1 } }]).toArray()).toEqual([{ a: 1 }]);
    for (const stage of [{ $unionWith: 'catalog' }, { $lookup: { from: 'items', pipeline: [], as: 'all' } }, { $facet: { x: [{ $unionWith: { coll: 'items' } }] } }]) {
      await expect(items.aggregate([{ $documents: [{ a: 1 }] }, stage]).toArray()).rejects.toMatchObject({ code: 13 });
    }
    await expect(shop.aggregate([{ $documents: [{ a: 1 }] }, { $unionWith: 'items' }]).toArray()).rejects.toBeInstanceOf(MongoServerError);
    // The user's own document is still what the collection shows.
    expect((await items.find({}, { projection: { _id: 0 } }).toArray())).toEqual([{ owner: userId, name: 'mine' }]);
  });

  it('refuses a $range beyond the memory limit, and answers the next command', async () => {
    const items = client.db('shop').collection('items');
    await expect(items.aggregate([{ $documents: [{ a: 1 }] }, { $project: { r: { $range: [0, 1_000_000_000] } } }]).toArray()).rejects.toMatchObject({ code: 146, message: expect.stringMatching(/^\$range would use too much memory/) as unknown });
    expect(await items.countDocuments()).toBe(1);
  });
});
