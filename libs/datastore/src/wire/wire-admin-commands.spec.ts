import { makeTempDir } from '@tessera/testing';
import { Double, Long } from 'bson';
import { type Document, MongoClient, MongoServerError } from 'mongodb';
import { WireServer } from './wire-server';

/** Test documents of any shape (ids of any type). */
type AnyDoc = { _id: number | string } & Record<string, unknown>;

/** The server's error for a command (code and code name), or 'ok' when it succeeded. */
async function failure(run: Promise<unknown>): Promise<{ code?: number; codeName?: string } | 'ok'> {
  try {
    await run;
    return 'ok';
  } catch (error) {
    if (!(error instanceof MongoServerError)) throw error;
    return { code: error.code as number, codeName: error.codeName };
  }
}

// serverStatus and top (mongostat, mongotop), renameCollection and collMod, as MongoDB answers them.
describe('the wire server: serverStatus, top, renameCollection, collMod', () => {
  let dir: { path: string; remove(): void };
  let server: WireServer;
  let client: MongoClient;

  const start = async () => {
    server = await WireServer.start({ clustersDir: dir.path });
    client = new MongoClient(server.uri(), { serverSelectionTimeoutMS: 5000 });
  };

  beforeEach(async () => {
    dir = makeTempDir('tessera-wire-admin-');
    await start();
  });

  afterEach(async () => {
    await client.close();
    await server.close();
    dir.remove();
  });

  describe('serverStatus', () => {
    it('answers what mongostat reads, with operations counted by the wire server', async () => {
      const admin = client.db('admin');
      const before = await admin.command({ serverStatus: 1 }, { promoteLongs: false });
      const coll = client.db('d').collection<AnyDoc>('c');
      await coll.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
      await coll.updateOne({ _id: 1 }, { $set: { a: 1 } });
      await coll.deleteOne({ _id: 2 });
      await coll.find({}).toArray();
      const status = await admin.command({ serverStatus: 1, recordStats: 0 }, { promoteLongs: false });
      expect(status).toMatchObject({ ok: 1, process: 'mongod', version: '7.0.0', host: `127.0.0.1:${server.port}`, storageEngine: { name: 'tessera-embedded' } });
      expect(status.pid).toEqual(Long.fromNumber(process.pid));
      expect(status.localTime).toBeInstanceOf(Date);
      expect(typeof status.uptime).toBe('number');
      expect(status.uptimeMillis).toBeInstanceOf(Long);
      const delta = (field: string) => Number(status.opcounters[field]) - Number(before.opcounters[field]);
      expect(delta('insert')).toBe(3);
      expect(delta('update')).toBe(1);
      expect(delta('delete')).toBe(1);
      expect(delta('query')).toBe(1);
      expect(delta('command')).toBeGreaterThanOrEqual(1);
      expect(status.connections.current).toBeGreaterThanOrEqual(1);
      expect(status.connections.available).toBeGreaterThan(0);
      expect(status.connections.totalCreated).toBeGreaterThanOrEqual(status.connections.current);
      expect(Number(status.network.bytesIn)).toBeGreaterThan(Number(before.network.bytesIn));
      expect(Number(status.network.bytesOut)).toBeGreaterThan(Number(before.network.bytesOut));
      expect(Number(status.network.numRequests)).toBeGreaterThan(Number(before.network.numRequests));
      expect(status.mem).toMatchObject({ bits: 64, supported: true });
      expect(status.mem.resident).toBeGreaterThan(0);
      expect(status.mem.virtual).toBeGreaterThanOrEqual(status.mem.resident);
      expect(status.repl).toMatchObject({ setName: 'tessera', ismaster: true, secondary: false });
      expect(status.wiredTiger).toBeUndefined();
    });

    it('counts getMore', async () => {
      const coll = client.db('d').collection<AnyDoc>('c');
      await coll.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i })));
      const before = (await client.db('admin').command({ serverStatus: 1 })).opcounters.getmore as number;
      expect(await coll.find({}, { batchSize: 3 }).toArray()).toHaveLength(10);
      expect((await client.db('admin').command({ serverStatus: 1 })).opcounters.getmore - before).toBe(3);
    });
  });

  describe('top', () => {
    it('answers per namespace the time and count of each kind of operation', async () => {
      const coll = client.db('shop').collection<AnyDoc>('items');
      await coll.insertOne({ _id: 1 });
      await coll.insertOne({ _id: 2 });
      await coll.find({}).toArray();
      await coll.updateOne({ _id: 1 }, { $set: { a: 1 } });
      await coll.deleteOne({ _id: 2 });
      await coll.countDocuments();
      const reply = await client.db('admin').command({ top: 1 });
      expect(reply.ok).toBe(1);
      const items = reply.totals['shop.items'] as Record<string, { time: number; count: number }>;
      expect(Object.keys(items).sort()).toEqual(['commands', 'getmore', 'insert', 'queries', 'readLock', 'remove', 'total', 'update', 'writeLock']);
      expect(items.insert.count).toBe(2);
      expect(items.queries.count).toBe(1);
      expect(items.update.count).toBe(1);
      expect(items.remove.count).toBe(1);
      expect(items.commands.count).toBe(1);
      expect(items.writeLock.count).toBe(4);
      expect(items.readLock.count).toBe(2);
      expect(items.total.count).toBe(6);
      expect(items.total.time).toBeGreaterThan(0);
      expect(items.total.time).toBe(items.readLock.time + items.writeLock.time);
      expect(reply.totals.note).toBe('all times in microseconds');
    });

    it('is refused outside the admin database', async () => {
      expect(await failure(client.db('shop').command({ top: 1 }))).toEqual({ code: 13, codeName: 'Unauthorized' });
    });
  });

  describe('renameCollection', () => {
    const seed = async () => {
      const coll = client.db('d').collection<AnyDoc>('a');
      await coll.insertMany([
        { _id: 1, email: 'x@example.com', n: 1 },
        { _id: 2, email: 'y@example.com', n: 2 },
      ]);
      await coll.createIndex({ email: 1 }, { unique: true, name: 'email_unique' });
      await coll.createIndex({ n: -1 }, { sparse: true, name: 'n_sparse' });
    };
    const indexesOf = async (db: string, name: string) => (await client.db(db).collection(name).listIndexes().toArray()).map(({ v: _v, ...index }) => index as Document);

    it('moves documents and indexes; the source is gone; durable across a restart', async () => {
      await seed();
      const indexes = await indexesOf('d', 'a');
      await client.db('d').collection('a').rename('b');
      expect(await client.db('d').listCollections({}, { nameOnly: true }).map((c) => c.name).toArray()).toEqual(['b']);
      expect(await client.db('d').collection('b').find({}).sort({ _id: 1 }).toArray()).toEqual([
        { _id: 1, email: 'x@example.com', n: 1 },
        { _id: 2, email: 'y@example.com', n: 2 },
      ]);
      expect(await indexesOf('d', 'b')).toEqual(indexes);
      // The unique index still holds.
      expect(await failure(client.db('d').collection<AnyDoc>('b').insertOne({ _id: 3, email: 'x@example.com' }))).toMatchObject({ code: 11000 });
      await client.close();
      await server.close();
      await start();
      expect(await client.db('d').listCollections({}, { nameOnly: true }).map((c) => c.name).toArray()).toEqual(['b']);
      expect(await client.db('d').collection('b').countDocuments()).toBe(2);
      expect(await indexesOf('d', 'b')).toEqual(indexes);
    });

    it('renames across databases, keeping a collection collation, and replaces a target with dropTarget', async () => {
      await client.db('d').createCollection('c', { collation: { locale: 'en', strength: 2 } });
      await client.db('d').collection<AnyDoc>('c').insertMany([{ _id: 1, s: 'A' }, { _id: 2, s: 'a' }]);
      await client.db('e').collection<AnyDoc>('t').insertOne({ _id: 9 });
      expect(await failure(client.db('admin').command({ renameCollection: 'd.c', to: 'e.t' }))).toEqual({ code: 48, codeName: 'NamespaceExists' });
      await client.db('admin').command({ renameCollection: 'd.c', to: 'e.t', dropTarget: true });
      expect(await client.db('d').listCollections().toArray()).toEqual([]);
      expect(await client.db('e').collection('t').countDocuments({ s: 'a' })).toBe(2);
      const [info] = await client.db('e').listCollections({ name: 't' }).toArray();
      expect((info as Document).options).toMatchObject({ collation: { locale: 'en', strength: 2 } });
    });

    it('is reported by the change feed as one rename event on the source', async () => {
      await seed();
      const stream = client.db('d').watch();
      expect(await stream.tryNext()).toBeNull();
      await client.db('d').collection('a').rename('b');
      await client.db('d').collection<AnyDoc>('b').insertOne({ _id: 3 });
      const first = (await stream.next()) as unknown as Document;
      expect(first).toMatchObject({ operationType: 'rename', ns: { db: 'd', coll: 'a' }, to: { db: 'd', coll: 'b' } });
      const second = (await stream.next()) as unknown as Document;
      expect(second).toMatchObject({ operationType: 'insert', ns: { db: 'd', coll: 'b' }, documentKey: { _id: 3 } });
      await stream.close();
    });

    it('answers bad renames with MongoDB error codes', async () => {
      await seed();
      await client.db('d').createCollection('v', { viewOn: 'a', pipeline: [] });
      await client.db('d').collection<AnyDoc>('other').insertOne({ _id: 1 });
      const admin = client.db('admin');
      const rename = (command: Document) => failure(admin.command(command));
      expect(await rename({ renameCollection: 'd.missing', to: 'd.x' })).toEqual({ code: 26, codeName: 'NamespaceNotFound' });
      expect(await rename({ renameCollection: 'd.a', to: 'd.other' })).toEqual({ code: 48, codeName: 'NamespaceExists' });
      expect(await rename({ renameCollection: 'd.a', to: 'd.a' })).toEqual({ code: 20, codeName: 'IllegalOperation' });
      expect(await rename({ renameCollection: 'd.a', to: 'd.a', dropTarget: true })).toEqual({ code: 20, codeName: 'IllegalOperation' });
      expect(await rename({ renameCollection: 'd.v', to: 'd.w' })).toEqual({ code: 166, codeName: 'CommandNotSupportedOnView' });
      expect(await rename({ renameCollection: 'd.a', to: 'd.v', dropTarget: true })).toEqual({ code: 166, codeName: 'CommandNotSupportedOnView' });
      expect(await rename({ renameCollection: 'd.system.views', to: 'd.x' })).toEqual({ code: 20, codeName: 'IllegalOperation' });
      expect(await rename({ renameCollection: 'd.a', to: 'd.system.x' })).toEqual({ code: 20, codeName: 'IllegalOperation' });
      for (const to of ['nodot', 'd.', '.x', 'd.$x', 'bad db.x', 'd.x\0y', `d.${'x'.repeat(300)}`]) {
        expect(await rename({ renameCollection: 'd.a', to })).toEqual({ code: 73, codeName: 'InvalidNamespace' });
      }
      expect(await rename({ renameCollection: 'd.a', to: 7 })).toEqual({ code: 14, codeName: 'TypeMismatch' });
      expect(await rename({ renameCollection: 'd.a', to: 'd.b', dropTarget: 'yes' })).toEqual({ code: 14, codeName: 'TypeMismatch' });
      expect(await failure(client.db('d').command({ renameCollection: 'd.a', to: 'd.b' }))).toEqual({ code: 13, codeName: 'Unauthorized' });
      // Nothing moved.
      expect(await client.db('d').collection('a').countDocuments()).toBe(2);
      expect(await client.db('d').listCollections({}, { nameOnly: true }).map((c) => c.name).toArray()).toEqual(expect.arrayContaining(['a', 'v', 'other']));
    });
  });

  describe('collMod', () => {
    it("changes a view's definition, durably", async () => {
      const db = client.db('d');
      await db.collection<AnyDoc>('people').insertMany([{ _id: 1, age: 10 }, { _id: 2, age: 40 }]);
      await db.createCollection('adults', { viewOn: 'people', pipeline: [{ $match: { age: { $gte: 18 } } }] });
      expect(await db.collection('adults').countDocuments()).toBe(1);
      expect(await db.command({ collMod: 'adults', viewOn: 'people', pipeline: [{ $match: { age: { $lt: 18 } } }] })).toMatchObject({ ok: 1 });
      expect(await db.collection('adults').find({}).toArray()).toEqual([{ _id: 1, age: 10 }]);
      await client.close();
      await server.close();
      await start();
      const [info] = await client.db('d').listCollections({ name: 'adults' }).toArray();
      expect(info).toMatchObject({ type: 'view', options: { viewOn: 'people', pipeline: [{ $match: { age: { $lt: 18 } } }] } });
    });

    it("keeps the BSON types of the number literals of a view's new pipeline, durably", async () => {
      const db = client.db('d');
      await db.collection<AnyDoc>('people').insertOne({ _id: 1, age: 10 });
      await db.createCollection('tagged', { viewOn: 'people', pipeline: [] });
      const pipeline = [{ $set: { l: Long.fromNumber(5), d: new Double(1), sum: { $add: ['$age', Long.fromNumber(1)] } } }];
      expect(await db.command({ collMod: 'tagged', pipeline })).toMatchObject({ ok: 1 });
      const raw = { promoteValues: false, promoteLongs: false } as const;
      const types = (doc: Document | null | undefined) => Object.fromEntries(Object.entries(doc ?? {}).map(([k, v]) => [k, (v as { _bsontype?: string })._bsontype]));
      expect(types(await db.collection('tagged').findOne({}, raw))).toEqual({ _id: 'Int32', age: 'Int32', l: 'Long', d: 'Double', sum: 'Long' });
      await client.close();
      await server.close();
      await start();
      expect(types(await client.db('d').collection('tagged').findOne({}, raw))).toEqual({ _id: 'Int32', age: 'Int32', l: 'Long', d: 'Double', sum: 'Long' });
      const [info] = await client.db('d').listCollections({ name: 'tagged' }, raw).toArray();
      expect(types(((info as Document).options as { pipeline: Document[] }).pipeline[0].$set as Document)).toEqual({ l: 'Long', d: 'Double', sum: undefined });
    });

    it('accepts an index made visible, and refuses what the engine has no place for', async () => {
      const db = client.db('d');
      await db.collection<AnyDoc>('c').insertOne({ _id: 1 });
      await db.collection('c').createIndex({ a: 1 }, { name: 'a_1' });
      await db.createCollection('v', { viewOn: 'c', pipeline: [] });
      const mod = (command: Document) => failure(db.command(command));
      expect(await mod({ collMod: 'c' })).toBe('ok');
      expect(await mod({ collMod: 'c', index: { name: 'a_1', hidden: false } })).toBe('ok');
      expect(await mod({ collMod: 'c', index: { keyPattern: { a: 1 }, hidden: false } })).toBe('ok');
      expect(await mod({ collMod: 'c', index: { name: 'a_1', hidden: true } })).toEqual({ code: 115, codeName: 'CommandNotSupported' });
      expect(await mod({ collMod: 'c', index: { name: 'a_1', expireAfterSeconds: 60 } })).toEqual({ code: 115, codeName: 'CommandNotSupported' });
      expect(await mod({ collMod: 'c', index: { name: 'nope', hidden: false } })).toEqual({ code: 27, codeName: 'IndexNotFound' });
      expect(await mod({ collMod: 'c', index: { hidden: false } })).toEqual({ code: 2, codeName: 'BadValue' });
      expect(await mod({ collMod: 'c', index: 'a_1' })).toEqual({ code: 14, codeName: 'TypeMismatch' });
      expect(await mod({ collMod: 'c', validator: { a: { $exists: true } } })).toEqual({ code: 115, codeName: 'CommandNotSupported' });
      expect(await mod({ collMod: 'c', validationLevel: 'strict' })).toEqual({ code: 115, codeName: 'CommandNotSupported' });
      expect(await mod({ collMod: 'c', validationAction: 'warn' })).toEqual({ code: 115, codeName: 'CommandNotSupported' });
      expect(await mod({ collMod: 'c', bogus: 1 })).toEqual({ code: 40415, codeName: 'Location40415' });
      expect(await mod({ collMod: 'missing' })).toEqual({ code: 26, codeName: 'NamespaceNotFound' });
      expect(await mod({ collMod: 'c', viewOn: 'x', pipeline: [] })).toEqual({ code: 72, codeName: 'InvalidOptions' });
      expect(await mod({ collMod: 'v', viewOn: 'v', pipeline: [] })).toEqual({ code: 72, codeName: 'InvalidOptions' });
      expect(await mod({ collMod: 'v', viewOn: 'c', pipeline: 'x' })).toEqual({ code: 14, codeName: 'TypeMismatch' });
      expect(await mod({ collMod: 'v', viewOn: 3, pipeline: [] })).toEqual({ code: 14, codeName: 'TypeMismatch' });
      expect(await mod({ collMod: 'v', index: { name: 'a_1', hidden: false } })).toEqual({ code: 166, codeName: 'CommandNotSupportedOnView' });
      expect(await mod({ collMod: 3 })).toEqual({ code: 73, codeName: 'InvalidNamespace' });
      // The view still reads its collection.
      expect(await db.collection('v').countDocuments()).toBe(1);
    });
  });
});
