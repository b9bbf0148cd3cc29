import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Timestamp } from 'bson';
import { eventually } from '@tessera/testing';
import { type EmbeddedClient, openEmbeddedClient } from './embedded-client';

describe('the embedded change feed', () => {
  let dir: string;
  let client: EmbeddedClient;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-feed-'));
    client = openEmbeddedClient(dir);
  });
  afterEach(async () => {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('scopes streams to the client, a database or a collection', async () => {
    const all = client.watch();
    const appDb = client.db('app').watch();
    const users = client.db('app').collection('users').watch();
    await client.db('app').collection('users').insertOne({ _id: 1 });
    await client.db('app').collection('logs').insertOne({ _id: 2 });
    await client.db('other').collection('users').insertOne({ _id: 3 });
    const ids = async (stream: typeof all) => {
      const out: unknown[] = [];
      for (let e = await stream.tryNext(); e; e = await stream.tryNext()) out.push(e.documentKey?._id);
      await stream.close();
      return out;
    };
    expect(await ids(all)).toEqual([1, 2, 3]);
    expect(await ids(appDb)).toEqual([1, 2]);
    expect(await ids(users)).toEqual([1]);
  });

  it('ends a collection stream at its drop with an invalidate event; a database or cluster stream goes on', async () => {
    const coll = client.db('app').collection('c');
    await coll.insertOne({ _id: 1 });
    const stream = coll.watch();
    const dbStream = client.db('app').watch();
    await client.db('app').dropCollection('c');
    await coll.insertOne({ _id: 2 });
    expect((await stream.next()).operationType).toBe('drop');
    const invalidate = await stream.next();
    expect(invalidate.operationType).toBe('invalidate');
    await expect(stream.next()).rejects.toThrow(/invalidated/);
    expect((await dbStream.next()).operationType).toBe('drop');
    expect((await dbStream.next()).documentKey).toEqual({ _id: 2 });
    // Started after the invalidate, a stream sees what came next; resumed after it, it is refused.
    const after = coll.watch([], { startAfter: invalidate._id });
    expect((await after.next()).documentKey).toEqual({ _id: 2 });
    await expect(coll.watch([], { resumeAfter: invalidate._id }).next()).rejects.toMatchObject({ codeName: 'InvalidResumeToken' });
    for (const s of [stream, dbStream, after]) await s.close();
  });

  it('keeps a collection\'s UUID and changeStreamPreAndPostImages through a rename, a restart and a snapshot', async () => {
    const store = client.store;
    await client.db('app').createCollection('c');
    const state = store.collection('app', 'c');
    if (!state) throw new Error('the collection was not created');
    const uuid = state.uuid;
    expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
    await store.write(undefined, (unit) => store.modifyCollection(unit, state, { changeStreamPreAndPostImages: { enabled: false } }));
    await store.write(undefined, (unit) => store.renameCollection(unit, { db: 'app', coll: 'c' }, { db: 'app', coll: 'd' }, false));
    for (const compact of [false, true]) {
      if (compact) await client.store.snapshot();
      await client.close();
      client = openEmbeddedClient(dir);
      expect(client.store.collection('app', 'd')).toMatchObject({ uuid, changeStreamImages: false });
    }
  });

  it('reports the catalog\'s changes and collection UUIDs only with showExpandedEvents, and no images once they are disabled', async () => {
    const db = client.db('app');
    const plain = db.watch();
    const expanded = db.watch([], { showExpandedEvents: true, fullDocumentBeforeChange: 'whenAvailable' });
    const required = db.watch([], { fullDocumentBeforeChange: 'required' });
    await db.createCollection('c');
    await db.collection('c').createIndex({ x: 1 }, { name: 'x_1' });
    const state = client.store.collection('app', 'c');
    if (!state) throw new Error('the collection was not created');
    await client.store.write(undefined, (unit) => client.store.modifyCollection(unit, state, { changeStreamPreAndPostImages: { enabled: false } }));
    await db.collection('c').insertOne({ _id: 1, a: { 1: 1 } });
    await db.collection('c').updateOne({ _id: 1 }, { $set: { 'a.1': 2 } });
    const types: unknown[] = [];
    for (let e = await expanded.tryNext(); e; e = await expanded.tryNext()) types.push([e.operationType, e.collectionUUID?.toHexString(true), e.operationDescription ?? e.fullDocumentBeforeChange, e.updateDescription?.disambiguatedPaths]);
    expect(types).toEqual([
      ['create', state.uuid, { idIndex: { v: 2, key: { _id: 1 }, name: '_id_' } }, undefined],
      ['createIndexes', state.uuid, { indexes: [expect.objectContaining({ v: 2, name: 'x_1', key: { x: 1 } })] }, undefined],
      ['modify', state.uuid, { changeStreamPreAndPostImages: { enabled: false } }, undefined],
      ['insert', state.uuid, undefined, undefined],
      ['update', state.uuid, null, { 'a.1': ['a', '1'] }],
    ]);
    expect((await plain.next()).operationType).toBe('insert');
    expect((await plain.next()).collectionUUID).toBeUndefined();
    await expect(required.next().then(() => required.next())).rejects.toMatchObject({ codeName: 'NoMatchingDocument' });
    for (const s of [plain, expanded, required]) await s.close();
  });

  it('gives events taken long after their writes the documents as they were at each change', async () => {
    const coll = client.db('app').collection('c');
    const stream = coll.watch([], { fullDocument: 'updateLookup', fullDocumentBeforeChange: 'whenAvailable' });
    await coll.insertMany(Array.from({ length: 3 }, (_, i) => ({ _id: i, v: 'inserted' })));
    await coll.updateOne({ _id: 0 }, { $set: { v: 'updated' } });
    await coll.updateOne({ _id: 0 }, { $set: { v: 'updated again' } });
    await coll.deleteOne({ _id: 0 });
    const events = [];
    for (let e = await stream.tryNext(); e; e = await stream.tryNext()) events.push(e);
    expect(events.map((e) => [e.operationType, e.documentKey?._id, e.fullDocument?.['v'] ?? null, e.fullDocumentBeforeChange?.['v'] ?? null])).toEqual([
      ['insert', 0, 'inserted', null],
      ['insert', 1, 'inserted', null],
      ['insert', 2, 'inserted', null],
      ['update', 0, 'updated', 'inserted'],
      ['update', 0, 'updated again', 'updated'],
      ['delete', 0, null, 'updated again'],
    ]);
    // Each event is a copy: changing one changes neither the store nor a later event.
    (events[0].fullDocument as { v: string }).v = 'changed by a consumer';
    expect(await coll.findOne({ _id: 1 })).toEqual({ _id: 1, v: 'inserted' });
    await stream.close();
  });

  it('filters and reshapes events with a pipeline', async () => {
    const coll = client.db('app').collection('c');
    const stream = coll.watch([{ $match: { operationType: 'delete' } }, { $project: { operationType: 1, documentKey: 1 } }]);
    await coll.insertMany([{ _id: 1 }, { _id: 2 }]);
    await coll.deleteOne({ _id: 2 });
    const event = await stream.next();
    expect(event).toEqual({ _id: event._id, operationType: 'delete', documentKey: { _id: 2 } });
    expect(await stream.tryNext()).toBeNull();
    await stream.close();
  });

  it('reports drops and stamps events with increasing commit times', async () => {
    const coll = client.db('app').collection('c');
    const stream = client.watch();
    await coll.insertOne({ _id: 1 });
    await coll.drop();
    const insert = await stream.next();
    const drop = await stream.next();
    expect(drop).toMatchObject({ operationType: 'drop', ns: { db: 'app', coll: 'c' } });
    expect(insert.clusterTime).toBeInstanceOf(Timestamp);
    expect((drop.clusterTime as Timestamp).compare(insert.clusterTime as Timestamp)).toBeGreaterThan(0);
    await stream.close();
  });

  it('fails a waiting reader when the store closes', async () => {
    const other = mkdtempSync(join(tmpdir(), 'tessera-feed-closing-'));
    const own = openEmbeddedClient(other);
    const waiting = own.watch().next();
    await own.close();
    await expect(waiting).rejects.toThrow(/closed/);
    rmSync(other, { recursive: true, force: true });
  });

  it('delivers an event to a waiting reader and ends iteration on close', async () => {
    const coll = client.db('app').collection('c');
    const stream = coll.watch();
    const received: unknown[] = [];
    const reading = (async () => {
      for await (const event of stream) received.push(event.documentKey?._id);
    })();
    await coll.insertOne({ _id: 'a' });
    await coll.insertOne({ _id: 'b' });
    await eventually(() => expect(received).toEqual(['a', 'b']));
    await stream.close();
    await reading;
  });

  it("describes updates as MongoDB's delta does: operators by the paths they touched, pipelines by a diff, a pipeline's rewrite as a replace", async () => {
    const coll = client.db('app').collection('c');
    const padding = 'x'.repeat(100);
    await coll.insertOne({ _id: 1, padding, a: [{ '1': 1 }], tags: ['x'], array: ['foo', { a: 'bar' }, 1, 2, 3] });
    await coll.insertOne({ _id: 2, n: 1 });
    // Through the log on disk too: a stream resumed from before the updates reads them back from it.
    const live = coll.watch([], { showExpandedEvents: true });
    await coll.updateOne({ _id: 1 }, { $set: { 'a.0.1': 2 } });
    await coll.updateOne({ _id: 1 }, { $push: { tags: 'y' } });
    await coll.updateOne({ _id: 1 }, [{ $set: { array: ['foo', { a: 'bar' }] } }]);
    await coll.updateOne({ _id: 2 }, [{ $set: { n: 2 } }]);
    const events = [];
    for (let i = 0; i < 4; i++) events.push(await live.next());
    expect(events[0].updateDescription).toEqual({ updatedFields: { 'a.0.1': 2 }, removedFields: [], truncatedArrays: [], disambiguatedPaths: { 'a.0.1': ['a', 0, '1'] } });
    expect(events[1].updateDescription?.updatedFields).toEqual({ 'tags.1': 'y' });
    expect(events[2].updateDescription).toMatchObject({ updatedFields: {}, removedFields: [], truncatedArrays: [{ field: 'array', newSize: 2 }] });
    expect(events[3]).toMatchObject({ operationType: 'replace', fullDocument: { _id: 2, n: 2 } });
    await live.close();
    await client.close();
    client = openEmbeddedClient(dir);
    const resumed = client.db('app').collection('c').watch([], { startAfter: events[0]._id });
    expect((await resumed.next()).updateDescription?.updatedFields).toEqual({ 'tags.1': 'y' });
    expect((await resumed.next()).updateDescription?.truncatedArrays).toEqual([{ field: 'array', newSize: 2 }]);
    await resumed.close();
  });
});
