import { emptyApp, type AppConfig } from '@tessera/app-config';
import { DataSources } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';
import { BSONRegExp, Int32, Long, ObjectId } from 'bson';
import { DataAccess, type DataAccessCaller, type DataAccessRequest } from './data-access.service';

const alice: DataAccessCaller = { kind: 'user', user: { id: 'alice' } };
const bob: DataAccessCaller = { kind: 'user', user: { id: 'bob' } };
const admin: DataAccessCaller = { kind: 'user', user: { id: 'root', custom_data: { isAdmin: true } } };
const system: DataAccessCaller = { kind: 'system' };

function appConfig(): AppConfig {
  const app = emptyApp('rules-test');
  app.services.push(
    {
      config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } },
      collectionRules: [
        {
          database: 'todo',
          collection: 'items',
          roles: [
            { name: 'admin', apply_when: { '%%user.custom_data.isAdmin': true }, read: true, write: true },
            {
              name: 'owner',
              apply_when: { owner_id: '%%user.id' },
              read: true,
              // The role is chosen on the stored document; the write expression sees the result (%%root).
              write: { owner_id: '%%user.id' },
              insert: true,
              delete: { '%%root.locked': { $ne: true } },
            },
            {
              name: 'shared',
              apply_when: { shared: true },
              fields: { summary: { read: true }, owner_id: { read: true } },
              additional_fields: { read: false, write: false },
            },
          ],
          filters: [{ name: 'not-archived', apply_when: {}, query: { archived: { $ne: true } } }],
        },
      ],
      rules: [],
      webhooks: [],
    },
    { config: { name: 'lake', type: 'datalake', config: { dataLakeName: 'Lake0' } }, collectionRules: [], rules: [], webhooks: [] },
  );
  return app;
}

describe('DataAccess', () => {
  const dir = makeTempDir('tessera-data-access-');
  const dataSources = new DataSources(loadSettings({ TESSERA_DATA_DIR: dir.path }));
  const dataAccess = new DataAccess(dataSources);
  const app = { id: 'app1', deploymentId: 'd1', config: appConfig() };
  const call = (caller: DataAccessCaller, action: string, args: Record<string, unknown> = {}, extra: Partial<DataAccessRequest> = {}) =>
    dataAccess.execute({ app, service: 'mongodb-atlas', action, database: 'todo', collection: 'items', args, caller, ...extra });
  const stored = () => call(system, 'find', { sort: { _id: 1 } }) as Promise<Record<string, unknown>[]>;

  beforeEach(async () => {
    await call(system, 'deleteMany', {});
    await call(system, 'insertMany', {
      documents: [
        { _id: 1, owner_id: 'alice', summary: 'a1', secret: 'x' },
        { _id: 2, owner_id: 'alice', summary: 'a2', locked: true },
        { _id: 3, owner_id: 'bob', summary: 'b1', shared: true, secret: 'y' },
        { _id: 4, owner_id: 'bob', summary: 'b2' },
        { _id: 5, owner_id: 'alice', summary: 'old', archived: true },
      ],
    });
  });

  afterAll(async () => {
    await dataSources.closeAll();
    dir.remove();
  });

  it('hides documents no role applies to and withholds unreadable fields', async () => {
    const docs = await call(alice, 'find', { sort: { _id: 1 } });
    expect(docs).toEqual([
      { _id: 1, owner_id: 'alice', summary: 'a1', secret: 'x' },
      { _id: 2, owner_id: 'alice', summary: 'a2', locked: true },
      { _id: 3, owner_id: 'bob', summary: 'b1' },
    ]);
  });

  it('never hands out a stored document: changing what a find returned changes nothing stored', async () => {
    await call(system, 'insertMany', {
      documents: [
        { _id: 6, owner_id: 'alice', summary: 'nested', tags: ['t'], meta: { n: 1 } },
        { _id: 7, owner_id: 'bob', shared: true, summary: { text: 'shared' }, secret: 'z' },
      ],
    });
    const before = await stored();
    const results = [
      ...((await call(alice, 'find', { sort: { _id: 1 } })) as Record<string, unknown>[]),
      ...((await call(alice, 'find', { query: { _id: { $in: [6, 7] } }, project: { tags: 1, meta: 1, summary: 1 } })) as Record<string, unknown>[]),
      (await call(alice, 'findOne', { query: { _id: 7 } })) as Record<string, unknown>,
    ];
    expect(results.map((doc) => doc['_id'])).toEqual([1, 2, 3, 6, 7, 6, 7, 7]);
    for (const doc of results) {
      if (Array.isArray(doc['tags'])) (doc['tags'] as unknown[]).push('changed');
      if (doc['meta']) (doc['meta'] as Record<string, unknown>)['n'] = 2;
      if (typeof doc['summary'] === 'object') (doc['summary'] as Record<string, unknown>)['text'] = 'changed';
      else doc['summary'] = 'changed';
    }
    expect(await stored()).toEqual(before);
  });

  it('traces every read decision when asked, and answers the same documents', async () => {
    const traces: { operation: string; role: string | null; withheldFields: string[] }[] = [];
    const traced = new DataAccess(dataSources, { onTrace: (trace) => traces.push(trace) });
    const docs = await traced.execute({ app, service: 'mongodb-atlas', action: 'find', database: 'todo', collection: 'items', args: { sort: { _id: 1 } }, caller: alice });
    expect(docs).toEqual(await call(alice, 'find', { sort: { _id: 1 } }));
    expect(traces[0]).toMatchObject({ operation: 'filters' });
    const reads = traces.filter((trace) => trace.operation === 'read');
    expect(reads.map((trace) => trace.role)).toContain('owner');
    expect(reads.find((trace) => trace.role === 'shared')?.withheldFields).toEqual(['shared', 'secret']);
  });

  it("gives a rule's %function the correlation id and trace context of the request", async () => {
    const calls: unknown[] = [];
    const gated = new DataAccess(dataSources, {
      callFunction: (appId, name, args, headers) => {
        calls.push({ appId, name, args, headers });
        return Promise.resolve(true);
      },
    });
    const config = appConfig();
    config.services[0]?.collectionRules.push({ database: 'todo', collection: 'gated', roles: [{ name: 'asked', apply_when: { '%%true': { '%function': { name: 'allowed', arguments: ['%%user.id'] } } }, read: true, write: true }] });
    const request = { app: { id: 'app1', deploymentId: 'd-gated', config }, service: 'mongodb-atlas', database: 'todo', collection: 'gated' };
    await gated.execute({ ...request, action: 'insertOne', args: { document: { _id: 'g1' } }, caller: system });
    expect(await gated.execute({ ...request, action: 'find', args: {}, caller: alice, headers: { 'x-correlation-id': 'corr-7' } })).toEqual([{ _id: 'g1' }]);
    expect(calls[0]).toEqual({ appId: 'app1', name: 'allowed', args: ['alice'], headers: { 'x-correlation-id': 'corr-7' } });
  });

  it('applies filters so a filtered-out document never appears, even to its owner', async () => {
    expect(await call(alice, 'findOne', { query: { _id: 5 } })).toBeNull();
    expect(await call(system, 'findOne', { query: { _id: 5 } })).toMatchObject({ summary: 'old' });
  });

  it('lets a system caller see everything', async () => {
    expect((await stored()).map((doc) => doc['_id'])).toEqual([1, 2, 3, 4, 5]);
  });

  it('counts, limits, projects and aggregates over visible documents only', async () => {
    expect(await call(bob, 'count', {})).toEqual(Long.fromNumber(2));
    expect(await call(alice, 'find', { sort: { _id: -1 }, limit: 2, project: { summary: 1 } })).toEqual([
      { _id: 3, summary: 'b1' },
      { _id: 2, summary: 'a2' },
    ]);
    expect(await call(alice, 'aggregate', { pipeline: [{ $group: { _id: '$owner_id', n: { $sum: 1 } } }, { $sort: { _id: 1 } }] })).toEqual([
      { _id: 'alice', n: 2 },
      { _id: 'bob', n: 1 },
    ]);
    expect(await call(alice, 'distinct', { key: 'owner_id' })).toEqual(['alice', 'bob']);
  });

  it('inserts a document the user may write and refuses one it may not, writing nothing', async () => {
    const inserted = (await call(alice, 'insertOne', { document: { owner_id: 'alice', summary: 'new' } })) as { insertedId: unknown };
    expect(inserted.insertedId).toBeInstanceOf(ObjectId);
    await expect(call(alice, 'insertOne', { document: { _id: 9, owner_id: 'bob', summary: 'forged' } })).rejects.toMatchObject({ errorCode: 'SchemaValidationFailedWrite' });
    expect((await stored()).some((doc) => doc['_id'] === 9)).toBe(false);
  });

  it('updates own documents with exact result widths and refuses updates to others', async () => {
    expect(await call(alice, 'updateOne', { query: { _id: 1 }, update: { $set: { summary: 'edited' } } })).toEqual({ matchedCount: new Int32(1), modifiedCount: new Int32(1) });
    // bob's shared document is readable to alice but not writable: refused, unchanged.
    const before = await stored();
    await expect(call(alice, 'updateMany', { query: {}, update: { $set: { touched: true } } })).rejects.toMatchObject({ errorCode: 'SchemaValidationFailedWrite' });
    expect(await stored()).toEqual(before);
    // bob's private document is invisible to alice: not matched at all.
    expect(await call(alice, 'updateOne', { query: { _id: 4 }, update: { $set: { summary: 'x' } } })).toEqual({ matchedCount: new Int32(0), modifiedCount: new Int32(0) });
  });

  it('refuses an update that moves a document out of the user’s ownership', async () => {
    await expect(call(alice, 'updateOne', { query: { _id: 1 }, update: { $set: { owner_id: 'bob' } } })).rejects.toMatchObject({ errorCode: 'SchemaValidationFailedWrite' });
    expect((await stored())[0]).toMatchObject({ owner_id: 'alice' });
  });

  it('upserts through the insert check', async () => {
    const result = (await call(alice, 'updateOne', { query: { _id: 20, owner_id: 'alice' }, update: { $set: { summary: 'up' } }, upsert: true })) as Record<string, unknown>;
    expect(result).toEqual({ matchedCount: new Int32(0), modifiedCount: new Int32(0), upsertedId: 20 });
    await expect(call(alice, 'updateOne', { query: { _id: 21, owner_id: 'bob' }, update: { $set: { summary: 'up' } }, upsert: true })).rejects.toMatchObject({ errorCode: 'SchemaValidationFailedWrite' });
  });

  it('evaluates the delete permission against the stored document', async () => {
    expect(await call(alice, 'deleteOne', { query: { _id: 1 } })).toEqual({ deletedCount: new Int32(1) });
    await expect(call(alice, 'deleteOne', { query: { _id: 2 } })).rejects.toMatchObject({ errorCode: 'SchemaValidationFailedWrite' });
    expect((await stored()).map((doc) => doc['_id'])).toEqual([2, 3, 4, 5]);
  });

  it('runs a user bulkWrite as its single writes under the same rules: ordered stops at a refusal, unordered goes on', async () => {
    const operations = [
      { insertOne: { document: { _id: 10, owner_id: 'alice', summary: 'bulk' } } },
      { updateOne: { filter: { _id: 1 }, update: { $set: { summary: 'bulk-edit' } } } },
      { replaceOne: { filter: { _id: 10 }, replacement: { owner_id: 'alice', summary: 'replaced' } } },
      { deleteOne: { filter: { _id: 10 } } },
      { insertOne: { document: { _id: 11, owner_id: 'alice' } } },
    ];
    expect(await call(alice, 'bulkWrite', { operations, ordered: true })).toBeNull();
    expect((await stored()).filter((doc) => [1, 10, 11].includes(doc['_id'] as number))).toEqual([
      { _id: 1, owner_id: 'alice', summary: 'bulk-edit', secret: 'x' },
      { _id: 11, owner_id: 'alice' },
    ]);
    // A write the rules refuse (bob's document) stops an ordered bulk there; the write after it never runs.
    const refused = [{ insertOne: { document: { _id: 12, owner_id: 'alice' } } }, { insertOne: { document: { _id: 13, owner_id: 'bob' } } }, { insertOne: { document: { _id: 14, owner_id: 'alice' } } }];
    await expect(call(alice, 'bulkWrite', { operations: refused, ordered: true })).rejects.toMatchObject({ errorCode: 'SchemaValidationFailedWrite' });
    expect((await stored()).map((doc) => doc['_id'])).toEqual([1, 2, 3, 4, 5, 11, 12]);
    // Unordered: every write is tried, the refusal is reported after them.
    const unordered = refused.map((op) => ({ insertOne: { document: { ...op.insertOne.document, _id: op.insertOne.document._id + 10 } } }));
    await expect(call(alice, 'bulkWrite', { operations: unordered, ordered: false })).rejects.toMatchObject({ errorCode: 'SchemaValidationFailedWrite' });
    expect((await stored()).map((doc) => doc['_id'])).toEqual([1, 2, 3, 4, 5, 11, 12, 22, 24]);
    // An upsert in a bulk goes through the insert check: alice cannot create bob's document either way.
    for (const operation of [{ updateOne: { filter: { _id: 30, owner_id: 'bob' }, update: { $set: { summary: 'x' } }, upsert: true } }, { replaceOne: { filter: { _id: 31 }, replacement: { owner_id: 'bob' }, upsert: true } }]) {
      await expect(call(alice, 'bulkWrite', { operations: [operation] })).rejects.toMatchObject({ errorCode: 'SchemaValidationFailedWrite' });
    }
    // An operation of another kind, or a replaceOne without its replacement (which would delete), is refused.
    await expect(call(alice, 'bulkWrite', { operations: [{ dropCollection: {} }] })).rejects.toMatchObject({ errorCode: 'InvalidParameter' });
    await expect(call(alice, 'bulkWrite', { operations: [{ replaceOne: { filter: { _id: 1 } } }] })).rejects.toMatchObject({ errorCode: 'InvalidParameter' });
    expect((await stored()).map((doc) => doc['_id'])).toEqual([1, 2, 3, 4, 5, 11, 12, 22, 24]);
  });

  it('runs the find-and-modify family under rules', async () => {
    expect(await call(alice, 'findOneAndUpdate', { filter: { _id: 1 }, update: { $set: { summary: 'n' } }, returnNewDocument: true })).toMatchObject({ _id: 1, summary: 'n' });
    expect(await call(alice, 'findOneAndReplace', { filter: { _id: 1 }, update: { owner_id: 'alice', summary: 'r' } })).toMatchObject({ _id: 1, summary: 'n' });
    // realm-web sends findOneAndDelete as findOneAndReplace without an update.
    expect(await call(alice, 'findOneAndReplace', { filter: { _id: 1 } })).toMatchObject({ _id: 1, summary: 'r' });
    expect(await call(alice, 'findOneAndDelete', { filter: { _id: 4 } })).toBeNull();
    expect((await stored()).map((doc) => doc['_id'])).toEqual([2, 3, 4, 5]);
  });

  it('gives the admin role full access through custom user data', async () => {
    expect(await call(admin, 'count', {})).toEqual(Long.fromNumber(4));
  });

  it('refuses restricted selectors, stages, listings and federated sources to users only', async () => {
    await expect(call(alice, 'find', { query: { $where: 'true' } })).rejects.toMatchObject({ errorCode: 'InvalidParameter' });
    await expect(call(alice, 'find', { query: {}, collation: { locale: 'en', strength: 2 } })).rejects.toMatchObject({ errorCode: 'InvalidParameter', message: expect.stringMatching(/collation/) });
    await expect(call(admin, 'count', { query: {}, collation: 'en' })).rejects.toMatchObject({ errorCode: 'InvalidParameter' });
    expect(await call(admin, 'count', { query: {}, collation: { locale: 'simple' } })).toEqual(Long.fromNumber(4));
    await expect(call(alice, 'aggregate', { pipeline: [{ $lookup: { from: 'users', localField: 'owner_id', foreignField: '_id', as: 'u' } }] })).rejects.toMatchObject({ errorCode: 'InvalidParameter' });
    for (const pipeline of [
      [{ $out: 'copy' }],
      [{ $merge: { into: 'copy' } }],
      [{ $facet: { nested: [{ $lookup: { from: 'users', localField: 'owner_id', foreignField: '_id', as: 'u' } }] } }],
      [{ $facet: { nested: [{ $unionWith: 'users' }] } }],
    ]) {
      await expect(call(alice, 'aggregate', { pipeline })).rejects.toMatchObject({ errorCode: 'InvalidParameter', message: expect.stringMatching(/only allowed in a system function/) });
    }
    expect(await call(system, 'aggregate', { pipeline: [{ $match: { _id: { $lte: 2 } } }, { $project: { summary: 1 } }, { $out: 'copy' }] })).toEqual([]);
    const all = (await stored()).length;
    expect(await call(system, 'aggregate', { pipeline: [{ $facet: { n: [{ $unionWith: 'copy' }, { $count: 'n' }] } }] })).toEqual([{ n: [{ n: all + 2 }] }]);
    await expect(call(alice, 'getDBNames')).rejects.toMatchObject({ errorCode: 'ExecutionPermissionDenied' });
    expect(await call(system, 'getDBNames')).toContain('todo');
    expect(await call(system, 'find', { query: { summary: { $regex: '^a' } } })).toHaveLength(2);
    await expect(call(alice, 'find', {}, { service: 'lake' })).rejects.toMatchObject({ errorCode: 'ExecutionPermissionDenied' });
    await expect(call(alice, 'explode', {})).rejects.toMatchObject({ errorCode: 'ServiceCommandNotFound' });
    await expect(call(alice, 'find', {}, { service: 'nope' })).rejects.toMatchObject({ errorCode: 'ServiceNotFound' });
  });

  it('lets users search with a regex, in any spelling, within the documents they may read', async () => {
    const ids = async (query: Record<string, unknown>) => ((await call(alice, 'find', { query })) as { _id: unknown }[]).map((doc) => doc._id);
    expect(await ids({ summary: { $regex: '^a' } })).toEqual([1, 2]);
    expect(await ids({ summary: new BSONRegExp('^B', 'i') })).toEqual([3]);
    expect(await ids({ summary: { $regex: /^[ab]/, $nin: ['a2'] } })).toEqual([1, 3]);
    await expect(call(alice, 'find', { query: { summary: { $regex: '(' } } })).rejects.toMatchObject({ code: 51091, httpStatus: 400 });
  });

  it('fails with NoMatchingRuleFound on a collection without rules', async () => {
    await expect(call(alice, 'find', {}, { collection: 'unruled' })).rejects.toMatchObject({ errorCode: 'NoMatchingRuleFound' });
  });
});
