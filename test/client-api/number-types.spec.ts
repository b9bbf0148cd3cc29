import { AppWireService } from '@tessera/server';
import { BSON, Double, Int32, Long } from 'bson';
import { MongoClient } from 'mongodb';
import * as Realm from 'realm-web';
import { clientLogin } from '../data-api/data-api-support';
import { startTestHost, type TestHost } from '../support/test-host';
import { withWireUsers } from '../wire/wire-app';

/** Each value's BSON type as a MongoDB client reads it back (Int32, Double, Long ...), by field. */
function bsonTypes(doc: Record<string, unknown>): unknown {
  const name = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(name);
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, name(x)]));
    return v !== null && typeof v === 'object' ? (v as { _bsontype?: string })._bsontype : typeof v;
  };
  return name(BSON.deserialize(BSON.serialize(doc), { promoteValues: false, promoteLongs: false }));
}

const items = "context.services.get('mongodb-atlas').db('shop').collection('items')";

// A number keeps its BSON type (a double holding 1 stays a double, a long a long) whichever way it is
// written, as MongoDB keeps it: from a function, through remote data access (realm-web) and through the
// app's wire endpoint with the official driver, and read back by each of them.
describe('BSON number types through functions, realm-web and the wire endpoint', () => {
  let host: TestHost;
  let driver: MongoClient;
  let user: Realm.User;
  let userId = '';

  beforeAll(async () => {
    host = await startTestHost({ services: ['graphql-gateway', 'function-runtime'], settings: { TESSERA_WIRE_PORT: '0' } });
    const port = host.nest.get(AppWireService).port ?? 0;
    const app = await host.createApp('numbers', (config) => {
      withWireUsers(config);
      config.functions.push(
        {
          config: { name: 'store', private: false },
          source: `exports = async (id) => {
            await ${items}.insertOne({ _id: id, owner: context.user.id, d: new BSON.Double(1), l: BSON.Long.fromNumber(5), i: 3, f: 2.5 });
            await ${items}.updateOne({ _id: id }, { $inc: { i: new BSON.Double(1), l: 1 }, $set: { s: new BSON.Double(-4) } });
            const doc = await ${items}.findOne({ _id: id });
            return { types: [typeof doc.d, typeof doc.l, typeof doc.i], sum: doc.d + doc.i };
          };`,
        },
        {
          config: { name: 'bulk', private: false, run_as_system: true },
          source: `exports = async (id, owner) => {
            await ${items}.bulkWrite([
              { insertOne: { document: { _id: id, owner, d: new BSON.Double(2) } } },
              { updateOne: { filter: { _id: id }, update: { $set: { l: BSON.Long.fromNumber(3) } } } },
            ]);
          };`,
        },
      );
    });
    const [email, password] = ['numbers@example.com', 'numbers-password'];
    const registered = await fetch(`${host.url}/api/client/v2.0/app/${app.clientAppId}/auth/providers/local-userpass/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    expect(registered.status).toBe(201);
    userId = (await clientLogin(host, app.clientAppId, 'local-userpass', { username: email, password })).userId;
    user = await new Realm.App({ id: app.clientAppId, baseUrl: host.url }).logIn(Realm.Credentials.emailPassword(email, password));
    driver = new MongoClient(`mongodb://${encodeURIComponent(email)}:${encodeURIComponent(password)}@127.0.0.1:${port}/?authMechanism=PLAIN&authSource=%24external&appName=${encodeURIComponent(`${app.clientAppId}:mongodb-atlas:local-userpass`)}&serverSelectionTimeoutMS=3000`);
    await driver.connect();
  }, 60_000);

  afterAll(async () => {
    await driver?.close(true);
    await host?.close();
  });

  const readBack = async (id: string) => (await driver.db('shop').collection<{ _id: string }>('items').findOne({ _id: id }, { promoteValues: false, promoteLongs: false })) as Record<string, unknown>;

  it('keeps the types a function writes, and the function computes with plain numbers', async () => {
    // In the function, numbers read back are JS numbers, as App Services gave them.
    expect(await user.callFunction('store', 'from-function')).toEqual({ types: ['number', 'number', 'number'], sum: 5 });
    const { _id, owner, ...stored } = await readBack('from-function');
    expect(bsonTypes(stored)).toEqual({ d: 'Double', l: 'Long', i: 'Double', f: 'Double', s: 'Double' });
    await user.callFunction('bulk', 'from-bulk-write', userId);
    const bulk = await readBack('from-bulk-write');
    expect(bsonTypes({ d: bulk['d'], l: bulk['l'] })).toEqual({ d: 'Double', l: 'Long' });
    expect([_id, owner]).toEqual(['from-function', userId]);
  });

  it('keeps the types realm-web writes through remote data access', async () => {
    const collection = user.mongoClient('mongodb-atlas').db('shop').collection('items');
    await collection.insertOne({ _id: 'from-realm-web', owner: userId, d: new Double(1), l: Long.fromNumber(7), i: new Int32(2) } as never);
    await collection.updateOne({ _id: 'from-realm-web' }, { $mul: { i: Long.fromNumber(3) }, $push: { list: { $each: [new Double(0)], $slice: -3 } } });
    const { _id, owner, ...stored } = await readBack('from-realm-web');
    expect(bsonTypes(stored)).toEqual({ d: 'Double', l: 'Long', i: 'Long', list: ['Double'] });
    expect([_id, owner, Number(stored['i'])]).toEqual(['from-realm-web', userId, 6]);
  });

  it('keeps the types the official driver writes through the wire endpoint, and finds them by $type', async () => {
    const collection = driver.db('shop').collection<{ _id: string; [key: string]: unknown }>('items');
    await collection.insertOne({ _id: 'from-driver', owner: userId, d: new Double(1), l: Long.fromNumber(9), i: 4 });
    await collection.updateOne({ _id: 'from-driver' }, { $inc: { i: 2147483647 } } as never);
    const { _id, owner, ...stored } = await readBack('from-driver');
    expect(bsonTypes(stored)).toEqual({ d: 'Double', l: 'Long', i: 'Long' });
    expect([_id, owner, Number(stored['i'])]).toEqual(['from-driver', userId, 2147483651]);
    expect(await collection.countDocuments({ _id: 'from-driver', d: { $type: 'double' }, l: { $type: 'long' }, i: { $type: 'long' } })).toBe(1);
    expect(await collection.countDocuments({ _id: 'from-driver', d: { $type: 'int' } })).toBe(0);
  });
});
