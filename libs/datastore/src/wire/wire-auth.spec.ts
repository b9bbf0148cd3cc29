import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { MongoClient, MongoServerError } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WireServer } from './wire-server';

describe('the datastore wire server with credentials', () => {
  let server: WireServer;
  const dir = makeTempDir('wire-auth-');
  const clients: MongoClient[] = [];
  const connect = async (credentials: string, options: Record<string, string> = {}) => {
    const query = new URLSearchParams({ directConnection: 'true', serverSelectionTimeoutMS: '3000', ...options });
    const client = new MongoClient(`mongodb://${credentials}127.0.0.1:${server.port}/?${query.toString()}`);
    clients.push(client);
    await client.connect();
    return client;
  };

  beforeAll(async () => {
    server = await WireServer.start({ clustersDir: dir.path, credentials: { user: 'tessera', password: 'pa,ss=word' } });
  });
  afterAll(async () => {
    for (const client of clients) await client.close(true);
    await server.close();
    dir.remove();
  });

  it('serves a client that authenticates with SCRAM-SHA-256 (the driver negotiates it)', async () => {
    const client = await connect(`tessera:${encodeURIComponent('pa,ss=word')}@`, { appName: 'ClusterA' });
    const collection = client.db('app').collection('items');
    await collection.insertOne({ _id: 1 as never, name: 'one' });
    expect(await collection.find().toArray()).toEqual([{ _id: 1, name: 'one' }]);
    const status = await client.db('admin').command({ connectionStatus: 1 });
    expect(status.ok).toBe(1);
    // The cluster the handshake named, once authenticated.
    expect(existsSync(join(dir.path, 'ClusterA'))).toBe(true);
  });

  it('opens no cluster for the handshakes of clients that do not authenticate', async () => {
    for (const name of ['Probe1', 'Probe2', 'Probe3']) {
      const client = await connect('', { appName: name });
      expect((await client.db('admin').command({ ping: 1 })).ok).toBe(1);
      expect(existsSync(join(dir.path, name))).toBe(false);
    }
  });

  it('serves a client that names the mechanism and the admin database', async () => {
    const client = await connect(`tessera:${encodeURIComponent('pa,ss=word')}@`, { appName: 'ClusterA', authMechanism: 'SCRAM-SHA-256', authSource: 'admin' });
    expect(await client.db('app').collection('items').countDocuments()).toBe(1);
  });

  it('refuses every command but the handshake from a client that did not authenticate, with Unauthorized (13)', async () => {
    const client = await connect('', { appName: 'ClusterA' });
    expect((await client.db('admin').command({ ping: 1 })).ok).toBe(1);
    expect((await client.db('admin').command({ buildInfo: 1 })).ok).toBe(1);
    for (const command of [{ find: 'items' }, { listDatabases: 1 }, { insert: 'items', documents: [{ _id: 2 }] }, { dropDatabase: 1 }, { listCollections: 1 }]) {
      const refusal = await client.db('app').command(command).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(MongoServerError);
      expect((refusal as MongoServerError).code).toBe(13);
    }
  });

  it('refuses a wrong password, an unknown user and another mechanism with AuthenticationFailed, and nothing was written', async () => {
    for (const credentials of ['tessera:wrong@', 'someone:pa%2Css%3Dword@']) {
      const refusal = await connect(credentials, { appName: 'ClusterA' }).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(MongoServerError);
      expect((refusal as MongoServerError).code).toBe(18);
    }
    const sha1 = await connect(`tessera:${encodeURIComponent('pa,ss=word')}@`, { authMechanism: 'SCRAM-SHA-1' }).catch((error: unknown) => error);
    expect(sha1).toBeInstanceOf(MongoServerError);
    const plain = await connect('tessera:pa%2Css%3Dword@', { authMechanism: 'PLAIN' }).catch((error: unknown) => error);
    expect(plain).toBeInstanceOf(MongoServerError);
  });

  it('refuses a forged proof and a saslContinue without a conversation', async () => {
    const client = await connect('', { appName: 'ClusterA' });
    const admin = client.db('admin');
    const { Binary } = await import('bson');
    const start = await admin.command({ saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: new Binary(Buffer.from('n,,n=tessera,r=abcdefghijklmnop')) });
    const serverFirst = Buffer.from((start.payload as InstanceType<typeof Binary>).buffer).toString('utf8');
    const nonce = /r=([^,]+)/.exec(serverFirst)?.[1] ?? '';
    expect(nonce.startsWith('abcdefghijklmnop')).toBe(true);
    const forged = await admin
      .command({ saslContinue: 1, conversationId: start.conversationId, payload: new Binary(Buffer.from(`c=biws,r=${nonce},p=${Buffer.alloc(32, 7).toString('base64')}`)) })
      .catch((error: unknown) => error);
    expect((forged as MongoServerError).code).toBe(18);
    const orphan = await admin.command({ saslContinue: 1, conversationId: 99, payload: new Binary(Buffer.from('c=biws')) }).catch((error: unknown) => error);
    expect((orphan as MongoServerError).code).toBe(17);
    const stillRefused = await client.db('app').command({ find: 'items' }).catch((error: unknown) => error);
    expect((stillRefused as MongoServerError).code).toBe(13);
  });
});
