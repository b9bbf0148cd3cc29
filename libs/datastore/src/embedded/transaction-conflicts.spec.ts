import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedClient, openEmbeddedClient } from './embedded-client';

describe('transactions of the embedded engine meeting each other', () => {
  let dir: string;
  let client: EmbeddedClient;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-transactions-'));
    client = openEmbeddedClient(dir);
  });
  afterEach(async () => {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("waits, in the engine's own sessions, for the transaction that changed a document before writing it", async () => {
    const coll = client.db('app').collection('c');
    await coll.insertOne({ _id: 1, n: 0 });
    const holder = client.startSession();
    holder.startTransaction();
    await coll.updateOne({ _id: 1 }, { $inc: { n: 1 } }, { session: holder });
    const waiter = client.startSession();
    waiter.startTransaction();
    const write = coll.updateOne({ _id: 1 }, { $inc: { n: 10 } }, { session: waiter });
    await new Promise((resolve) => setTimeout(resolve, 30));
    await holder.commitTransaction();
    await write;
    await waiter.commitTransaction();
    expect(await coll.findOne({ _id: 1 })).toEqual({ _id: 1, n: 11 });
    await holder.endSession();
    await waiter.endSession();
  });

  it("runs withTransaction again after another transaction's write conflicts with a wire client's, as a driver does, until it commits", async () => {
    const coll = client.db('app').collection('c');
    await coll.insertOne({ _id: 1, n: 0 });
    const holder = client.startSession();
    holder.startTransaction();
    await coll.updateOne({ _id: 1 }, { $inc: { n: 1 } }, { session: holder });
    const retrier = client.startWireSession();
    let runs = 0;
    const retried = retrier.withTransaction(async (session) => {
      runs++;
      await coll.updateOne({ _id: 1 }, { $inc: { n: 10 } }, { session });
      return runs;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    await holder.commitTransaction();
    expect(await retried).toBeGreaterThan(1);
    expect(await coll.findOne({ _id: 1 })).toEqual({ _id: 1, n: 11 });
    await holder.endSession();
    await retrier.endSession();
  });

  it("labels the commit of a wire client's transaction the engine aborted TransientTransactionError; withTransaction gives up on other errors at once", async () => {
    const coll = client.db('app').collection('c');
    await coll.insertOne({ _id: 1 });
    const holder = client.startSession();
    holder.startTransaction();
    await coll.updateOne({ _id: 1 }, { $set: { a: 1 } }, { session: holder });
    const other = client.startWireSession();
    other.startTransaction();
    await expect(coll.updateOne({ _id: 1 }, { $set: { b: 1 } }, { session: other })).rejects.toMatchObject({ codeName: 'WriteConflict' });
    await expect(other.commitTransaction()).rejects.toMatchObject({ codeName: 'NoSuchTransaction', errorResponse: { errorLabels: ['TransientTransactionError'] } });
    await holder.abortTransaction();
    let runs = 0;
    await expect(
      other.withTransaction(async () => {
        runs++;
        throw new Error('not transient');
      }),
    ).rejects.toThrow('not transient');
    expect(runs).toBe(1);
    await holder.endSession();
    await other.endSession();
  });

  it("fails a wire client's transactional write meeting a document committed after the transaction's snapshot with WriteConflict", async () => {
    const coll = client.db('app').collection('c');
    await coll.insertMany([{ _id: 1, n: 0 }, { _id: 2, n: 0 }]);
    const session = client.startWireSession();
    session.startTransaction();
    expect(await coll.findOne({ _id: 2 }, undefined, { session })).toEqual({ _id: 2, n: 0 });
    await coll.updateOne({ _id: 2 }, { $inc: { n: 5 } });
    await coll.updateOne({ _id: 1 }, { $set: { seen: true } }, { session });
    await expect(coll.updateOne({ _id: 2 }, { $inc: { n: 1 } }, { session })).rejects.toMatchObject({ codeName: 'WriteConflict', errorResponse: { errorLabels: ['TransientTransactionError'] } });
    await expect(session.commitTransaction()).rejects.toMatchObject({ codeName: 'NoSuchTransaction' });
    expect(await coll.find({}).toArray()).toEqual([{ _id: 1, n: 0 }, { _id: 2, n: 5 }]);
    await session.endSession();
  });

  it("fails a wire client's transaction inserting an _id, or deleting a document, committed after its snapshot; other documents stay writable", async () => {
    const coll = client.db('app').collection('c');
    await coll.insertMany([{ _id: 1 }, { _id: 2 }]);
    const inserter = client.startWireSession();
    inserter.startTransaction();
    await coll.insertOne({ _id: 3 });
    await expect(coll.insertOne({ _id: 3, mine: true }, { session: inserter })).rejects.toMatchObject({ codeName: 'WriteConflict' });
    const deleter = client.startWireSession();
    deleter.startTransaction();
    await coll.deleteOne({ _id: 1 });
    await coll.updateOne({ _id: 2 }, { $set: { untouched: false } }, { session: deleter });
    await expect(coll.deleteMany({ _id: { $lte: 1 } }, { session: deleter })).rejects.toMatchObject({ codeName: 'WriteConflict' });
    const writer = client.startWireSession();
    writer.startTransaction();
    await coll.updateOne({ _id: 2 }, { $set: { other: 1 } });
    await coll.updateOne({ _id: 3 }, { $set: { mine: true } }, { session: writer });
    await writer.commitTransaction();
    expect(await coll.find({}).toArray()).toEqual([{ _id: 2, other: 1 }, { _id: 3, mine: true }]);
    for (const session of [inserter, deleter, writer]) await session.endSession();
  });

  it("lets the engine's own transactions write a document committed after their snapshot, as before", async () => {
    const coll = client.db('app').collection('c');
    await coll.insertOne({ _id: 1, n: 0 });
    const session = client.startSession();
    session.startTransaction();
    await coll.updateOne({ _id: 1 }, { $inc: { n: 5 } });
    await coll.updateOne({ _id: 1 }, { $inc: { n: 1 } }, { session });
    await session.commitTransaction();
    expect(await coll.findOne({ _id: 1 })).toEqual({ _id: 1, n: 6 });
    await session.endSession();
  });

  it("runs a wire client's withTransaction again after a commit since its snapshot met its write", async () => {
    const coll = client.db('app').collection('c');
    await coll.insertOne({ _id: 1, n: 0 });
    const session = client.startWireSession();
    let runs = 0;
    await session.withTransaction(async (s) => {
      runs++;
      if (runs === 1) await coll.updateOne({ _id: 1 }, { $inc: { n: 5 } });
      await coll.updateOne({ _id: 1 }, { $inc: { n: 1 } }, { session: s });
    });
    expect(runs).toBe(2);
    expect(await coll.findOne({ _id: 1 })).toEqual({ _id: 1, n: 6 });
    await session.endSession();
  });
});
