import { makeTempDir } from '@tessera/testing';
import { type Collection, type Document, MongoClient, MongoServerError } from 'mongodb';
import { WireServer } from './wire-server';

interface Item {
  _id: number;
  owner: string;
  qty: number;
  tags?: string[];
}

/** The winning plan's stages, outermost first, and the index the IXSCAN names. */
function planOf(explained: Document): { stages: string[]; indexName?: string; keysExamined: number; docsExamined: number; returned: number } {
  const stages: string[] = [];
  let indexName: string | undefined;
  let stage = explained.queryPlanner.winningPlan as Document | undefined;
  while (stage) {
    stages.push(stage.stage as string);
    if (stage.indexName) indexName = stage.indexName as string;
    stage = (stage.inputStage ?? (stage.inputStages as Document[] | undefined)?.[0]) as Document | undefined;
  }
  const stats = explained.executionStats as Document;
  return { stages, indexName, keysExamined: stats.totalKeysExamined as number, docsExamined: stats.totalDocsExamined as number, returned: stats.nReturned as number };
}

// Indexes made through the wire server (createIndexes, listIndexes, dropIndexes) serve the embedded
// engine's queries: explain shows the plan and what it examined, so a 20-document query of a 2,000-document
// collection examines 20 documents once its field is indexed, and all of them before.
describe('indexes through the wire server', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let server: WireServer;
  let client: MongoClient;
  let items: Collection<Item>;

  beforeAll(async () => {
    dir = makeTempDir('tessera-wire-indexes-');
    server = await WireServer.start({ clustersDir: dir.path });
    client = new MongoClient(server.uri(), { serverSelectionTimeoutMS: 5000 });
    items = client.db('shop').collection<Item>('items');
    const docs: Item[] = [];
    for (let i = 0; i < 2000; i++) docs.push({ _id: i, owner: `u${i % 100}`, qty: i, tags: [`t${i % 7}`, `t${(i + 1) % 7}`] });
    await items.insertMany(docs);
  });

  afterAll(async () => {
    await client.close();
    await server.close();
    dir.remove();
  });

  it('scans the collection for an unindexed field, and the index once createIndexes made one', async () => {
    const before = planOf(await items.find({ owner: 'u7' }).explain('executionStats'));
    expect(before).toMatchObject({ stages: ['COLLSCAN'], docsExamined: 2000, returned: 20 });

    expect(await items.createIndex({ owner: 1 })).toBe('owner_1');
    const after = planOf(await items.find({ owner: 'u7' }).explain('executionStats'));
    expect(after).toEqual({ stages: ['FETCH', 'IXSCAN'], indexName: 'owner_1', keysExamined: 20, docsExamined: 20, returned: 20 });
    // The same 20 documents either way.
    expect((await items.find({ owner: 'u7' }).toArray()).map((d) => d._id)).toEqual(Array.from({ length: 20 }, (_, k) => 7 + 100 * k));
  });

  it('uses the index under the AND a rules filter adds, and for ranges, sorts and $in', async () => {
    await items.createIndex({ qty: -1 }, { name: 'by_qty' });
    const rules = planOf(await items.find({ $and: [{ qty: { $gte: 0 } }, { owner: 'u3' }] }).explain('executionStats'));
    expect(rules).toMatchObject({ stages: ['FETCH', 'IXSCAN'], indexName: 'owner_1', docsExamined: 20, returned: 20 });
    const range = planOf(await items.find({ qty: { $gte: 100, $lt: 110 } }).explain('executionStats'));
    expect(range).toMatchObject({ stages: ['FETCH', 'IXSCAN'], indexName: 'by_qty', docsExamined: 10, returned: 10 });
    const sorted = await items.find({}).sort({ qty: -1 }).limit(5).explain('executionStats');
    expect(planOf(sorted)).toMatchObject({ indexName: 'by_qty', docsExamined: 5, returned: 5 });
    const inList = planOf(await items.find({ owner: { $in: ['u1', 'u2'] } }).explain('executionStats'));
    expect(inList).toMatchObject({ indexName: 'owner_1', docsExamined: 40, returned: 40 });
    // An index over an array field (multikey) answers equality on an element.
    await items.createIndex({ tags: 1 });
    const multikey = planOf(await items.find({ tags: 't3' }).explain('executionStats'));
    expect(multikey.indexName).toBe('tags_1');
    expect(multikey.returned).toBe(await items.countDocuments({ tags: 't3' }));
    expect(multikey.docsExamined).toBe(multikey.returned);
  });

  it('answers IDHACK for _id equality, and queryPlanner verbosity without executing', async () => {
    const byId = await items.find({ _id: 42 }).explain('executionStats');
    expect(byId.queryPlanner.winningPlan).toEqual({ stage: 'IDHACK' });
    expect(byId.executionStats).toMatchObject({ nReturned: 1, totalDocsExamined: 1 });
    const planner = await items.find({ owner: 'u1' }).explain('queryPlanner');
    expect(planner.queryPlanner.winningPlan.inputStage).toMatchObject({ stage: 'IXSCAN', indexName: 'owner_1', keyPattern: { owner: 1 } });
    expect(planner.executionStats).toBeUndefined();
    // explain of count, as the shell's db.items.explain().count() sends it.
    const counted = await client.db('shop').command({ explain: { count: 'items', query: { owner: 'u5' } }, verbosity: 'executionStats' });
    expect(counted.executionStats).toMatchObject({ totalDocsExamined: 20 });
  });

  it('lists and drops indexes as MongoDB does, and refuses what it cannot explain or create', async () => {
    const listed = await items.listIndexes().toArray();
    expect(listed.map((index) => index.name)).toEqual(['_id_', 'owner_1', 'by_qty', 'tags_1']);
    expect(listed[2]).toMatchObject({ v: 2, key: { qty: -1 }, name: 'by_qty' });
    await items.dropIndex('tags_1');
    expect(planOf(await items.find({ tags: 't3' }).explain('executionStats')).stages).toEqual(['COLLSCAN']);
    const refused = await client
      .db('shop')
      .command({ explain: { listIndexes: 'items' } })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MongoServerError);
    expect((refused as MongoServerError).codeName).toBe('CommandNotSupported');
    const text = await items.createIndex({ owner: 'text' } as never).catch((error: unknown) => error);
    expect(text).toBeInstanceOf(MongoServerError);
    // A unique index over duplicate values is refused, and nothing is left behind.
    const unique = await items.createIndex({ owner: 1, qty: 1 }, { unique: true, name: 'owner_qty' }).then(
      () => 'created',
      (error: unknown) => error,
    );
    expect(unique).toBe('created');
    const dup = await items.createIndex({ owner: 1 }, { unique: true, name: 'owner_unique' }).catch((error: unknown) => error);
    expect(dup).toBeInstanceOf(MongoServerError);
    expect((dup as MongoServerError).code).toBe(11000);
    expect((await items.listIndexes().toArray()).map((index) => index.name)).not.toContain('owner_unique');
    // mongorestore sends each index with the `ns` old servers kept: the matching one is accepted, another refused.
    const shop = client.db('shop');
    await shop.command({ createIndexes: 'items', indexes: [{ v: 2, key: { qty: 1 }, name: 'qty_1', ns: 'shop.items' }] });
    const foreign = await shop.command({ createIndexes: 'items', indexes: [{ key: { qty: 1, owner: 1 }, name: 'x', ns: 'other.items' }] }).catch((error: unknown) => error);
    expect((foreign as MongoServerError).codeName).toBe('BadValue');
    expect((await items.listIndexes().toArray()).map((index) => index.name)).toContain('qty_1');
  });

  it('answers collStats with counts and sizes (mongodump asks it), and refuses it on a view', async () => {
    const shop = client.db('shop');
    const stats = await shop.command({ collStats: 'items' });
    expect(stats).toMatchObject({ ns: 'shop.items', count: 2000, ok: 1 });
    expect(stats.size).toBeGreaterThan(2000 * 30);
    expect(stats.nindexes).toBe((await items.listIndexes().toArray()).length);
    expect(stats.numExtents).toBeUndefined();
    await shop.createCollection('items_view', { viewOn: 'items', pipeline: [] });
    const refused = await shop.command({ collStats: 'items_view' }).catch((error: unknown) => error);
    expect((refused as MongoServerError).code).toBe(166);
  });

  it("accepts the simple collation everywhere, and answers a locale's with an index of the same collation", async () => {
    const simple = { locale: 'simple' };
    expect(await items.countDocuments({ owner: 'u1' }, { collation: simple })).toBe(20);
    expect(await items.find({ owner: 'u1' }, { collation: simple }).toArray()).toHaveLength(20);
    expect(await items.distinct('owner', { qty: { $lt: 3 } }, { collation: simple })).toEqual(['u0', 'u1', 'u2']);
    expect((await items.updateMany({ owner: 'u1' }, { $set: { seen: true } }, { collation: simple })).modifiedCount).toBe(20);
    expect(await items.createIndex({ seen: 1 }, { collation: simple })).toBe('seen_1');
    // owner_1 holds binary order: a case-insensitive query does not use it for a string, and finds all 20.
    const insensitive = { locale: 'en', strength: 2 };
    expect(await items.find({ owner: 'U1' }, { collation: insensitive }).toArray()).toHaveLength(20);
    expect(planOf(await items.find({ owner: 'U1' }, { collation: insensitive }).explain('executionStats'))).toMatchObject({ stages: ['COLLSCAN'], returned: 20 });
    expect(await items.find({ owner: 'U1' }).toArray()).toHaveLength(0);
    // A number compares alike in every collation: the binary by_qty answers a collated query on qty.
    expect(planOf(await items.find({ qty: { $lt: 5 } }, { collation: insensitive }).explain('executionStats'))).toMatchObject({ stages: ['FETCH', 'IXSCAN'], indexName: 'by_qty', returned: 5 });
    // An index with the query's collation answers it (written in the other key order: the same collation).
    expect(await items.createIndex({ owner: 1 }, { name: 'owner_ci', collation: { strength: 2, locale: 'en' } })).toBe('owner_ci');
    expect(planOf(await items.find({ owner: 'U1' }, { collation: insensitive }).explain('executionStats'))).toEqual({ stages: ['FETCH', 'IXSCAN'], indexName: 'owner_ci', keysExamined: 20, docsExamined: 20, returned: 20 });
    expect(planOf(await items.find({ owner: 'u1' }).explain('executionStats'))).toMatchObject({ indexName: 'owner_1', returned: 20 });
    expect((await items.listIndexes().toArray()).find((i) => i.name === 'owner_ci')).toMatchObject({ key: { owner: 1 }, collation: { locale: 'en', strength: 2 } });
    await items.dropIndex('owner_ci');
    const missing = await client.db('shop').command({ find: 'items', collation: { strength: 2 } }).catch((error: unknown) => error);
    expect((missing as MongoServerError).code).toBe(40414);
    expect(await items.countDocuments({ owner: 'u1' })).toBe(20);
  });

  it('explains an aggregate, update, delete, findAndModify and distinct with the planner\'s plan, and never writes', async () => {
    const db = client.db('shop');
    const explain = (command: Document) => db.command({ explain: command, verbosity: 'executionStats' });
    const aggregated = await items.aggregate([{ $match: { owner: 'u7' } }, { $group: { _id: '$owner', n: { $sum: 1 } } }]).explain('executionStats');
    const stages = aggregated.stages as Document[];
    expect(planOf(stages[0].$cursor as Document)).toEqual({ stages: ['FETCH', 'IXSCAN'], indexName: 'owner_1', keysExamined: 20, docsExamined: 20, returned: 20 });
    expect(stages.slice(1)).toEqual([{ $group: { _id: '$owner', n: { $sum: 1 } } }]);

    const updated = await explain({ update: 'items', updates: [{ q: { owner: 'u7' }, u: { $set: { qty: -1 } }, multi: true }] });
    expect(planOf(updated)).toMatchObject({ stages: ['UPDATE', 'FETCH', 'IXSCAN'], indexName: 'owner_1', docsExamined: 20, returned: 0 });
    expect(updated.executionStats.executionStages).toMatchObject({ stage: 'UPDATE', nMatched: 20 });
    const deleted = await explain({ delete: 'items', deletes: [{ q: { qty: { $lt: 5 } }, limit: 0 }] });
    expect(planOf(deleted)).toMatchObject({ stages: ['DELETE', 'FETCH', 'IXSCAN'], indexName: 'by_qty', docsExamined: 5, returned: 0 });
    expect(deleted.executionStats.executionStages).toMatchObject({ stage: 'DELETE', nWouldDelete: 5 });
    const one = await explain({ findAndModify: 'items', query: { owner: 'u3' }, remove: true });
    expect(planOf(one)).toMatchObject({ stages: ['DELETE', 'FETCH', 'IXSCAN'], returned: 0 });
    expect(one.executionStats.executionStages).toMatchObject({ nWouldDelete: 1 });
    expect(planOf(await explain({ distinct: 'items', key: 'qty', query: { owner: 'u9' } }))).toMatchObject({ stages: ['FETCH', 'IXSCAN'], returned: 20 });

    // Explained writes were planned only: every document is still there, unchanged.
    expect(await items.countDocuments({})).toBe(2000);
    expect(await items.countDocuments({ qty: -1 })).toBe(0);
    const refused = await explain({ aggregate: 1, pipeline: [{ $documents: [] }], cursor: {} }).catch((error: unknown) => error);
    expect((refused as MongoServerError).code).toBe(115);
  });
});
