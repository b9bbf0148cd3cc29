import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { makeTempDir, eventually } from '@tessera/testing';
import { BSON, BSONRegExp, type Document, Long, ObjectId, Timestamp } from 'bson';
import { type ChangeStreamDocument, type CommandStartedEvent, MongoClient, MongoServerError } from 'mongodb';
import { createDataSourceClient } from '../client';
import { openEmbeddedClient } from '../embedded/embedded-client';
import { encodeMsg, HEADER_SIZE, MAX_MESSAGE_SIZE, MessageReader, OP_MSG, OP_QUERY, OP_REPLY, readHeader } from './protocol';
import { WireServer } from './wire-server';

/** Sends raw bytes and resolves with the first complete reply (or null when the server closes the connection). */
function exchange(port: number, message: Buffer): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(message));
    let data = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      if (data.length >= 4 && data.length >= data.readInt32LE(0)) {
        socket.destroy();
        resolve(data.subarray(0, data.readInt32LE(0)));
      }
    });
    socket.on('close', () => resolve(null));
    socket.on('error', reject);
  });
}

function legacyQuery(requestId: number, collection: string, query: Document): Buffer {
  const name = Buffer.from(`${collection}\0`, 'utf8');
  const doc = BSON.serialize(query);
  const fixed = Buffer.alloc(4);
  const counts = Buffer.alloc(8);
  counts.writeInt32LE(-1, 4);
  const length = HEADER_SIZE + 4 + name.length + 8 + doc.length;
  const header = Buffer.alloc(HEADER_SIZE);
  header.writeInt32LE(length, 0);
  header.writeInt32LE(requestId, 4);
  header.writeInt32LE(OP_QUERY, 12);
  return Buffer.concat([header, fixed, name, counts, doc]);
}

/** An OP_MSG with a body and one kind-1 document sequence. */
function msgWithSequence(requestId: number, body: Document, id: string, docs: Document[]): Buffer {
  const bodyBytes = BSON.serialize(body);
  const ident = Buffer.from(`${id}\0`, 'utf8');
  const docBytes = Buffer.concat(docs.map((d) => BSON.serialize(d)));
  const seqSize = Buffer.alloc(4);
  seqSize.writeInt32LE(4 + ident.length + docBytes.length, 0);
  const payload = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), bodyBytes, Buffer.from([1]), seqSize, ident, docBytes]);
  const header = Buffer.alloc(HEADER_SIZE);
  header.writeInt32LE(HEADER_SIZE + payload.length, 0);
  header.writeInt32LE(requestId, 4);
  header.writeInt32LE(OP_MSG, 12);
  return Buffer.concat([header, payload]);
}

/** Test documents of any shape (ids of any type). */
type AnyDoc = { _id: number | string } & Record<string, unknown>;

/** The documentKey of a change event (drop events have none). */
const keyOf = (event: unknown): unknown => (event as { documentKey?: unknown }).documentKey;

/** A reply without the cluster time every reply carries (`operationTime`, `$clusterTime`). */
function withoutClock(reply: Document): Document {
  const { operationTime: _time, $clusterTime: _clock, ...rest } = reply;
  return rest;
}

function replyBody(reply: Buffer): Document {
  const header = readHeader(reply);
  if (header.opCode === OP_MSG) return withoutClock(BSON.deserialize(reply.subarray(HEADER_SIZE + 5)));
  if (header.opCode === OP_REPLY) return withoutClock(BSON.deserialize(reply.subarray(HEADER_SIZE + 20)));
  throw new Error(`unexpected opCode ${header.opCode}`);
}

/**
 * The driver opens a change stream on the server only when it is first read (as against MongoDB), so a
 * test reads it once, with a short wait, before making the changes it expects to see.
 */
async function opened<T extends { tryNext(): Promise<unknown> }>(stream: T): Promise<T> {
  expect(await stream.tryNext()).toBeNull();
  return stream;
}

describe('the datastore wire server', () => {
  let dir: { path: string; remove(): void };
  let server: WireServer;
  let client: MongoClient;
  let commands: CommandStartedEvent[];

  beforeEach(async () => {
    dir = makeTempDir('tessera-wire-');
    server = await WireServer.start({ clustersDir: dir.path });
    commands = [];
    client = new MongoClient(server.uri(), { monitorCommands: true, serverSelectionTimeoutMS: 5000 });
    client.on('commandStarted', (event) => commands.push(event));
  });

  afterEach(async () => {
    await client.close();
    await server.close();
    dir.remove();
  });

  describe('handshake and topology', () => {
    it('answers a legacy OP_QUERY isMaster with an OP_REPLY describing a replica set primary', async () => {
      const reply = await exchange(server.port, legacyQuery(7, 'admin.$cmd', { isMaster: 1, helloOk: true, client: { driver: { name: 'raw', version: '0' } } }));
      expect(reply).not.toBeNull();
      const header = readHeader(reply as Buffer);
      expect(header).toMatchObject({ opCode: OP_REPLY, responseTo: 7 });
      const body = replyBody(reply as Buffer);
      expect(body).toMatchObject({ ok: 1, ismaster: true, helloOk: true, setName: 'tessera', secondary: false, maxBsonObjectSize: 16 * 1024 * 1024, maxMessageSizeBytes: 48_000_000, maxWriteBatchSize: 100_000, logicalSessionTimeoutMinutes: 30 });
      expect(body.hosts).toEqual([`127.0.0.1:${server.port}`]);
      expect(body.me).toBe(`127.0.0.1:${server.port}`);
      expect(body.maxWireVersion).toBeGreaterThanOrEqual(17);
      expect(body.localTime).toBeInstanceOf(Date);
      expect(typeof body.connectionId).toBe('number');
    });

    it('is discovered by the driver as a replica set primary without directConnection', async () => {
      const discovering = new MongoClient(`mongodb://127.0.0.1:${server.port}/`, { serverSelectionTimeoutMS: 5000 });
      try {
        const hello = await discovering.db('admin').command({ hello: 1 });
        expect(hello).toMatchObject({ isWritablePrimary: true, setName: 'tessera', primary: `127.0.0.1:${server.port}` });
        const description = (discovering as unknown as { topology: { description: { type: string } } }).topology.description;
        expect(description.type).toBe('ReplicaSetWithPrimary');
        await discovering.db('d').collection<AnyDoc>('c').insertOne({ _id: 1 });
        expect(await discovering.db('d').collection<AnyDoc>('c').findOne({})).toEqual({ _id: 1 });
      } finally {
        await discovering.close();
      }
    });

    it('answers ping, buildInfo, listDatabases and the catalog commands', async () => {
      const admin = client.db('admin');
      expect(withoutClock(await admin.command({ ping: 1 }))).toEqual({ ok: 1 });
      expect((await admin.command({ buildInfo: 1 })).version).toBe('7.0.0');
      const db = client.db('shop');
      await db.createCollection('orders');
      await db.createCollection('big_orders', { viewOn: 'orders', pipeline: [{ $match: { total: { $gt: 100 } } }] });
      const collections = await db.listCollections().toArray();
      expect(collections.map((c) => [c.name, c.type]).sort()).toEqual([
        ['big_orders', 'view'],
        ['orders', 'collection'],
      ]);
      expect((await db.listCollections({ type: 'view' }, { nameOnly: true }).toArray()).map((c) => c.name)).toEqual(['big_orders']);
      const { databases } = await admin.admin().listDatabases();
      expect(databases.map((d) => d.name)).toContain('shop');
      await expect(db.createCollection('orders')).rejects.toMatchObject({ code: 48, codeName: 'NamespaceExists' });
      const orders = db.collection<AnyDoc>('orders');
      expect(await orders.createIndexes([{ key: { total: -1 }, name: 'by_total' }, { key: { sku: 1 }, unique: true }])).toEqual(['by_total', 'sku_1']);
      expect((await orders.listIndexes().toArray()).map((i) => [i.name, i.unique ?? false])).toEqual([
        ['_id_', false],
        ['by_total', false],
        ['sku_1', true],
      ]);
      await expect(orders.createIndex({ where: '2dsphere' })).rejects.toThrow();
      await expect(orders.createIndex({ at: 1 }, { expireAfterSeconds: 10 })).rejects.toMatchObject({ code: 197 });
      await orders.dropIndex('by_total');
      await expect(orders.dropIndex('by_total')).rejects.toMatchObject({ code: 27, codeName: 'IndexNotFound' });
      await orders.dropIndexes();
      expect((await orders.listIndexes().toArray()).map((i) => i.name)).toEqual(['_id_']);
      await expect(db.collection<AnyDoc>('missing').listIndexes().toArray()).rejects.toMatchObject({ code: 26 });
      expect(await db.dropCollection('orders')).toBe(true);
      await db.dropDatabase();
      expect((await admin.admin().listDatabases()).databases.map((d) => d.name)).not.toContain('shop');
    });

    it('refuses an unknown command and a malformed message clearly', async () => {
      await expect(client.db('admin').command({ frobnicate: 1 })).rejects.toMatchObject({ code: 59, codeName: 'CommandNotFound', message: "no such command: 'frobnicate'" });
      // Names of Object.prototype's members are no commands either.
      for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__']) {
        const reply = await exchange(server.port, encodeMsg(9, 0, { [name]: 1, $db: 'admin' }));
        expect(replyBody(reply as Buffer)).toEqual({ ok: 0, code: 59, codeName: 'CommandNotFound', errmsg: `no such command: '${name}'` });
      }
      // A message whose declared length is below the header size closes the connection, nothing else.
      const garbage = Buffer.alloc(16);
      garbage.writeInt32LE(3, 0);
      expect(await exchange(server.port, garbage)).toBeNull();
      expect(withoutClock(await client.db('admin').command({ ping: 1 }))).toEqual({ ok: 1 });
    });

    it('joins a large message sent in small chunks once, not on every chunk', async () => {
      const message = encodeMsg(7, 0, { ping: 1, pad: 'x'.repeat(4 * 1024 * 1024), $db: 'admin' });
      let copied = 0;
      const concat = Buffer.concat.bind(Buffer);
      const spy = vi.spyOn(Buffer, 'concat').mockImplementation((list, totalLength) => {
        const joined = concat(list, totalLength);
        copied += joined.length;
        return joined;
      });
      try {
        const socket = connect(server.port, '127.0.0.1');
        socket.setNoDelay(true);
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        const reply = new Promise<Buffer>((resolve) => {
          let data = Buffer.alloc(0);
          socket.on('data', (chunk: Buffer) => {
            data = concat([data, chunk]);
            if (data.length >= 4 && data.length >= data.readInt32LE(0)) resolve(data);
          });
        });
        for (let at = 0; at < message.length; at += 16 * 1024) {
          await new Promise<void>((resolve, reject) => socket.write(message.subarray(at, at + 16 * 1024), (error) => (error ? reject(error) : resolve())));
        }
        expect(replyBody(await reply)).toEqual({ ok: 1 });
        socket.destroy();
      } finally {
        spy.mockRestore();
      }
      // One join of the message (the 16 KB slices arrive as hundreds of chunks; joining each copied gigabytes).
      expect(copied).toBeLessThan(2 * message.length);
    });

    it('refuses a message announced beyond the size limit as soon as its header arrives', async () => {
      const header = Buffer.alloc(HEADER_SIZE);
      header.writeInt32LE(MAX_MESSAGE_SIZE + 1, 0);
      header.writeInt32LE(OP_MSG, 12);
      // Only the header is sent: the connection closes without the server waiting for (or buffering) a body.
      expect(await exchange(server.port, header)).toBeNull();
      const reader = new MessageReader();
      reader.push(header.subarray(0, 2));
      expect(reader.next()).toBeUndefined();
      reader.push(header.subarray(2, 4));
      expect(() => reader.next()).toThrow(/message length 48000001 out of range/);
    });

    it('cuts messages out of chunks that split and join them anywhere', () => {
      const messages = [1, 2, 3].map((n) => encodeMsg(n, 0, { ping: 1, n, $db: 'admin' }));
      const stream = Buffer.concat(messages);
      for (const size of [1, 3, 7, stream.length]) {
        const reader = new MessageReader();
        const out: Buffer[] = [];
        for (let at = 0; at < stream.length; at += size) {
          reader.push(stream.subarray(at, at + size));
          for (let message = reader.next(); message; message = reader.next()) out.push(message);
        }
        expect(out).toEqual(messages);
        expect(reader.buffered).toBe(0);
      }
    });

    it('reads OP_MSG document sequences and sends no reply to a moreToCome write', async () => {
      const reply = await exchange(server.port, msgWithSequence(3, { insert: 'seq', ordered: true, $db: 'raw' }, 'documents', [{ _id: 1 }, { _id: 2 }]));
      expect(replyBody(reply as Buffer)).toEqual({ n: 2, ok: 1 });
      await client.db('raw').collection<AnyDoc>('seq').insertOne({ _id: 3 }, { writeConcern: { w: 0 } });
      await eventually(async () => expect(await client.db('raw').collection<AnyDoc>('seq').countDocuments()).toBe(3));
      const plain = await exchange(server.port, encodeMsg(4, 0, { count: 'seq', $db: 'raw' }));
      expect(replyBody(plain as Buffer)).toEqual({ n: 3, ok: 1 });
    });
  });

  describe('CRUD', () => {
    it('hands out a query in batches across getMore and closes the cursor when exhausted', async () => {
      const items = client.db('d').collection<AnyDoc>('items');
      await items.insertMany(Array.from({ length: 250 }, (_, i) => ({ _id: i, n: i % 7 })));
      commands = [];
      const docs = await items.find({ n: { $gte: 1 } }, { batchSize: 50, sort: { _id: -1 }, projection: { _id: 1 } }).toArray();
      expect(docs.length).toBe(214);
      expect(docs[0]).toEqual({ _id: 249 });
      expect(commands.map((c) => c.commandName)).toEqual(['find', 'getMore', 'getMore', 'getMore', 'getMore']);
      const empty = await client.db('d').command({ aggregate: 'items', pipeline: [{ $match: { n: 0 } }], cursor: { batchSize: 0 } });
      expect((empty.cursor as Document).firstBatch).toEqual([]);
      const rest = await client.db('d').command({ getMore: (empty.cursor as Document).id as Long, collection: 'items' });
      expect(((rest.cursor as Document).nextBatch as Document[]).length).toBe(36);
      expect(Number((rest.cursor as Document).id)).toBe(0);
      expect(server.cursors.size).toBe(0);
      expect(await items.find({}, { skip: 240, limit: 5, sort: { _id: 1 } }).toArray()).toEqual([240, 241, 242, 243, 244].map((i) => ({ _id: i, n: i % 7 })));
    });

    it('matches regexes sent by the official driver, and answers an invalid one with MongoDB error 51091', async () => {
      const items = client.db('d').collection<AnyDoc>('names');
      await items.insertMany([{ _id: 1, name: 'Ann' }, { _id: 2, name: 'bob\nann' }, { _id: 3, name: ['x', 'carol'] }, { _id: 4, name: 7 }]);
      const ids = async (filter: Document) => (await items.find(filter).toArray()).map((doc) => doc._id);
      expect(await ids({ name: /^ann$/im })).toEqual([1, 2]);
      expect(await ids({ name: { $regex: '^ c a r', $options: 'x' } })).toEqual([3]);
      expect(await ids({ name: new BSONRegExp('bob.ann', 's') })).toEqual([2]);
      expect(await ids({ name: { $in: [/^A/, 7] } })).toEqual([1, 4]);
      expect((await items.deleteMany({ name: { $regex: /^b/ } })).deletedCount).toBe(1);
      await expect(items.find({ name: { $regex: '(' } }).toArray()).rejects.toMatchObject({ code: 51091, codeName: 'Location51091', message: expect.stringMatching(/^Regular expression is invalid/) });
      await expect(items.find({ name: { $regex: 'a', $options: 'q' } }).toArray()).rejects.toMatchObject({ code: 51108, codeName: 'Location51108' });
      expect(await items.countDocuments()).toBe(3);
    });

    it('stores a regex value with PCRE options and returns it to the driver unchanged', async () => {
      const raw = new MongoClient(server.uri(), { bsonRegExp: true, serverSelectionTimeoutMS: 5000 });
      try {
        const rules = raw.db('d').collection<AnyDoc>('rules');
        await rules.insertOne({ _id: 1, rule: new BSONRegExp('a b # spaced', 'ix') });
        expect((await rules.findOne({ _id: 1 }))?.rule).toEqual(new BSONRegExp('a b # spaced', 'ix'));
        expect(await rules.countDocuments({ rule: { $eq: new BSONRegExp('a b # spaced', 'ix') } })).toBe(1);
      } finally {
        await raw.close();
      }
      // The driver's default decodes a regex into a RegExp (without the options JavaScript lacks).
      expect((await client.db('d').collection<AnyDoc>('rules').findOne({ _id: 1 }))?.rule).toBeInstanceOf(RegExp);
    });

    it('refuses a negative batchSize and a maxTimeMS that is not an integer from 0 to 2^31-1, as MongoDB does', async () => {
      const db = client.db('d');
      await db.collection<AnyDoc>('items').insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
      const negative = { code: 51024, codeName: 'Location51024', message: "BSON field 'batchSize' value must be >= 0, actual value '-1'" };
      await expect(db.command({ find: 'items', batchSize: -1 })).rejects.toMatchObject(negative);
      await expect(db.command({ aggregate: 'items', pipeline: [], cursor: { batchSize: -1 } })).rejects.toMatchObject(negative);
      const opened = await db.command({ find: 'items', batchSize: 1 });
      const id = (opened.cursor as Document).id as Long;
      await expect(db.command({ getMore: id, collection: 'items', batchSize: -1 })).rejects.toMatchObject(negative);
      // The refused getMore left the cursor as it was.
      expect(((await db.command({ getMore: id, collection: 'items', batchSize: 5 })).cursor as Document).nextBatch).toEqual([{ _id: 2 }, { _id: 3 }]);

      await expect(db.command({ find: 'items', maxTimeMS: -1 })).rejects.toMatchObject({ code: 2, codeName: 'BadValue', message: "BSON field 'maxTimeMS' value must be >= 0, actual value '-1'" });
      await expect(db.command({ ping: 1, maxTimeMS: 1.5 })).rejects.toMatchObject({ code: 2, codeName: 'BadValue', message: 'maxTimeMS has non-integral value' });
      await expect(db.command({ count: 'items', maxTimeMS: 2 ** 31 })).rejects.toMatchObject({ code: 2, codeName: 'BadValue', message: "BSON field 'maxTimeMS' value must be <= 2147483647, actual value '2147483648'" });
      expect(withoutClock(await db.command({ count: 'items', maxTimeMS: 2 ** 31 - 1 }))).toEqual({ n: 3, ok: 1 });
      expect(await db.command({ find: 'items', batchSize: 0, maxTimeMS: 0 })).toMatchObject({ cursor: { firstBatch: [] }, ok: 1 });
    });

    it('kills a cursor and then reports it not found', async () => {
      const items = client.db('d').collection<AnyDoc>('items');
      await items.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i })));
      const cursor = items.find({}, { batchSize: 2 });
      expect((await cursor.next())?._id).toBe(0);
      const id = cursor.id as Long;
      expect(server.cursors.size).toBe(1);
      await cursor.close();
      expect(server.cursors.size).toBe(0);
      await expect(client.db('d').command({ getMore: id, collection: 'items' })).rejects.toMatchObject({ code: 43, codeName: 'CursorNotFound' });
      expect(await client.db('d').command({ killCursors: 'items', cursors: [id] })).toMatchObject({ cursorsKilled: [], cursorsNotFound: [id.toNumber()] });
    });

    it('reports write errors with MongoDB codes and the count of what was written', async () => {
      const items = client.db('d').collection<AnyDoc>('items');
      await items.insertOne({ _id: 1 });
      const ordered = await client.db('d').command({ insert: 'items', documents: [{ _id: 2 }, { _id: 1 }, { _id: 3 }] });
      expect(ordered).toMatchObject({ ok: 1, n: 1, writeErrors: [{ index: 1, code: 11000 }] });
      const unordered = await client.db('d').command({ insert: 'items', documents: [{ _id: 4 }, { _id: 1 }, { _id: [1] }, { _id: 5 }, { noId: true }], ordered: false });
      expect(unordered).toMatchObject({ ok: 1, n: 3, writeErrors: [{ index: 1, code: 11000 }, { index: 2, code: 2 }] });
      expect(await items.countDocuments({ noId: true })).toBe(1);
      const updated = await client.db('d').command({ update: 'items', updates: [{ q: { _id: 4 }, u: { $set: { a: 1 } } }, { q: { _id: 5 }, u: { $bogus: { a: 1 } } }, { q: { _id: 9 }, u: { $set: { b: 1 } }, upsert: true }], ordered: false });
      expect(updated).toMatchObject({ ok: 1, n: 2, nModified: 1, upserted: [{ index: 2, _id: 9 }] });
      expect((updated.writeErrors as Document[]).map((e) => e.index)).toEqual([1]);
      await expect(items.updateOne({ _id: 4 }, { $set: { _id: 5 } })).rejects.toMatchObject({ code: 66 });
      await expect(client.db('d').command({ find: 'items', filter: { a: { $foo: 1 } } })).rejects.toMatchObject({ code: 2, message: expect.stringMatching(/unknown operator: \$foo/) as unknown });
      await expect(client.db('d').command({ find: 'items', collation: { locale: 'xx' } })).rejects.toMatchObject({ code: 2, message: expect.stringMatching(/Field 'locale' is invalid/) as unknown });
    });

    it('updates, upserts and deletes with MongoDB result counts', async () => {
      const items = client.db('d').collection<AnyDoc>('items');
      await items.insertMany([{ _id: 1, tags: [{ k: 'a', v: 1 }, { k: 'b', v: 2 }] }, { _id: 2, tags: [] }]);
      expect(await items.updateMany({}, { $set: { seen: true } })).toMatchObject({ matchedCount: 2, modifiedCount: 2 });
      expect(await items.updateOne({ _id: 1 }, { $set: { 'tags.$[t].v': 9 } }, { arrayFilters: [{ 't.k': 'b' }] })).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
      expect(await items.updateOne({ _id: 2 }, [{ $set: { size: { $size: '$tags' } } }])).toMatchObject({ modifiedCount: 1 });
      expect(await items.findOne({ _id: 1 }, { projection: { tags: 1 } })).toEqual({ _id: 1, tags: [{ k: 'a', v: 1 }, { k: 'b', v: 9 }] });
      expect(await items.replaceOne({ _id: 3 }, { r: 1 }, { upsert: true })).toMatchObject({ upsertedCount: 1, upsertedId: 3 });
      const raw = await client.db('d').command({ findAndModify: 'items', query: { _id: 4 }, update: { $set: { x: 1 } }, upsert: true, new: true });
      expect(raw).toMatchObject({ ok: 1, value: { _id: 4, x: 1 }, lastErrorObject: { n: 1, updatedExisting: false, upserted: 4 } });
      const counters = client.db('d').collection<{ _id: number; x: number }>('items');
      expect(await counters.findOneAndUpdate({ x: 1 }, { $inc: { x: 1 } }, { returnDocument: 'after', projection: { _id: 0 } })).toEqual({ x: 2 });
      expect(await items.findOneAndDelete({}, { sort: { _id: -1 } })).toEqual({ _id: 4, x: 2 });
      expect(await items.countDocuments({ seen: true })).toBe(2);
      expect(await items.estimatedDocumentCount()).toBe(3);
      expect(await items.distinct('tags.k')).toEqual(['a', 'b']);
      expect(await items.aggregate([{ $match: { seen: true } }, { $count: 'n' }]).toArray()).toEqual([{ n: 2 }]);
      expect(await items.deleteMany({ seen: true })).toMatchObject({ deletedCount: 2 });
    });
  });

  describe('transactions', () => {
    it('commits writes to several collections at once and aborts them all', async () => {
      const db = client.db('bank');
      await db.collection<{ _id: string; balance?: number }>('accounts').insertMany([{ _id: 'a', balance: 10 }, { _id: 'b', balance: 0 }]);
      const session = client.startSession();
      try {
        session.startTransaction();
        await db.collection<{ _id: string; balance?: number }>('accounts').updateOne({ _id: 'a' }, { $inc: { balance: -5 } }, { session });
        await db.collection<{ _id: string; balance?: number }>('accounts').updateOne({ _id: 'b' }, { $inc: { balance: 5 } }, { session });
        await db.collection<{ moved: number }>('log').insertOne({ moved: 5 }, { session });
        // Inside the transaction its writes are visible; outside, not until it commits.
        expect((await db.collection<{ _id: string; balance?: number }>('accounts').findOne({ _id: 'a' }, { session }))?.balance).toBe(5);
        expect((await db.collection<{ _id: string; balance?: number }>('accounts').findOne({ _id: 'a' }))?.balance).toBe(10);
        await session.commitTransaction();
        expect(await db.collection<{ _id: string; balance?: number }>('accounts').find().sort({ _id: 1 }).toArray()).toEqual([{ _id: 'a', balance: 5 }, { _id: 'b', balance: 5 }]);
        expect(await db.collection<{ moved: number }>('log').countDocuments()).toBe(1);

        session.startTransaction();
        await db.collection<{ _id: string; balance?: number }>('accounts').deleteMany({}, { session });
        await db.collection<{ moved: number }>('log').insertOne({ moved: 99 }, { session });
        await session.abortTransaction();
        expect(await db.collection<{ _id: string; balance?: number }>('accounts').countDocuments()).toBe(2);
        expect(await db.collection<{ moved: number }>('log').countDocuments()).toBe(1);
      } finally {
        await session.endSession();
      }
    });

    it('aborts a transaction whose write failed and refuses to commit it', async () => {
      const db = client.db('bank');
      await db.collection<{ _id: string; balance?: number }>('accounts').insertOne({ _id: 'a' });
      const session = client.startSession();
      try {
        session.startTransaction();
        await db.collection<{ _id: string; balance?: number }>('accounts').insertOne({ _id: 'b' }, { session });
        await expect(db.collection<{ _id: string; balance?: number }>('accounts').insertOne({ _id: 'a' }, { session })).rejects.toMatchObject({ code: 11000 });
        await expect(session.commitTransaction()).rejects.toMatchObject({ code: 251, codeName: 'NoSuchTransaction' });
        expect(await db.collection<{ _id: string; balance?: number }>('accounts').countDocuments()).toBe(1);
        // The session stays usable for the next transaction, and withTransaction commits.
        await session.withTransaction(async () => {
          await db.collection<{ _id: string; balance?: number }>('accounts').insertOne({ _id: 'c' }, { session });
        });
        expect(await db.collection<{ _id: string; balance?: number }>('accounts').countDocuments()).toBe(2);
      } finally {
        await session.endSession();
      }
    });

    it('puts the last commit\'s time on every reply, which a causally consistent session reads after', async () => {
      const db = client.db('clock');
      const before = await db.command({ ping: 1 });
      expect(before.operationTime).toBeInstanceOf(Timestamp);
      expect(before.$clusterTime).toMatchObject({ clusterTime: before.operationTime, signature: { keyId: expect.anything() } });
      const session = client.startSession({ causalConsistency: true });
      try {
        await db.collection<{ _id: number }>('c').insertOne({ _id: 1 }, { session });
        const written = session.operationTime as Timestamp;
        expect(written.greaterThan(before.operationTime as Timestamp)).toBe(true);
        commands.length = 0;
        expect(await db.collection<{ _id: number }>('c').findOne({ _id: 1 }, { session })).toEqual({ _id: 1 });
        expect(commands[0].command.readConcern).toEqual({ afterClusterTime: written });
        // A failed command carries it too, and a transaction's first statement reads after it.
        const failed = await db.command({ nope: 1 }).catch((error: MongoServerError) => error.errorResponse);
        expect(failed.operationTime).toEqual(written);
        session.startTransaction();
        commands.length = 0;
        await db.collection<{ _id: number }>('c').insertOne({ _id: 2 }, { session });
        expect(commands[0].command.readConcern).toEqual({ afterClusterTime: written });
        await session.commitTransaction();
      } finally {
        await session.endSession();
      }
    });

    it('refuses commands that cannot run in a transaction', async () => {
      const session = client.startSession();
      try {
        session.startTransaction();
        // create and createIndexes run in one (MongoDB 4.4+); drop does not.
        await expect(client.db('d').command({ drop: 'x' }, { session })).rejects.toMatchObject({ code: 263 });
        // count too (countDocuments, an aggregate, is how a transaction counts), without a transient label.
        const refused = client.db('d').collection('x').count({}, { session });
        await expect(refused).rejects.toMatchObject({ code: 263, codeName: 'OperationNotSupportedInTransaction' });
        await expect(refused.catch((error: MongoServerError) => error.hasErrorLabel('TransientTransactionError'))).resolves.toBe(false);
        await session.abortTransaction();
      } finally {
        await session.endSession();
      }
    });
  });

  describe('change streams', () => {
    it('reports a collection stream with lookups and pre-images and resumes after a token', async () => {
      const items = client.db('d').collection<AnyDoc>('items');
      const stream = await opened(items.watch([], { fullDocument: 'updateLookup', fullDocumentBeforeChange: 'whenAvailable', maxAwaitTimeMS: 20 }));
      await items.insertOne({ _id: 1, a: 1 });
      await items.updateOne({ _id: 1 }, { $set: { a: 2 } });
      await items.deleteOne({ _id: 1 });
      const insert = await stream.next();
      expect(insert).toMatchObject({ operationType: 'insert', ns: { db: 'd', coll: 'items' }, fullDocument: { _id: 1, a: 1 } });
      const update = (await stream.next()) as ChangeStreamDocument & { fullDocument: Document; fullDocumentBeforeChange: Document };
      // The embedded feed looks the document up when the change commits (MongoDB: when the event is read,
      // which here would find it deleted), so it is the document right after this update.
      expect(update).toMatchObject({ operationType: 'update', updateDescription: { updatedFields: { a: 2 } }, fullDocument: { _id: 1, a: 2 }, fullDocumentBeforeChange: { _id: 1, a: 1 } });
      expect(stream.resumeToken).toEqual(update._id);
      await stream.close();
      const resumed = items.watch([], { resumeAfter: update._id });
      expect(await resumed.next()).toMatchObject({ operationType: 'delete', documentKey: { _id: 1 } });
      await resumed.close();
      const started = items.watch([], { startAfter: insert._id });
      expect((await started.next()).operationType).toBe('update');
      await started.close();
    });

    it('watches a database and the whole cluster, filtered by the stream pipeline', async () => {
      const dbStream = await opened(client.db('d').watch([{ $match: { operationType: 'insert' } }], { maxAwaitTimeMS: 20 }));
      const clusterStream = await opened(client.watch([], { maxAwaitTimeMS: 20 }));
      await client.db('d').collection<AnyDoc>('a').insertOne({ _id: 1 });
      await client.db('d').collection<AnyDoc>('a').deleteOne({ _id: 1 });
      await client.db('other').collection<AnyDoc>('b').insertOne({ _id: 2 });
      await client.db('d').collection<AnyDoc>('c').insertOne({ _id: 3 });
      expect(keyOf(await dbStream.next())).toEqual({ _id: 1 });
      expect(keyOf(await dbStream.next())).toEqual({ _id: 3 });
      const all = [await clusterStream.next(), await clusterStream.next(), await clusterStream.next(), await clusterStream.next()];
      expect(all.map((e) => [e.operationType, (e as { ns: { db: string } }).ns.db])).toEqual([
        ['insert', 'd'],
        ['delete', 'd'],
        ['insert', 'other'],
        ['insert', 'd'],
      ]);
      await dbStream.close();
      await clusterStream.close();
      await expect(client.db('admin').aggregate([{ $changeStream: {} }]).toArray()).rejects.toMatchObject({ code: 73 });
    });

    it('waits up to maxAwaitTimeMS and advances the postBatchResumeToken while nothing happens', async () => {
      const items = client.db('d').collection<AnyDoc>('items');
      await items.insertOne({ _id: 0 });
      const stream = items.watch([], { maxAwaitTimeMS: 50 });
      expect(await stream.tryNext()).toBeNull();
      const idle = stream.resumeToken;
      expect(idle).toBeDefined();
      await client.db('d').collection<AnyDoc>('elsewhere').insertOne({ _id: 1 });
      expect(await stream.tryNext()).toBeNull();
      expect(stream.resumeToken).not.toEqual(idle);
      // Resuming from the idle token sees only what came after it.
      await items.insertOne({ _id: 2 });
      const resumed = items.watch([], { resumeAfter: idle });
      expect(keyOf(await resumed.next())).toEqual({ _id: 2 });
      await resumed.close();
      expect(keyOf(await stream.next())).toEqual({ _id: 2 });
      await stream.close();
    });

    it('resumes on its own when the server restarts, without losing or repeating an event', async () => {
      const items = client.db('d').collection<AnyDoc>('items');
      const stream = await opened(items.watch([], { maxAwaitTimeMS: 20 }));
      await items.insertOne({ _id: 1 });
      expect(keyOf(await stream.next())).toEqual({ _id: 1 });
      const port = server.port;
      await server.close();
      server = await WireServer.start({ clustersDir: dir.path, port });
      await items.insertOne({ _id: 2 });
      await items.insertOne({ _id: 3 });
      expect(keyOf(await stream.next())).toEqual({ _id: 2 });
      expect(keyOf(await stream.next())).toEqual({ _id: 3 });
      await stream.close();
    });
  });

  describe('clusters', () => {
    it('serves each connection the embedded cluster its appName names, where standalone mode keeps it', async () => {
      const a = new MongoClient(server.uri(), { appName: 'ClusterA' });
      const b = new MongoClient(server.uri(), { appName: 'ClusterB' });
      try {
        await a.db('app').collection<AnyDoc>('c').insertOne({ _id: 'a' });
        await b.db('app').collection<AnyDoc>('c').insertOne({ _id: 'b' });
        expect(await a.db('app').collection<AnyDoc>('c').find().toArray()).toEqual([{ _id: 'a' }]);
        expect(await client.db('app').collection<AnyDoc>('c').countDocuments()).toBe(0);
        expect(existsSync(join(dir.path, 'ClusterA'))).toBe(true);
        // A tool's appName (mongosh sends "mongosh 2.x") is no cluster name: it gets the default cluster.
        const tool = new MongoClient(server.uri(), { appName: 'mongosh 2.3.1' });
        await tool.db('app').collection<AnyDoc>('c').insertOne({ _id: 'tool' });
        await tool.close();
        expect(await client.db('app').collection<AnyDoc>('c').find().toArray()).toEqual([{ _id: 'tool' }]);
        expect(existsSync(join(dir.path, 'default'))).toBe(true);
        // mongodump and mongorestore put their own name in appName whatever the URI says: the default cluster too.
        const restore = new MongoClient(server.uri(), { appName: 'mongorestore' });
        await restore.db('app').collection<AnyDoc>('c').insertOne({ _id: 'restored' });
        await restore.close();
        expect(await client.db('app').collection<AnyDoc>('c').countDocuments({ _id: 'restored' })).toBe(1);
        expect(existsSync(join(dir.path, 'mongorestore'))).toBe(false);
        // A client of the same directory in this process sees the same store.
        const local = openEmbeddedClient(join(dir.path, 'ClusterB'));
        expect(await local.db('app').collection('c').find({}).toArray()).toEqual([{ _id: 'b' }]);
        await local.close();
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('is what a * cluster mapping resolves every cluster name to', async () => {
      const mapped = createDataSourceClient({ clusterName: 'tessera-platform', dataDir: dir.path, clusterUris: { '*': server.uri() } });
      try {
        expect(mapped.engine).toBe('mongodb');
        const { insertedId } = await mapped.db('platform').collection('users').insertOne({ name: 'ada' });
        expect(insertedId).toBeInstanceOf(ObjectId);
        expect(existsSync(join(dir.path, 'tessera-platform'))).toBe(true);
        const ids = await mapped.db('platform').collection('users').find({}).toArray();
        expect(ids.map((d) => d.name)).toEqual(['ada']);
      } finally {
        await mapped.close();
      }
    });

    it('leaves a thrown MongoServerError type for command failures', async () => {
      const error: unknown = await client.db('d').command({ getMore: Long.fromNumber(12345), collection: 'x' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MongoServerError);
    });
  });

  describe('flow control', () => {
    it('stops reading from a client that pipelines requests and never reads, and keeps serving the others', async () => {
      const limited = await WireServer.start({ clustersDir: dir.path, maxPendingRequests: 4, maxReplyBufferBytes: 256 * 1024 });
      const other = new MongoClient(limited.uri(), { serverSelectionTimeoutMS: 5000 });
      const greedy = connect(limited.port, '127.0.0.1');
      greedy.pause();
      const connected = new Promise<void>((resolve) => greedy.once('connect', () => resolve()));
      try {
        const big = other.db('d').collection<AnyDoc>('big');
        await big.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, pad: 'x'.repeat(20_000) })));
        // 300 finds of ~400 KB replies each (120 MB unbounded), sent at once; the client never reads a reply.
        await connected;
        const finds = Buffer.concat(Array.from({ length: 300 }, (_, i) => encodeMsg(i + 1, 0, { find: 'big', $db: 'd' })));
        greedy.write(finds);
        const ownLoad = () => limited.connectionLoads().find((load) => load.bufferedReplyBytes > 0 || load.readingPaused);
        const paused = await eventually(() => {
          const load = ownLoad();
          expect(load?.readingPaused).toBe(true);
          return load as NonNullable<ReturnType<typeof ownLoad>>;
        });
        const bound = (load: NonNullable<ReturnType<typeof ownLoad>>) => {
          expect(load.pendingRequests).toBeLessThanOrEqual(4);
          // The limit plus the one reply written past it.
          expect(load.bufferedReplyBytes).toBeLessThan(256 * 1024 + 500 * 1024);
          expect(load.bufferedRequestBytes).toBeLessThanOrEqual(finds.length);
        };
        bound(paused);
        // Other connections are served meanwhile, and the stuck one stays within its bounds.
        expect(await big.countDocuments()).toBe(20);
        expect(await big.find({}, { projection: { _id: 1 } }).toArray()).toHaveLength(20);
        const later = ownLoad();
        expect(later?.readingPaused).toBe(true);
        bound(later as NonNullable<typeof later>);
        // A client that starts reading gets every reply, in order.
        const replies = new MessageReader();
        const ids: number[] = [];
        greedy.on('data', (chunk: Buffer) => {
          replies.push(chunk);
          for (let reply = replies.next(); reply; reply = replies.next()) ids.push(readHeader(reply).responseTo);
        });
        greedy.resume();
        await eventually(() => expect(ids).toHaveLength(300), { timeoutMs: 30_000 });
        expect(ids).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
      } finally {
        greedy.destroy();
        await other.close();
        await limited.close();
      }
    }, 60_000);
  });

  describe('idle sweeps', () => {
    it('logs a cursor and a session that fail to close, instead of rejecting unhandled from the timer', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      const logged: string[] = [];
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
      const swept = await WireServer.start({ clustersDir: dir.path, log: (level, message) => logged.push(`${level}: ${message}`) });
      try {
        swept.cursors.add({
          id: Long.fromNumber(77),
          ns: 'd.c',
          cluster: 'default',
          lastUsed: Date.now(),
          busy: false,
          next: () => Promise.resolve({ docs: [], exhausted: true }),
          close: () => Promise.reject(new Error('cursor close failed')),
        });
        const session = { startTransaction: () => undefined, endSession: () => Promise.reject(new Error('session end failed')) };
        const embedded = { startWireSession: () => session } as unknown as Parameters<WireServer['sessions']['forCommand']>[0];
        await swept.sessions.forCommand(embedded, 'default:01', { autocommit: false, txnNumber: 1, startTransaction: true });
        // Past both idle limits (10 and 30 minutes): the minute timer sweeps them.
        await vi.advanceTimersByTimeAsync(31 * 60_000);
      } finally {
        vi.useRealTimers();
      }
      try {
        await eventually(() => {
          expect(logged.some((line) => line.startsWith('error: closing an idle cursor failed: Error: cursor close failed'))).toBe(true);
          expect(logged.some((line) => line.startsWith('error: closing an idle session failed: Error: session end failed'))).toBe(true);
        });
        expect(swept.cursors.size).toBe(0);
        // Let any stray rejection surface before checking there was none.
        await new Promise((resolve) => setImmediate(resolve));
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
        await swept.close();
      }
    });
  });
});
