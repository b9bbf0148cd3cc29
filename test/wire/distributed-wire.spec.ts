import { join } from 'node:path';
import { findNatsServer, makeTempDir, natsSkipReason } from '@tessera/testing';
import { MongoClient, MongoServerError } from 'mongodb';
import { AdminSession } from '../admin-api/admin-session';
import { tessera } from '../cli/tessera-cli';
import { adminPassword, Cluster, distributedApp, postJson } from '../distributed/cluster';

// Distributed mode with both wire listeners: the datastore service requires SCRAM-SHA-256 (every other
// process reaches it with the credentials in TESSERA_CLUSTER_URIS), and the gateway process serves the
// app's wire endpoint, whose user reaches the app's data in the datastore under the rules.
describe.skipIf(!findNatsServer())(`the wire endpoints in distributed mode${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  const password = 'distributed-datastore-secret';
  let cluster: Cluster;
  let clientAppId: string;
  let wirePort: string;
  const clients: MongoClient[] = [];
  const connect = async (uri: string) => {
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: 3000 });
    clients.push(client);
    await client.connect();
    return client;
  };

  beforeAll(async () => {
    cluster = await Cluster.start({ datastorePassword: password, serviceEnv: { 'graphql-gateway': { TESSERA_WIRE_PORT: '0', HOST: '127.0.0.1' } } });
    wirePort = /apps' MongoDB wire endpoint: mongodb:\/\/<user>:<password>@[^:]+:(\d+)\//.exec(cluster.one('graphql-gateway').output())?.[1] ?? '';
    const admin = await AdminSession.login(cluster.one('admin-api'), 'admin', adminPassword);
    const created = await admin.createApp('wiredist');
    clientAppId = created.client_app_id;
    const files = distributedApp('wiredist');
    files.set('auth_providers/local-userpass.json', JSON.stringify({ name: 'local-userpass', type: 'local-userpass', disabled: false, config: { autoConfirm: true, resetPasswordUrl: 'http://localhost/reset' } }));
    files.set('services/mongodb-atlas/config.json', JSON.stringify({ name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'DistributedCluster', wireProtocolEnabled: true } }));
    expect((await admin.push(created._id, files)).status).toBe(204);
  }, 180_000);

  afterAll(async () => {
    for (const client of clients) await client.close(true);
    await cluster?.stop();
  });

  it('serves an app user over the wire endpoint, with the data in the password-protected datastore', async () => {
    expect(wirePort).toMatch(/^\d+$/);
    const gateway = cluster.one('graphql-gateway').url;
    expect((await postJson(`${gateway}/api/client/v2.0/app/${clientAppId}/auth/providers/local-userpass/register`, { email: 'ada@example.com', password: 'correct-horse' })).status).toBe(201);
    const login = await postJson<{ user_id: string }>(`${gateway}/api/client/v2.0/app/${clientAppId}/auth/providers/local-userpass/login`, { username: 'ada@example.com', password: 'correct-horse' });
    const app = await connect(`mongodb://ada%40example.com:correct-horse@127.0.0.1:${wirePort}/?authMechanism=PLAIN&authSource=%24external&appName=${clientAppId}:mongodb-atlas:local-userpass`);
    const notes = app.db('shop').collection('notes');
    await notes.insertOne({ owner_id: login.body.user_id, text: 'over the wire' });
    expect(await notes.find({}, { projection: { _id: 0, text: 1 } }).toArray()).toEqual([{ text: 'over the wire' }]);
    // Another owner's note is refused by the rules.
    const refused = await notes.insertOne({ owner_id: 'someone-else', text: 'forged' }).catch((error: unknown) => error);
    expect((refused as MongoServerError).code).toBe(13);
    // The note is in the datastore service, read with its credentials.
    const datastore = await connect(`${cluster.datastoreUri}&appName=DistributedCluster`);
    expect(await datastore.db('shop').collection('notes').find({}, { projection: { _id: 0, text: 1 } }).toArray()).toEqual([{ text: 'over the wire' }]);
  });

  it("moves the app's data with tessera data export and import through the datastore service", async () => {
    const work = makeTempDir('tessera-distributed-data-');
    try {
      const env = { TESSERA_CONFIG_DIR: join(work.path, 'config') };
      expect((await tessera(['login', '--url', cluster.one('admin-api').url, '--username', 'admin', '--password', adminPassword], env)).code).toBe(0);
      const datastore = await connect(`${cluster.datastoreUri}&appName=DistributedCluster`);
      await datastore.db('shop').collection('orders').insertMany(Array.from({ length: 50 }, (_, i) => ({ n: i })));
      await datastore.db('shop').collection('orders').createIndex({ n: -1 }, { unique: true });
      const out = join(work.path, 'dump');
      // The app's collections (its rules name shop.notes), then one more by cluster name, into one dump.
      const exported = await tessera(['data', 'export', '--remote', clientAppId, '--uri', cluster.datastoreUri, '--out', out, '--gzip'], env);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout).toContain('exported 1 collection(s), 1 document(s) of cluster "DistributedCluster"');
      const orders = await tessera(['data', 'export', '--cluster', 'DistributedCluster', '--db', 'shop', '--collection', 'orders', '--uri', cluster.datastoreUri, '--out', out, '--gzip'], env);
      expect(orders.code, orders.stderr).toBe(0);
      const imported = await tessera(['data', 'import', '--cluster', 'DistributedCopy', '--uri', cluster.datastoreUri, '--dir', out], env);
      expect(imported.code, imported.stderr).toBe(0);
      const copy = await connect(`${cluster.datastoreUri}&appName=DistributedCopy`);
      for (const coll of ['notes', 'orders']) {
        const source = await datastore.db('shop').collection(coll).find({}, { sort: { _id: 1 } }).toArray();
        expect(source.length).toBeGreaterThan(0);
        expect(await copy.db('shop').collection(coll).find({}, { sort: { _id: 1 } }).toArray()).toEqual(source);
        expect(await copy.db('shop').collection(coll).listIndexes().toArray()).toEqual(await datastore.db('shop').collection(coll).listIndexes().toArray());
      }
    } finally {
      work.remove();
    }
  }, 120_000);

  it('refuses the datastore to a client without its credentials', async () => {
    const anonymous = await connect(`${cluster.datastoreUri.replace(/tessera:[^@]*@/, '')}&appName=tessera-platform`);
    const refusal = await anonymous.db('platform').collection('apps').findOne().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(MongoServerError);
    expect((refusal as MongoServerError).code).toBe(13);
  });
});
