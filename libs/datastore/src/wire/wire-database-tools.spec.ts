import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { calculateObjectSize, type Document } from 'bson';
import { MongoClient, MongoServerError } from 'mongodb';
import { WireServer } from './wire-server';

// What MongoDB's database tools (mongodump, mongorestore, ...) need of the wire server beyond a driver's
// needs; test/tools/mongo-tools.spec.ts runs the tools themselves where they are built.
describe('the wire server and the database tools', () => {
  let dir: { path: string; remove(): void };
  let server: WireServer;
  const clients: MongoClient[] = [];
  const connect = (appName?: string) => {
    const client = new MongoClient(server.uri(), { serverSelectionTimeoutMS: 5000, ...(appName ? { appName } : {}) });
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    dir = makeTempDir('tessera-wire-tools-');
    server = await WireServer.start({ clustersDir: dir.path });
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await server.close();
    dir.remove();
  });

  it("gives every tool's connection the default cluster, as the tools send their own name as appName", async () => {
    await connect().db('shop').collection('items').insertOne({ name: 'in default' });
    for (const tool of ['mongodump', 'mongorestore', 'mongoimport', 'mongoexport']) {
      expect(await connect(tool).db('shop').collection('items').find({}, { projection: { _id: 0 } }).toArray()).toEqual([{ name: 'in default' }]);
      expect(existsSync(join(dir.path, tool))).toBe(false);
    }
    // A cluster named like a tool but spelled otherwise is still a cluster of its own.
    expect(await connect('mongodump-archive').db('shop').collection('items').countDocuments()).toBe(0);
  });

  it('answers collStats and dbStats with exact counts and BSON sizes, scaled, and refuses a view and a bad scale', async () => {
    const db = connect().db('shop');
    const docs = Array.from({ length: 30 }, (_, i) => ({ _id: i, name: `item ${i}`, tags: ['a', 'b'] }));
    await db.collection<{ _id: number }>('items').insertMany(docs);
    await db.collection('items').createIndex({ name: 1 }, { name: 'name_1' });
    await db.createCollection('named', { viewOn: 'items', pipeline: [{ $project: { name: 1 } }] });
    const bytes = docs.reduce((total, doc) => total + calculateObjectSize(doc), 0);
    const stats = await db.command({ collStats: 'items' });
    expect(stats).toMatchObject({ ns: 'shop.items', count: 30, size: bytes, avgObjSize: Math.floor(bytes / 30), storageSize: bytes, nindexes: 2, capped: false, scaleFactor: 1, ok: 1 });
    expect(Object.keys(stats.indexSizes as Document)).toEqual(['_id_', 'name_1']);
    expect(stats.totalIndexSize).toBeGreaterThan(0);
    expect(stats.totalSize).toBe(bytes + (stats.totalIndexSize as number));
    // After a delete the numbers follow.
    await db.collection<{ _id: number }>('items').deleteMany({ _id: { $gte: 10 } });
    expect(await db.command({ collStats: 'items', scale: 1024 })).toMatchObject({ count: 10, size: Math.floor(docs.slice(0, 10).reduce((t, d) => t + calculateObjectSize(d), 0) / 1024), scaleFactor: 1024 });
    expect(await db.command({ collStats: 'missing' })).toMatchObject({ ns: 'shop.missing', count: 0, size: 0, nindexes: 0, ok: 1 });
    await expect(db.command({ collStats: 'named' })).rejects.toMatchObject({ code: 166, codeName: 'CommandNotSupportedOnView' });
    for (const scale of [0, -5, 'big']) await expect(db.command({ collStats: 'items', scale })).rejects.toMatchObject({ code: typeof scale === 'string' ? 14 : 51024 });
    // Beyond one sizing slice (the sizing yields to other clients between slices), still exact.
    const many = Array.from({ length: 12_345 }, (_, i) => ({ _id: i, v: 'x'.repeat(i % 7) }));
    await db.collection<{ _id: number }>('other').insertMany(many);
    const manyBytes = many.reduce((total, doc) => total + calculateObjectSize(doc), 0);
    expect(await db.command({ collStats: 'other' })).toMatchObject({ count: 12_345, size: manyBytes });
    expect(await db.command({ dbStats: 1 })).toMatchObject({ db: 'shop', collections: 2, views: 1, objects: 12_355, indexes: 3, dataSize: manyBytes + Math.floor(docs.slice(0, 10).reduce((t, d) => t + calculateObjectSize(d), 0)), scaleFactor: 1, ok: 1 });
    expect(await connect().db('empty').command({ dbStats: 1 })).toMatchObject({ db: 'empty', collections: 0, views: 0, objects: 0, dataSize: 0, ok: 1 });
  });

  it("refuses getParameter's authSchemaVersion (no MongoDB users here), still answering the feature compatibility version", async () => {
    const admin = connect().db('admin');
    await expect(admin.command({ getParameter: 1, authSchemaVersion: 1 })).rejects.toMatchObject({ code: 72, codeName: 'InvalidOptions', message: expect.stringContaining("--nsExclude 'admin.system.*'") as unknown });
    expect(await admin.command({ getParameter: 1, featureCompatibilityVersion: 1 })).toMatchObject({ featureCompatibilityVersion: { version: '7.0' }, ok: 1 });
  });

  it("accepts an index's ns when it names the collection, does not keep it, and refuses another namespace", async () => {
    const db = connect().db('shop');
    await db.command({ createIndexes: 'items', indexes: [{ key: { sku: 1 }, name: 'sku_1', ns: 'shop.items', v: 2 }] });
    expect((await db.collection('items').listIndexes().toArray()).map(({ v: _v, ...index }) => index)).toEqual([
      { key: { _id: 1 }, name: '_id_' },
      { key: { sku: 1 }, name: 'sku_1' },
    ]);
    for (const ns of ['shop.other', 'other.items', 'shop.items ']) {
      await expect(db.command({ createIndexes: 'items', indexes: [{ key: { at: 1 }, name: 'at_1', ns }] })).rejects.toMatchObject({ code: 2, codeName: 'BadValue' });
    }
    for (const ns of [42, null, { db: 'shop' }]) {
      await expect(db.command({ createIndexes: 'items', indexes: [{ key: { at: 1 }, name: 'at_1', ns }] })).rejects.toMatchObject({ code: 14, codeName: 'TypeMismatch' });
    }
    expect((await db.collection('items').listIndexes().toArray()).map((index) => index.name)).toEqual(['_id_', 'sku_1']);
  });
});

// The tools cannot choose their appName, so with credentials the user name may name the cluster instead.
describe('the wire server with credentials and a cluster in the user name', () => {
  const password = 'tools-pass-0123456789';
  let dir: { path: string; remove(): void };
  let server: WireServer;
  const clients: MongoClient[] = [];
  const connect = async (user: string, appName?: string, secret = password) => {
    const client = new MongoClient(`mongodb://${encodeURIComponent(user)}:${secret}@127.0.0.1:${server.port}/?directConnection=true&serverSelectionTimeoutMS=3000`, appName ? { appName } : {});
    clients.push(client);
    await client.connect();
    return client;
  };

  beforeAll(async () => {
    dir = makeTempDir('tessera-wire-tools-auth-');
    server = await WireServer.start({ clustersDir: dir.path, credentials: { user: 'tessera', password } });
  });

  afterAll(async () => {
    for (const client of clients.splice(0)) await client.close(true);
    await server.close();
    dir.remove();
  });

  it('serves the cluster a `<user>+<cluster>` name names, over the appName and for the tools', async () => {
    await (await connect('tessera', 'Cluster0')).db('shop').collection('items').insertOne({ name: 'in Cluster0' });
    await (await connect('tessera')).db('shop').collection('items').insertOne({ name: 'in default' });
    for (const appName of [undefined, 'mongodump', 'mongorestore', 'OtherCluster']) {
      const client = await connect('tessera+Cluster0', appName);
      expect(await client.db('shop').collection('items').find({}, { projection: { _id: 0 } }).toArray(), appName).toEqual([{ name: 'in Cluster0' }]);
    }
    expect(existsSync(join(dir.path, 'OtherCluster'))).toBe(false);
    // The plain user name keeps the appName's cluster, and a tool's connection the default one.
    expect(await (await connect('tessera', 'mongodump')).db('shop').collection('items').find({}, { projection: { _id: 0 } }).toArray()).toEqual([{ name: 'in default' }]);
  });

  it('refuses a cluster name the server does not accept, another user and a wrong password, opening no cluster', async () => {
    for (const [user, secret] of [
      ['tessera+', password],
      ['tessera+bad name', password],
      ['tessera+../escape', password],
      ['tessera+/abs', password],
      ['tesserax+Cluster0', password],
      ['someone+Cluster0', password],
      ['tessera+Refused', 'wrong-password-000'],
    ]) {
      const refusal = await connect(user, undefined, secret).catch((error: unknown) => error);
      expect(refusal, user).toBeInstanceOf(MongoServerError);
      expect((refusal as MongoServerError).code, user).toBe(18);
    }
    expect(existsSync(join(dir.path, 'Refused'))).toBe(false);
    expect(existsSync(join(dir.path, '..', 'escape'))).toBe(false);
  });
});
