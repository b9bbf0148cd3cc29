import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { BSON, Double, Int32, Long } from 'bson';
import { type Document, type ResumeToken } from '../api/data-source';
import { DatastoreError } from '../api/datastore.error';
import { openEmbeddedClient } from './embedded-client';

describe('the embedded store on disk', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-durability-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const segment = () => join(dir, readdirSync(dir).filter((f) => f.startsWith('wal-')).sort().pop() as string);

  it('keeps documents, indexes and views across a restart', async () => {
    let client = openEmbeddedClient(dir);
    const db = client.db('app');
    await db.collection('people').insertMany([{ _id: 1, email: 'a@x', age: 30 }, { _id: 2, email: 'b@x', age: 40 }]);
    await db.collection('people').createIndex({ email: 1 }, { unique: true });
    await db.createCollection('adults', { viewOn: 'people', pipeline: [{ $match: { age: { $gte: 35 } } }] });
    await client.close();

    client = openEmbeddedClient(dir);
    const people = client.db('app').collection('people');
    expect(await people.find({}).toArray()).toEqual([{ _id: 1, email: 'a@x', age: 30 }, { _id: 2, email: 'b@x', age: 40 }]);
    expect((await people.listIndexes()).map((i) => i.name)).toEqual(['_id_', 'email_1']);
    await expect(people.insertOne({ _id: 3, email: 'a@x' })).rejects.toMatchObject({ code: 11000 });
    expect(await client.db('app').collection('adults').find({}).toArray()).toEqual([{ _id: 2, email: 'b@x', age: 40 }]);
    await expect(client.db('app').collection('adults').insertOne({ a: 1 })).rejects.toMatchObject({ code: 166 });
    await client.close();
  });

  it('keeps every number its BSON type across a restart, from the log and from a snapshot', async () => {
    const typed = (doc: unknown) => BSON.deserialize(BSON.serialize(doc as Document), { promoteValues: false, promoteLongs: false });
    const written = { _id: 1, i: 7, d: new Double(1), f: 2.5, l: Long.fromNumber(5), list: [new Double(0), Long.fromNumber(-1), new Int32(3)], nested: { d: new Double(-2) } };
    let client = openEmbeddedClient(dir, { compactBytes: 4 * 1024, keepSegments: 1 });
    let coll = client.db('app').collection('c');
    await coll.insertOne(written);
    await client.close();
    client = openEmbeddedClient(dir, { compactBytes: 4 * 1024, keepSegments: 1 });
    coll = client.db('app').collection('c');
    expect(typed(await coll.findOne({ _id: 1 }))).toEqual(typed(written));
    // Enough writes to compact the log into a snapshot, which holds the document from then on.
    for (let i = 2; i < 80; i++) await coll.insertOne({ _id: i, pad: 'x'.repeat(100) });
    await client.close();
    expect(readdirSync(dir).filter((f) => f.endsWith('.snap'))).toHaveLength(1);
    client = openEmbeddedClient(dir);
    expect(typed(await client.db('app').collection('c').findOne({ _id: 1 }))).toEqual(typed(written));
    await client.close();
  });

  it('refuses a directory locked by a live process and takes over the lock of a dead one', async () => {
    writeFileSync(join(dir, 'LOCK'), String(process.ppid));
    expect(() => openEmbeddedClient(dir)).toThrow(/in use by process/);
    writeFileSync(join(dir, 'LOCK'), '2147483646');
    const client = openEmbeddedClient(dir);
    await client.db('app').collection('c').insertOne({ _id: 1 });
    await client.close();
  });

  it('refuses a document over the BSON size limit and keeps nothing of it', async () => {
    const client = openEmbeddedClient(dir);
    const coll = client.db('app').collection('c');
    await expect(coll.insertMany([{ _id: 1 }, { _id: 2, big: 'x'.repeat(17 * 1024 * 1024) }])).rejects.toMatchObject({ code: 10334 });
    expect(await coll.countDocuments({})).toBe(0);
    await coll.insertOne({ _id: 3 });
    await client.close();
    const reopened = openEmbeddedClient(dir);
    expect(await reopened.db('app').collection('c').find({}).toArray()).toEqual([{ _id: 3 }]);
    await reopened.close();
  });

  it('cuts a torn or corrupt tail off the log and carries on writing after it', async () => {
    let client = openEmbeddedClient(dir);
    await client.db('app').collection('c').insertMany([{ _id: 1 }, { _id: 2 }]);
    await client.db('app').collection('c').insertOne({ _id: 3 });
    await client.close();
    const validSize = statSync(segment()).size;
    // A record whose header promises more bytes than were written, as a crash mid-write leaves it.
    const torn = Buffer.alloc(20);
    torn.writeUInt32LE(500, 0);
    appendFileSync(segment(), torn);

    client = openEmbeddedClient(dir);
    expect(statSync(segment()).size).toBe(validSize);
    expect((await client.db('app').collection('c').find({}).toArray()).map((d) => d._id)).toEqual([1, 2, 3]);
    await client.db('app').collection('c').insertOne({ _id: 4 });
    await client.close();

    // A complete-looking record with a wrong checksum is cut as well.
    const bad = Buffer.alloc(16);
    bad.writeUInt32LE(8, 0);
    bad.writeUInt32LE(12345, 4);
    appendFileSync(segment(), bad);
    client = openEmbeddedClient(dir);
    expect((await client.db('app').collection('c').find({}).toArray()).map((d) => d._id)).toEqual([1, 2, 3, 4]);
    await client.close();
  });

  it('opens a log written by the previous encoder (the bson package serializing every record)', async () => {
    // The record layout is unchanged: [length][crc32][header BSON][one BSON document per operation].
    const bson = (doc: Document) => Buffer.from(BSON.serialize(doc, { ignoreUndefined: true, checkKeys: false }));
    const record = (seq: number, ops: Document[]) => {
      const payload = Buffer.concat([bson({ s: seq, t: 1_700_000_000_000 + seq, n: ops.length }), ...ops.map(bson)]);
      const head = Buffer.alloc(8);
      head.writeUInt32LE(payload.length, 0);
      head.writeUInt32LE(crc32(payload), 4);
      return Buffer.concat([head, payload]);
    };
    const when = new Date(1_700_000_000_000);
    writeFileSync(
      join(dir, 'wal-0000000000000001.log'),
      Buffer.concat([
        record(1, [{ k: 'cc', d: 'app', c: 'c' }]),
        record(2, [{ k: 'ci', d: 'app', c: 'c', spec: { name: 'email_1', key: { email: 1 }, unique: true } }]),
        record(3, [
          { k: 'i', d: 'app', c: 'c', doc: { _id: 1, email: 'a@x', at: when, big: Long.fromString('9007199254740993') } },
          { k: 'i', d: 'app', c: 'c', doc: { _id: 2, email: 'b@x', tags: ['x', 'y'] } },
        ]),
        record(4, [{ k: 'u', d: 'app', c: 'c', doc: { _id: 2, email: 'c@x', tags: ['x', 'y'] }, pre: { _id: 2, email: 'b@x', tags: ['x', 'y'] } }]),
      ]),
    );
    const client = openEmbeddedClient(dir);
    const coll = client.db('app').collection('c');
    expect(await coll.find({}).toArray()).toEqual([
      { _id: 1, email: 'a@x', at: when, big: Long.fromString('9007199254740993') },
      { _id: 2, email: 'c@x', tags: ['x', 'y'] },
    ]);
    await expect(coll.insertOne({ _id: 3, email: 'a@x' })).rejects.toMatchObject({ code: 11000 });
    const feed = coll.watch([], { resumeAfter: { _data: `${(3).toString(16).padStart(16, '0')}${(0).toString(16).padStart(8, '0')}` } });
    expect(await feed.next()).toMatchObject({ operationType: 'insert', documentKey: { _id: 2 } });
    expect(await feed.next()).toMatchObject({ operationType: 'update', updateDescription: { updatedFields: { email: 'c@x' } } });
    await feed.close();
    // New records follow the old ones in the same segment, and everything reads back after a restart.
    await coll.insertOne({ _id: 4, email: 'd@x' });
    await client.close();
    const reopened = openEmbeddedClient(dir);
    expect((await reopened.db('app').collection('c').find({}).toArray()).map((d) => d._id)).toEqual([1, 2, 4]);
    await reopened.close();
  });

  it('snapshots and compacts the log, ignoring a half-written snapshot', async () => {
    let client = openEmbeddedClient(dir, { compactBytes: 8 * 1024, keepSegments: 1 });
    const coll = client.db('app').collection('c');
    await coll.createIndex({ n: 1 });
    for (let i = 0; i < 300; i++) await coll.insertOne({ _id: i, n: i % 7, pad: 'x'.repeat(100) });
    await coll.updateMany({ n: 3 }, { $set: { three: true } });
    await coll.deleteMany({ n: 6 });
    await client.close();
    const files = readdirSync(dir);
    expect(files.filter((f) => f.endsWith('.snap'))).toHaveLength(1);
    expect(files.filter((f) => f.startsWith('wal-')).length).toBeLessThanOrEqual(3);
    // A crash while writing the next snapshot leaves only a temporary file, which must not be read.
    writeFileSync(join(dir, 'snapshot-9999999999999999.snap.tmp'), 'garbage');

    client = openEmbeddedClient(dir);
    const reopened = client.db('app').collection('c');
    expect(await reopened.countDocuments({})).toBe(300 - 42);
    expect(await reopened.countDocuments({ three: true })).toBe(43);
    expect(await reopened.countDocuments({ n: 6 })).toBe(0);
    expect((await reopened.listIndexes()).map((i) => i.name)).toEqual(['_id_', 'n_1']);
    await client.close();
  });

  it('snapshots documents too large to share a snapshot frame', async () => {
    let client = openEmbeddedClient(dir);
    const coll = client.db('app').collection('c');
    // 24 documents of 1 MB: 500 of them would make one frame far over the BSON limit.
    const big = (i: number) => ({ _id: i, blob: String(i % 10).repeat(1024 * 1024) });
    for (let i = 0; i < 24; i += 6) await coll.insertMany(Array.from({ length: 6 }, (_, k) => big(i + k)));
    await client.store.snapshot();
    await client.close();
    expect(readdirSync(dir).filter((f) => f.endsWith('.snap'))).toHaveLength(1);
    client = openEmbeddedClient(dir);
    const reopened = client.db('app').collection('c');
    expect(await reopened.countDocuments({})).toBe(24);
    expect(await reopened.findOne({ _id: 17 })).toEqual(big(17));
    await client.close();
  });

  it('takes a snapshot on demand while other writes are in flight', async () => {
    let client = openEmbeddedClient(dir);
    const coll = client.db('app').collection('c');
    const writes = Array.from({ length: 200 }, (_, i) => coll.insertOne({ _id: i }));
    await Promise.all([client.store.snapshot(), ...writes, client.store.snapshot()]);
    await coll.insertOne({ _id: 'after' });
    await client.close();
    expect(readdirSync(dir).filter((f) => f.endsWith('.snap'))).toHaveLength(1);
    client = openEmbeddedClient(dir);
    expect(await client.db('app').collection('c').countDocuments({})).toBe(201);
    await client.close();
  });

  it('resumes the change feed after a restart, with pre-images when asked', async () => {
    let client = openEmbeddedClient(dir);
    const coll = client.db('app').collection('c');
    const stream = coll.watch([], { fullDocumentBeforeChange: 'whenAvailable' });
    await coll.insertOne({ _id: 1, v: 1 });
    const first = await stream.next();
    await stream.close();
    await coll.updateOne({ _id: 1 }, { $set: { v: 2 } });
    await coll.deleteOne({ _id: 1 });
    await client.close();

    client = openEmbeddedClient(dir);
    const resumed = client.db('app').collection('c').watch([], { resumeAfter: first._id, fullDocumentBeforeChange: 'whenAvailable', fullDocument: 'whenAvailable' });
    const update = await resumed.next();
    expect(update).toMatchObject({ operationType: 'update', fullDocument: { _id: 1, v: 2 }, fullDocumentBeforeChange: { _id: 1, v: 1 } });
    expect(await resumed.next()).toMatchObject({ operationType: 'delete', fullDocumentBeforeChange: { _id: 1, v: 2 } });
    expect(await resumed.tryNext()).toBeNull();
    await resumed.close();
    await client.close();
  });

  it('says the history is lost when the resume point was compacted away', async () => {
    const client = openEmbeddedClient(dir, { compactBytes: 2 * 1024, keepSegments: 0 });
    const coll = client.db('app').collection('c');
    const stream = coll.watch();
    await coll.insertOne({ _id: 0 });
    const token: ResumeToken = (await stream.next())._id;
    await stream.close();
    for (let i = 1; i < 100; i++) await coll.insertOne({ _id: i, pad: 'x'.repeat(100) });
    const late = coll.watch([], { resumeAfter: token });
    const error = (await late.next().catch((e: unknown) => e)) as DatastoreError;
    expect(error).toBeInstanceOf(DatastoreError);
    expect(error.code).toBe(286);
    await late.close();
    await client.close();
  });

  it('writes a transaction as one record: all of it or none of it after a restart', async () => {
    let client = openEmbeddedClient(dir);
    const session = client.startSession();
    await session.withTransaction(async (s) => {
      await client.db('app').collection('a').insertOne({ _id: 1 }, { session: s });
      await client.db('app').collection('b').insertOne({ _id: 1 }, { session: s });
    });
    session.startTransaction();
    await client.db('app').collection('a').insertOne({ _id: 2 }, { session });
    await session.abortTransaction();
    await client.close();
    client = openEmbeddedClient(dir);
    expect(await client.db('app').collection('a').find({}).toArray()).toEqual([{ _id: 1 }]);
    expect(await client.db('app').collection('b').find({}).toArray()).toEqual([{ _id: 1 }]);
    await client.close();
  });

  it('shows other sessions the committed state while a transaction is open, without waiting', async () => {
    const client = openEmbeddedClient(dir);
    const coll = client.db('app').collection('c');
    await coll.insertMany([{ _id: 1, v: 'old' }, { _id: 2, v: 'doomed' }]);
    const session = client.startSession();
    session.startTransaction();
    await coll.updateOne({ _id: 1 }, { $set: { v: 'new' } }, { session });
    await coll.deleteOne({ _id: 2 }, { session });
    await coll.insertOne({ _id: 3, v: 'added' }, { session });
    expect(await coll.find({}, undefined, { session, sort: { _id: 1 } }).toArray()).toEqual([{ _id: 1, v: 'new' }, { _id: 3, v: 'added' }]);
    expect(await coll.find({}).sort({ _id: 1 }).toArray()).toEqual([{ _id: 1, v: 'old' }, { _id: 2, v: 'doomed' }]);
    expect(await coll.countDocuments({})).toBe(2);
    expect(await coll.findOne({ _id: 3 })).toBeNull();
    expect(await coll.aggregate([{ $match: { v: 'old' } }]).toArray()).toEqual([{ _id: 1, v: 'old' }]);
    // A write elsewhere does not wait for the transaction.
    await client.db('app').collection('elsewhere').insertOne({ _id: 1 });
    await session.commitTransaction();
    expect(await coll.find({}).sort({ _id: 1 }).toArray()).toEqual([{ _id: 1, v: 'new' }, { _id: 3, v: 'added' }]);
    await client.close();
  });

  it('makes other writers wait for an open transaction and aborts a failed one', async () => {
    const client = openEmbeddedClient(dir);
    const coll = client.db('app').collection('c');
    await coll.insertOne({ _id: 1, n: 0 });
    const session = client.startSession();
    session.startTransaction();
    await coll.updateOne({ _id: 1 }, { $inc: { n: 1 } }, { session });
    let outsideDone = false;
    const outside = coll.updateOne({ _id: 1 }, { $inc: { n: 10 } }).then(() => (outsideDone = true));
    await new Promise((r) => setImmediate(r));
    expect(outsideDone).toBe(false);
    await expect(coll.insertOne({ _id: 1 }, { session })).rejects.toMatchObject({ code: 11000 });
    await expect(session.commitTransaction()).rejects.toMatchObject({ code: 251 });
    await outside;
    expect(await coll.findOne({ _id: 1 })).toEqual({ _id: 1, n: 10 });
    await client.close();
  });
});
