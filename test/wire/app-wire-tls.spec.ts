import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { AppWireService } from '@tessera/server';
import { makeTempDir } from '@tessera/testing';
import { MongoClient } from 'mongodb';
import { serverApiKey } from '../data-api/data-api-support';
import { startTestHost, type TestHost } from '../support/test-host';

// The app wire endpoint with TESSERA_WIRE_TLS_CERT/KEY: the connection string's `tls=true` (App Services'
// `ssl=true`) with the certificate trusted works; a client speaking plain TCP gets nowhere.
describe('the app wire endpoint over TLS', () => {
  const dir = makeTempDir('tessera-wire-tls-');
  const cert = join(dir.path, 'cert.pem');
  const key = join(dir.path, 'key.pem');
  let host: TestHost;
  let port: number;
  let app: { clientAppId: string };
  const clients: MongoClient[] = [];

  beforeAll(async () => {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
    host = await startTestHost({ services: ['graphql-gateway'], settings: { TESSERA_WIRE_PORT: '0', TESSERA_WIRE_TLS_CERT: cert, TESSERA_WIRE_TLS_KEY: key } });
    port = host.nest.get(AppWireService).port ?? 0;
    app = await host.createApp('tlswire', (config) => {
      config.authProviders.push({ name: 'api-key', type: 'api-key' });
      config.services.push({
        config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0', wireProtocolEnabled: true } },
        defaultRule: { roles: [{ name: 'all', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] },
        collectionRules: [{ database: 'shop', collection: 'items', roles: [{ name: 'all', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] }],
        rules: [],
        webhooks: [],
      });
    });
  });

  afterAll(async () => {
    for (const client of clients) await client.close(true);
    await host?.close();
    dir.remove();
  });

  const connect = async (tls: string) => {
    const server = await serverApiKey(host, app.clientAppId, `key-${clients.length}`);
    const client = new MongoClient(`mongodb://key:${encodeURIComponent(server.key)}@127.0.0.1:${port}/?authMechanism=PLAIN&authSource=%24external&${tls}&appName=${encodeURIComponent(`${app.clientAppId}:mongodb-atlas:api-key`)}&serverSelectionTimeoutMS=2000`);
    clients.push(client);
    await client.connect();
    return client;
  };

  it('serves a driver connecting with tls=true and the certificate trusted', async () => {
    const client = await connect(`tls=true&tlsCAFile=${encodeURIComponent(cert)}`);
    await client.db('shop').collection('items').insertOne({ name: 'secure' });
    expect(await client.db('shop').collection('items').find({}, { projection: { _id: 0 } }).toArray()).toEqual([{ name: 'secure' }]);
  });

  it('does not serve a client speaking plain TCP', async () => {
    await expect(connect('tls=false')).rejects.toThrow();
  });
});
