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
});
