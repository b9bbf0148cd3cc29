import { emptyApp, type AppConfig } from '@tessera/app-config';
import type { ChangeEvent, ChangeStream } from '@tessera/datastore';
import { compileRules } from '@tessera/rules';
import { DataSources } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';
import { DataAccess, type DataAccessCaller } from './data-access.service';
import { UserTransactions } from './user-transaction';
import { UserChangeFeed } from './watch-events';

const reader: DataAccessCaller = { kind: 'user', user: { id: 'reader' } };
const admin: DataAccessCaller = { kind: 'user', user: { id: 'root', custom_data: { isAdmin: true } } };
const system: DataAccessCaller = { kind: 'system' };

function appConfig(): AppConfig {
  const app = emptyApp('withheld');
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } },
    collectionRules: [
      {
        database: 'db',
        collection: 'notes',
        roles: [
          { name: 'admin', apply_when: { '%%user.custom_data.isAdmin': true }, read: true, write: true, insert: true, delete: true },
          {
            name: 'reader',
            apply_when: {},
            fields: {
              secret: { read: false, write: false },
              meta: { fields: { public: { read: true, write: true }, hidden: { read: false } } },
              items: { fields: { label: { read: true }, code: { read: false } } },
            },
            additional_fields: { read: true, write: true },
            insert: true,
            delete: true,
          },
        ],
      },
      {
        // The role is chosen per document: `secret` is readable in the reader's own documents only.
        database: 'db',
        collection: 'mixed',
        roles: [
          { name: 'own', apply_when: { owner: '%%user.id' }, read: true, write: true },
          { name: 'others', apply_when: {}, fields: { secret: { read: false } }, additional_fields: { read: true } },
        ],
      },
      {
        database: 'db',
        collection: 'private',
        roles: [{ name: 'owner', apply_when: { owner: '%%user.id' }, read: true, write: true, insert: true, delete: true }],
      },
    ],
    rules: [],
    webhooks: [],
  });
  return app;
}

describe('withheld fields', () => {
  const dir = makeTempDir('tessera-withheld-');
  const dataSources = new DataSources(loadSettings({ TESSERA_DATA_DIR: dir.path }));
  const dataAccess = new DataAccess(dataSources);
  const transactions = new UserTransactions(dataAccess);
  const app = { id: 'withheld', deploymentId: 'd1', config: appConfig() };
  const call = (caller: DataAccessCaller, action: string, args: Record<string, unknown> = {}, collection = 'notes') =>
    dataAccess.execute({ app, service: 'mongodb-atlas', action, database: 'db', collection, args, caller });
  const inTransaction = (action: string, args: Record<string, unknown>) =>
    transactions.run(app, 'mongodb-atlas', { id: 'reader' }, (tx) => tx.execute({ action, database: 'db', collection: 'notes', args }));

  beforeAll(async () => {
    await call(system, 'insertMany', {
      documents: [
        { _id: 1, title: 'a', secret: 'k7', meta: { public: 1, hidden: 'h1' }, items: [{ label: 'x', code: 11 }] },
        { _id: 2, title: 'b', secret: 'q2', meta: { public: 2, hidden: 'h2' }, items: [{ label: 'y', code: 22 }] },
      ],
    });
    await call(system, 'insertMany', { documents: [{ _id: 1, owner: 'reader', secret: 'mine' }, { _id: 2, owner: 'other', secret: 'theirs' }] }, 'mixed');
  });

  afterAll(() => dir.remove());

  const refusal = { errorCode: 'InvalidParameter', httpStatus: 400 };

  it('refuses a filter on a withheld field, however it is nested', async () => {
    const filters = [
      { secret: { $gte: 'm' } },
      { secret: 'k7' },
      { $or: [{ title: 'a' }, { secret: { $lt: 'm' } }] },
      { $and: [{ title: 'a' }, { $nor: [{ secret: 'x' }] }] },
      { 'meta.hidden': 'h1' },
      { meta: { public: 1, hidden: 'h1' } },
      { meta: { $elemMatch: { hidden: 'h1' } } },
      { items: { $elemMatch: { code: { $gt: 15 } } } },
      { 'items.code': 11 },
      { 'items.0.code': 11 },
      { secret: { $not: { $gte: 'm' } } },
      { secret: { $exists: true } },
    ];
    for (const query of filters) {
      await expect(call(reader, 'count', { query }), JSON.stringify(query)).rejects.toMatchObject(refusal);
      await expect(call(reader, 'find', { query }), JSON.stringify(query)).rejects.toMatchObject(refusal);
    }
    await expect(call(reader, 'count', { query: { secret: { $gte: 'm' } } })).rejects.toThrow("field 'secret' cannot be used in a query: the user does not have read permission for it");
  });

  it('refuses sorting, grouping, distinct and computing on a withheld field', async () => {
    await expect(call(reader, 'find', { sort: { secret: 1 } })).rejects.toMatchObject(refusal);
    await expect(call(reader, 'findOne', { sort: { 'meta.hidden': -1 } })).rejects.toMatchObject(refusal);
    await expect(call(reader, 'findOneAndUpdate', { filter: {}, update: { $set: { title: 'z' } }, sort: { secret: 1 } })).rejects.toMatchObject(refusal);
    await expect(call(reader, 'findOneAndDelete', { filter: {}, sort: { secret: 1 } })).rejects.toMatchObject(refusal);
    await expect(call(reader, 'distinct', { key: 'secret' })).rejects.toMatchObject(refusal);
    for (const pipeline of [
      [{ $match: { secret: { $gte: 'm' } } }],
      [{ $group: { _id: '$secret', n: { $sum: 1 } } }],
      [{ $group: { _id: null, top: { $max: '$meta.hidden' } } }],
      [{ $sort: { secret: 1 } }],
      [{ $project: { big: { $gt: ['$secret', 'm'] } } }],
      [{ $addFields: { s: { $substr: ['$$ROOT.secret', 0, 1] } } }],
      [{ $unwind: '$items' }, { $match: { 'items.code': 11 } }],
    ]) {
      await expect(call(reader, 'aggregate', { pipeline }), JSON.stringify(pipeline)).rejects.toMatchObject(refusal);
    }
    // An update pipeline must not copy a withheld value into a readable field.
    await expect(call(reader, 'updateOne', { query: { _id: 1 }, update: [{ $set: { title: '$secret' } }] })).rejects.toMatchObject(refusal);
    await expect(call(reader, 'updateMany', { query: {}, update: { $set: { 'items.$[i].label': 'seen' } }, arrayFilters: [{ 'i.code': 11 }] })).rejects.toMatchObject(refusal);
    expect((await call(system, 'findOne', { query: { _id: 1 } })) as object).toMatchObject({ title: 'a' });
  });

  it('still answers queries on readable fields, and fields computed in the pipeline', async () => {
    expect(Number(await call(reader, 'count', { query: { title: { $gte: 'a' }, 'meta.public': 1, 'items.label': 'x' } }))).toBe(1);
    expect(await call(reader, 'find', { query: {}, sort: { title: -1 }, project: { title: 1 } })).toEqual([{ _id: 2, title: 'b' }, { _id: 1, title: 'a' }]);
    const grouped = await call(reader, 'aggregate', { pipeline: [{ $group: { _id: '$title', n: { $sum: 1 } } }, { $sort: { n: -1, _id: 1 } }, { $match: { n: { $gte: 1 } } }] });
    expect(grouped).toEqual([{ _id: 'a', n: 1 }, { _id: 'b', n: 1 }]);
    expect(await call(reader, 'distinct', { key: 'title' })).toEqual(['a', 'b']);
  });

  it('decides conservatively when the field is readable in some documents only', async () => {
    await expect(call(reader, 'count', { query: { secret: 'mine' } }, 'mixed')).rejects.toMatchObject(refusal);
    expect(await call(reader, 'find', { sort: { _id: 1 } }, 'mixed')).toEqual([{ _id: 1, owner: 'reader', secret: 'mine' }, { _id: 2, owner: 'other' }]);
  });

  it('leaves users who may read the field, and system functions, as they were', async () => {
    expect(Number(await call(admin, 'count', { query: { secret: { $gte: 'm' } } }))).toBe(1);
    expect(await call(admin, 'find', { sort: { secret: 1 }, project: { secret: 1 } })).toEqual([{ _id: 1, secret: 'k7' }, { _id: 2, secret: 'q2' }]);
    expect(Number(await call(system, 'count', { query: { secret: { $gte: 'm' } } }))).toBe(1);
    expect(await call(system, 'aggregate', { pipeline: [{ $group: { _id: '$secret' } }, { $sort: { _id: 1 } }] })).toEqual([{ _id: 'k7' }, { _id: 'q2' }]);
  });

  it('refuses the same inside a transaction, through the same path', async () => {
    await expect(inTransaction('count', { query: { secret: { $gte: 'm' } } })).rejects.toMatchObject(refusal);
    await expect(inTransaction('find', { sort: { secret: 1 } })).rejects.toMatchObject(refusal);
    expect(await inTransaction('find', { query: { title: 'a' } })).toEqual([{ _id: 1, title: 'a', meta: { public: 1 }, items: [{ label: 'x' }] }]);
  });
});

describe('a user watch', () => {
  const dir = makeTempDir('tessera-watch-rules-');
  const dataSources = new DataSources(loadSettings({ TESSERA_DATA_DIR: dir.path }));
  const dataAccess = new DataAccess(dataSources);
  const app = { id: 'watch', deploymentId: 'd1', config: appConfig() };
  const call = (caller: DataAccessCaller, action: string, args: Record<string, unknown>, collection = 'notes') =>
    dataAccess.execute({ app, service: 'mongodb-atlas', action, database: 'db', collection, args, caller });
  const watch = (args: Record<string, unknown>, collection = 'notes', caller = reader) =>
    dataAccess.watch({ app, service: 'mongodb-atlas', database: 'db', collection, args, caller: caller });

  afterAll(() => dir.remove());

  /** Collects the events of `feed` until `done` holds of them. */
  async function collect(feed: AsyncIterable<ChangeEvent>, write: () => Promise<void>, done: (events: ChangeEvent[]) => boolean): Promise<ChangeEvent[]> {
    const iterator = feed[Symbol.asyncIterator]();
    const events: ChangeEvent[] = [];
    await write();
    const deadline = Date.now() + 10_000;
    try {
      while (!done(events)) {
        const left = deadline - Date.now();
        const next = await Promise.race([iterator.next(), new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), Math.max(left, 0)))]);
        if (next === 'late') throw new Error(`only ${events.length} events within the deadline: ${JSON.stringify(events)}`);
        events.push(next.value);
      }
    } finally {
      await iterator.return?.();
    }
    return events;
  }

  it('refuses bad filters before the stream opens', () => {
    const refusal = { errorCode: 'InvalidParameter', httpStatus: 400 };
    expect(() => watch({ filter: { 'fullDocument.summary': { $foo: 1 } } })).toThrow(expect.objectContaining(refusal));
    expect(() => watch({ filter: { $where: 'true' } })).toThrow(expect.objectContaining(refusal));
    expect(() => watch({ filter: { 'fullDocument.secret': { $gte: 'm' } } })).toThrow(expect.objectContaining(refusal));
    expect(() => watch({ filter: { 'updateDescription.updatedFields.meta.hidden': 'x' } })).toThrow(expect.objectContaining(refusal));
    expect(() => watch({ filter: 'text' })).toThrow(expect.objectContaining(refusal));
  });

  it('passes change events through the field rules', async () => {
    await call(system, 'insertOne', { document: { _id: 10, title: 't', secret: 's0', gone: 1, other: 1 } });
    const events = await collect(
      watch({}),
      async () => {
        await call(system, 'updateOne', { query: { _id: 10 }, update: { $set: { secret: 's1', meta: { public: 0, hidden: 'h0' }, title: 't2' } } });
        await call(system, 'updateOne', { query: { _id: 10 }, update: { $set: { 'meta.public': 5, 'meta.hidden': 'h9' }, $unset: { gone: '', secret: '' } } });
        await call(system, 'findOneAndReplace', { filter: { _id: 10 }, update: { title: 'r', secret: 'sr' } });
      },
      (seen) => seen.length >= 3,
    );
    const [first, second, third] = events;
    expect(first.updateDescription).toEqual({ updatedFields: { meta: { public: 0 }, title: 't2' }, removedFields: [], truncatedArrays: [] });
    expect(first.fullDocument).toEqual({ _id: 10, title: 't2', gone: 1, other: 1, meta: { public: 0 } });
    expect(second.updateDescription).toEqual({ updatedFields: { 'meta.public': 5 }, removedFields: ['gone'], truncatedArrays: [] });
    expect(third.operationType).toBe('replace');
    expect(third.fullDocument).toEqual({ _id: 10, title: 'r' });
    for (const event of events) expect(JSON.stringify(event)).not.toMatch(/secret|hidden|s0|s1|h0|h9|sr/);
  });

  it('sends a delete only to users who could read the document, and filters after the rules', async () => {
    const owner: DataAccessCaller = { kind: 'user', user: { id: 'owner' } };
    const events = await collect(
      watch({ filter: { operationType: { $in: ['insert', 'delete'] } } }, 'private'),
      async () => {
        await call(owner, 'insertOne', { document: { _id: 'theirs', owner: 'owner' } }, 'private');
        await call(owner, 'deleteOne', { query: { _id: 'theirs' } }, 'private');
        await call(reader, 'insertOne', { document: { _id: 'mine', owner: 'reader' } }, 'private');
        await call(reader, 'deleteOne', { query: { _id: 'mine' } }, 'private');
      },
      (seen) => seen.length >= 2,
    );
    expect(events.map((event) => [event.operationType, event.documentKey?._id])).toEqual([
      ['insert', 'mine'],
      ['delete', 'mine'],
    ]);
    expect(events[1].fullDocument).toBeUndefined();
  });
});

describe('a user watch without pre-images (MongoDB without changeStreamPreAndPostImages)', () => {
  const rules = compileRules({
    roles: [
      { name: 'owner', apply_when: { owner: '%%user.id' }, fields: { secret: { read: false } }, additional_fields: { read: true } },
    ],
  });
  const base = { _id: { _data: '00' }, wallTime: new Date(0), ns: { db: 'db', coll: 'c' } };
  const feedOf = () => new UserChangeFeed(rules.forRequest({ user: { id: 'reader' } }), {}, () => ({}) as ChangeStream);

  it('sends a delete only for a document this stream showed as readable', async () => {
    const feed = feedOf();
    const mine = await feed.visible({ ...base, operationType: 'insert', documentKey: { _id: 1 }, fullDocument: { _id: 1, owner: 'reader', secret: 's' } });
    expect(mine?.fullDocument).toEqual({ _id: 1, owner: 'reader' });
    expect(await feed.visible({ ...base, operationType: 'insert', documentKey: { _id: 2 }, fullDocument: { _id: 2, owner: 'other' } })).toBeUndefined();
    expect(await feed.visible({ ...base, operationType: 'delete', documentKey: { _id: 2 } })).toBeUndefined();
    expect(await feed.visible({ ...base, operationType: 'delete', documentKey: { _id: 3 } })).toBeUndefined();
    expect((await feed.visible({ ...base, operationType: 'delete', documentKey: { _id: 1 } }))?.documentKey).toEqual({ _id: 1 });
    // Forgotten once deleted.
    expect(await feed.visible({ ...base, operationType: 'delete', documentKey: { _id: 1 } })).toBeUndefined();
  });

  it('keeps only removed fields readable in every document the user can see', async () => {
    const event: ChangeEvent = {
      ...base,
      operationType: 'update',
      documentKey: { _id: 1 },
      fullDocument: { _id: 1, owner: 'reader', title: 't' },
      updateDescription: { updatedFields: { title: 't' }, removedFields: ['secret', 'note'], truncatedArrays: [] },
    };
    expect((await feedOf().visible(event))?.updateDescription).toEqual({ updatedFields: { title: 't' }, removedFields: ['note'], truncatedArrays: [] });
  });
});
