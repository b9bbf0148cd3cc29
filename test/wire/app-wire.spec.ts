import { type AppConfig, emptyApp } from '@tessera/app-config';
import { eventually } from '@tessera/testing';
import { AppWireService } from '@tessera/server';
import { SignJWT } from 'jose';
import { type Document, MongoBulkWriteError, MongoClient, MongoServerError } from 'mongodb';
import { clientLogin, ownedItemsAndCatalog, remoteDataAccess, serverApiKey } from '../data-api/data-api-support';
import { startTestHost, type TestHost } from '../support/test-host';

// The apps' MongoDB wire endpoint with the official driver as the client: App Services' connection string
// (PLAIN, $external, appName naming app, service and provider), then every command as that user under the
// app's rules, exactly as remote data access applies them; refusals as MongoDB answers them.
describe('the app wire endpoint', () => {
  let host: TestHost;
  let app: { appId: string; clientAppId: string };
  let closed: { appId: string; clientAppId: string };
  let port: number;
  const jwtSecret = 'wire-jwt-secret-0123456789abcdef-0123';
  const clients: MongoClient[] = [];

  const linkCluster = (wireProtocolEnabled: boolean) => (config: AppConfig) => {
    config.authProviders.push(
      { name: 'api-key', type: 'api-key' },
      { name: 'local-userpass', type: 'local-userpass', config: { autoConfirm: true, resetPasswordUrl: 'http://localhost/reset' } },
      { name: 'custom-token', type: 'custom-token', config: { signingAlgorithm: 'HS256', useJWKURI: false }, secret_config: { signingKeys: ['jwtKey'] } },
    );
    config.services.push({
      config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0', wireProtocolEnabled } },
      defaultRule: { roles: [] },
      collectionRules: ownedItemsAndCatalog(),
      rules: [],
      webhooks: [],
    });
  };

  /** App Services' connection string for a user of `clientAppId`. */
  const uri = (clientAppId: string, provider: string, user: string, password: string, service = 'mongodb-atlas') =>
    `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/?authMechanism=PLAIN&authSource=%24external&appName=${encodeURIComponent(`${clientAppId}:${service}:${provider}`)}&serverSelectionTimeoutMS=3000`;
  const connect = async (connectionString: string) => {
    const client = new MongoClient(connectionString);
    clients.push(client);
    await client.connect();
    return client;
  };
  const refusal = async (promise: Promise<unknown>): Promise<MongoServerError> => {
    const error = await promise.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(MongoServerError);
    return error as MongoServerError;
  };
  const register = async (email: string, password: string) => {
    const response = await fetch(`${host.url}/api/client/v2.0/app/${app.clientAppId}/auth/providers/local-userpass/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    expect(response.status).toBe(201);
    return clientLogin(host, app.clientAppId, 'local-userpass', { username: email, password });
  };

  beforeAll(async () => {
    host = await startTestHost({ services: ['graphql-gateway'], settings: { TESSERA_WIRE_PORT: '0' } });
    port = host.nest.get(AppWireService).port ?? 0;
    app = await host.createApp('wireapp', linkCluster(true));
    await host.secrets.create(app.appId, 'jwtKey', jwtSecret);
    closed = await host.createApp('nowire', linkCluster(false));
  });

  afterAll(async () => {
    for (const client of clients) await client.close(true);
    await host?.close();
  });

  it('serves an email/password user the documents and writes its rules allow, as remote data access does', async () => {
    const ada = await register('ada@example.com', 'correct-horse');
    const grace = await register('grace@example.com', 'cobol-1959');
    const asAda = await connect(uri(app.clientAppId, 'local-userpass', 'ada@example.com', 'correct-horse'));
    const asGrace = await connect(uri(app.clientAppId, 'local-userpass', 'grace@example.com', 'cobol-1959'));
    const adaItems = asAda.db('shop').collection('items');
    const graceItems = asGrace.db('shop').collection('items');

    await adaItems.insertMany([{ owner: ada.userId, name: 'apple', qty: 5 }, { owner: ada.userId, name: 'pear', qty: 2 }]);
    await graceItems.insertOne({ owner: grace.userId, name: 'plum', qty: 9 });

    expect(await adaItems.find({}, { projection: { _id: 0, name: 1 }, sort: { name: 1 } }).toArray()).toEqual([{ name: 'apple' }, { name: 'pear' }]);
    expect(await graceItems.find({}, { projection: { _id: 0, name: 1 } }).toArray()).toEqual([{ name: 'plum' }]);
    expect(await adaItems.countDocuments()).toBe(2);
    expect(await adaItems.distinct('name')).toEqual(['apple', 'pear']);
    const viaClientApi = await remoteDataAccess(host, app.clientAppId, ada.accessToken, 'find', { database: 'shop', collection: 'items', query: {}, project: { _id: 0, name: 1 }, sort: { name: 1 } });
    expect(viaClientApi.body).toEqual([{ name: 'apple' }, { name: 'pear' }]);

    // Grace's document is not there for Ada: not matched, not updated, not deleted.
    expect((await adaItems.updateOne({ name: 'plum' }, { $set: { qty: 0 } })).matchedCount).toBe(0);
    expect((await adaItems.deleteMany({ name: 'plum' })).deletedCount).toBe(0);
    expect(await graceItems.findOne({ name: 'plum' }, { projection: { _id: 0, qty: 1 } })).toEqual({ qty: 9 });

    expect((await adaItems.updateOne({ name: 'apple' }, { $inc: { qty: 1 } })).modifiedCount).toBe(1);
    const updated = await adaItems.findOneAndUpdate({ name: 'pear' }, { $set: { qty: 3 } }, { returnDocument: 'after', projection: { _id: 0, name: 1, qty: 1 } });
    expect(updated).toEqual({ name: 'pear', qty: 3 });
    expect((await adaItems.replaceOne({ name: 'pear' }, { owner: ada.userId, name: 'pear', qty: 4 })).modifiedCount).toBe(1);
    const total = await adaItems.aggregate<Document>([{ $group: { _id: null, total: { $sum: '$qty' } } }]).toArray();
    expect(total).toEqual([{ _id: null, total: 6 + 4 }]);
    expect((await adaItems.deleteOne({ name: 'pear' })).deletedCount).toBe(1);
    expect(await adaItems.countDocuments()).toBe(1);
  });

  it('refuses a write the rules refuse, with Unauthorized (13), and writes nothing', async () => {
    const login = await clientLogin(host, app.clientAppId, 'local-userpass', { username: 'ada@example.com', password: 'correct-horse' });
    const asAda = await connect(uri(app.clientAppId, 'local-userpass', 'ada@example.com', 'correct-horse'));
    const catalog = asAda.db('shop').collection('catalog');
    const readOnly = await catalog.insertOne({ name: 'forbidden' }).catch((error: unknown) => error);
    expect(readOnly).toBeInstanceOf(MongoServerError);
    expect((readOnly as MongoServerError).code).toBe(13);
    // Another owner's document: refused by the insert rule; ordered writes stop at the refusal.
    const foreign = await asAda
      .db('shop')
      .collection('items')
      .insertMany([{ owner: login.userId, name: 'mine' }, { owner: 'someone-else', name: 'theirs' }, { owner: login.userId, name: 'after' }])
      .catch((error: unknown) => error);
    expect(foreign).toBeInstanceOf(MongoBulkWriteError);
    expect((foreign as MongoBulkWriteError).writeErrors).toMatchObject([{ index: 1, code: 13 }]);
    expect(await asAda.db('shop').collection('items').find({ name: { $in: ['mine', 'theirs', 'after'] } }, { projection: { _id: 0, name: 1 } }).toArray()).toEqual([{ name: 'mine' }]);
    expect(await catalog.countDocuments({ name: 'forbidden' })).toBe(0);
  });

  it('authenticates API key and custom JWT users, and hands results out in batches through getMore', async () => {
    const server = await serverApiKey(host, app.clientAppId, 'wire');
    const asKey = await connect(uri(app.clientAppId, 'api-key', 'ignored', server.key));
    const items = asKey.db('shop').collection('items');
    await items.insertMany(Array.from({ length: 25 }, (_, i) => ({ owner: server.userId, name: `k${i}`, i })));
    const batched = await items.find({}, { batchSize: 4, sort: { i: 1 }, projection: { _id: 0, i: 1 } }).toArray();
    expect(batched.map((doc) => doc['i'])).toEqual(Array.from({ length: 25 }, (_, i) => i));

    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('wire-person').setExpirationTime('5m').sign(new TextEncoder().encode(jwtSecret));
    const asJwt = await connect(uri(app.clientAppId, 'custom-token', 'wire-person', jwt));
    // A fresh user: none of the API key user's documents are its own.
    expect(await asJwt.db('shop').collection('items').countDocuments()).toBe(0);
    const status = await asJwt.db('admin').command({ connectionStatus: 1 });
    expect(status['authInfo']).toMatchObject({ authenticatedUsers: [{ user: 'wire-person', db: '$external' }] });
  });

  it('refuses a wrong password, an unknown app, an app without wireProtocolEnabled, an unknown provider and a forged JWT', async () => {
    const cases = [
      uri(app.clientAppId, 'local-userpass', 'ada@example.com', 'wrong-horse'),
      uri(app.clientAppId, 'local-userpass', 'nobody@example.com', 'correct-horse'),
      uri('unknown-abcde', 'local-userpass', 'ada@example.com', 'correct-horse'),
      uri(closed.clientAppId, 'api-key', 'x', 'whatever-key'),
      uri(app.clientAppId, 'anon-user', 'x', 'y'),
      uri(app.clientAppId, 'local-userpass', 'ada@example.com', 'correct-horse', 'not-a-service'),
      uri(app.clientAppId, 'custom-token', 'x', await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('forger').setExpirationTime('5m').sign(new TextEncoder().encode('another-secret-0123456789abcdef-xyz'))),
    ];
    for (const connectionString of cases) expect((await refusal(connect(connectionString))).code).toBe(18);
    // The app without the wire protocol refuses even its own valid API key.
    const key = await serverApiKey(host, closed.clientAppId, 'closed');
    expect((await refusal(connect(uri(closed.clientAppId, 'api-key', 'x', key.key)))).code).toBe(18);
  });

  it('refuses every command but the handshake to a client that did not authenticate', async () => {
    const anonymous = await connect(`mongodb://127.0.0.1:${port}/?appName=${encodeURIComponent(`${app.clientAppId}:mongodb-atlas:local-userpass`)}&serverSelectionTimeoutMS=3000`);
    expect((await anonymous.db('admin').command({ ping: 1 }))['ok']).toBe(1);
    expect((await anonymous.db('admin').command({ buildInfo: 1 }))['version']).toBe('7.0.0');
    for (const command of [{ find: 'items' }, { listDatabases: 1 }, { insert: 'items', documents: [{ a: 1 }] }, { listCollections: 1 }, { dropDatabase: 1 }]) {
      expect((await refusal(anonymous.db('shop').command(command))).code).toBe(13);
    }
  });

  it('refuses admin and dangerous commands and restricted operators, and lists only the namespaces the rules name', async () => {
    const asAda = await connect(uri(app.clientAppId, 'local-userpass', 'ada@example.com', 'correct-horse'));
    const shop = asAda.db('shop');
    for (const command of [{ dropDatabase: 1 }, { createUser: 'evil', pwd: 'x', roles: [] }, { eval: 'db.items.drop()' }, { drop: 'items' }, { createIndexes: 'items', indexes: [{ key: { a: 1 }, name: 'a' }] }, { shutdown: 1 }, { renameCollection: 'shop.items', to: 'shop.x' }]) {
      expect((await refusal(shop.command(command))).code).toBe(13);
    }
    expect((await refusal(asAda.db('admin').command({ listUsers: 1 }))).code).toBe(13);
    expect((await refusal(shop.collection('items').find({ $where: 'true' }).toArray())).code).toBe(13);
    expect((await refusal(shop.collection('items').aggregate([{ $out: 'stolen' }]).toArray())).code).toBe(13);
    expect((await refusal(shop.collection('items').watch().tryNext())).code).toBe(13);
    expect((await asAda.db('admin').admin().listDatabases()).databases.map((db) => db.name)).toEqual(['shop']);
    expect((await shop.listCollections().toArray()).map((info) => info.name)).toEqual(['catalog', 'items']);
    expect(await asAda.db('other').listCollections().toArray()).toEqual([]);
  });

  it('keeps a connection to 100 open cursors, and a cursor to its own connection', async () => {
    const server = await serverApiKey(host, app.clientAppId, 'cursors');
    const client = await connect(uri(app.clientAppId, 'api-key', 'k', server.key));
    const shop = client.db('shop');
    await shop.collection('items').insertMany([{ owner: server.userId, n: 1 }, { owner: server.userId, n: 2 }]);
    const opened = await shop.command({ find: 'items', batchSize: 1 });
    const id = (opened['cursor'] as { id: unknown }).id;
    // Another user's connection cannot continue it.
    const other = await connect(uri(app.clientAppId, 'local-userpass', 'ada@example.com', 'correct-horse'));
    expect((await refusal(other.db('shop').command({ getMore: id, collection: 'items' }))).code).toBe(43);
    for (let i = 1; i < 100; i += 1) await shop.command({ find: 'items', batchSize: 1 });
    expect((await refusal(shop.command({ find: 'items', batchSize: 1 }))).code).toBe(2);
    await shop.command({ killCursors: 'items', cursors: [id] });
    expect((await shop.command({ find: 'items', batchSize: 1 }))['ok']).toBe(1);
  });

  it('applies a redeploy to open connections: new rules at once, and no more commands once the wire protocol is off', async () => {
    const later = await host.createApp('wirelater', linkCluster(true));
    const server = await serverApiKey(host, later.clientAppId, 'later');
    const client = await connect(uri(later.clientAppId, 'api-key', 'k', server.key));
    const items = client.db('shop').collection('items');
    await items.insertOne({ owner: server.userId, name: 'before' });
    // Rules now make items read-only for everyone.
    const readOnly = emptyApp('wirelater');
    linkCluster(true)(readOnly);
    readOnly.services[0].collectionRules[0].roles = [{ name: 'reader', apply_when: {}, read: true, write: false, insert: false, delete: false, search: true }];
    await host.redeploy(later.appId, readOnly);
    await eventually(async () => expect((await refusal(items.insertOne({ owner: server.userId, name: 'after' }))).code).toBe(13));
    expect(await items.countDocuments({ name: { $in: ['before', 'after'] } })).toBe(1);
    const off = emptyApp('wirelater');
    linkCluster(false)(off);
    await host.redeploy(later.appId, off);
    await eventually(async () => expect((await refusal(items.countDocuments())).code).toBe(13));
  });
});
