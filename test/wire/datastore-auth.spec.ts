import { DatastoreWireService } from '@tessera/server';
import { MongoClient, MongoServerError } from 'mongodb';
import { remoteDataAccess } from '../data-api/data-api-support';
import { startTestHost, type TestHost } from '../support/test-host';

// The datastore service with TESSERA_DATASTORE_PASSWORD: an anonymous network client no longer reads the
// platform database, and a Tessera process whose TESSERA_CLUSTER_URIS carries the credentials works as before.
describe('the datastore service with a password', () => {
  const password = 'datastore-secret-0123456789';
  let datastore: TestHost;
  let gateway: TestHost;
  let port: number;
  const clients: MongoClient[] = [];
  const connect = async (credentials: string, appName: string) => {
    const client = new MongoClient(`mongodb://${credentials}127.0.0.1:${port}/?directConnection=true&appName=${appName}&serverSelectionTimeoutMS=3000`);
    clients.push(client);
    await client.connect();
    return client;
  };

  beforeAll(async () => {
    datastore = await startTestHost({ services: ['datastore'], settings: { TESSERA_DATASTORE_PORT: '0', TESSERA_DATASTORE_PASSWORD: password } });
    port = datastore.nest.get(DatastoreWireService).port ?? 0;
    gateway = await startTestHost({ services: ['graphql-gateway'], settings: { TESSERA_CLUSTER_URIS: `*=mongodb://tessera:${password}@127.0.0.1:${port}/?directConnection=true` } });
  });

  afterAll(async () => {
    for (const client of clients) await client.close(true);
    await gateway?.close();
    await datastore?.close();
  });

  it('serves the platform and app data of a process that connects with the credentials', async () => {
    const app = await gateway.createApp('behindauth', (config) => {
      config.authProviders.push({ name: 'anon-user', type: 'anon-user' });
      config.services.push({
        config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'AuthCluster' } },
        defaultRule: { roles: [{ name: 'all', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] },
        collectionRules: [],
        rules: [],
        webhooks: [],
      });
    });
    const login = await gateway.anonymousLogin(app.clientAppId);
    const inserted = await remoteDataAccess(gateway, app.clientAppId, login.accessToken, 'insertOne', { database: 'shop', collection: 'items', document: { name: 'kept' } });
    expect(inserted.status).toBe(200);
    // The document is in the datastore's cluster, for a client with the credentials.
    const authenticated = await connect(`tessera:${password}@`, 'AuthCluster');
    expect(await authenticated.db('shop').collection('items').find({}, { projection: { _id: 0 } }).toArray()).toEqual([{ name: 'kept' }]);
  });

  it('refuses the platform database to a client without credentials or with a wrong password', async () => {
    const anonymous = await connect('', 'tessera-platform');
    for (const command of [{ listDatabases: 1 }, { find: 'apps' }, { listCollections: 1 }]) {
      const refusal = await anonymous.db('platform').command(command).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(MongoServerError);
      expect((refusal as MongoServerError).code).toBe(13);
    }
    const wrong = await connect('tessera:not-the-password@', 'tessera-platform').catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(MongoServerError);
    expect((wrong as MongoServerError).code).toBe(18);
    // With the credentials the same client reads it (the gateway registered its app there).
    const authenticated = await connect(`tessera:${password}@`, 'tessera-platform');
    expect(await authenticated.db('platform').collection('apps').countDocuments()).toBeGreaterThan(0);
  });
});
