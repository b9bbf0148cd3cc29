import { makeTempDir } from '@tessera/testing';
import { type Collection, MongoClient, MongoServerError } from 'mongodb';
import { WireServer } from './wire-server';

interface Word {
  _id: number;
  w: string | number | null;
  tags?: string[];
}

/** The error an operation failed with (it must fail). */
async function failure(work: () => Promise<unknown>): Promise<MongoServerError> {
  const error = await work().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MongoServerError);
  return error as MongoServerError;
}

// Collations through the official driver: strings compare by the locale's rules (ICU), other types keep
// BSON order, on every operation that takes one.
describe('collation through the wire server', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let server: WireServer;
  let client: MongoClient;
  let words: Collection<Word>;

  beforeEach(async () => {
    dir = makeTempDir('tessera-wire-collation-');
    server = await WireServer.start({ clustersDir: dir.path });
    client = new MongoClient(server.uri(), { serverSelectionTimeoutMS: 5000 });
    words = client.db('d').collection<Word>('words');
    await words.insertMany([
      { _id: 1, w: 'cafe' },
      { _id: 2, w: 'Cafe' },
      { _id: 3, w: 'café' },
      { _id: 4, w: 'CAFÉ' },
      { _id: 5, w: 'tea' },
      { _id: 6, w: 10 },
      { _id: 7, w: null },
      { _id: 8, w: 'x', tags: ['Red', 'green'] },
    ]);
  });

  afterEach(async () => {
    await client.close();
    await server.close();
    dir.remove();
  });

  const ids = (docs: Word[]): number[] => docs.map((d) => d._id).sort((a, b) => a - b);

  it('strength 2 ignores case, strength 1 case and accents, the default (3) neither', async () => {
    expect(ids(await words.find({ w: 'cafe' }, { collation: { locale: 'en', strength: 2 } }).toArray())).toEqual([1, 2]);
    expect(ids(await words.find({ w: 'cafe' }, { collation: { locale: 'en', strength: 1 } }).toArray())).toEqual([1, 2, 3, 4]);
    expect(ids(await words.find({ w: 'cafe' }, { collation: { locale: 'en' } }).toArray())).toEqual([1]);
    expect(ids(await words.find({ w: 'CAFE' }).toArray())).toEqual([]);
    // $in, $ne, ranges and array elements by the collator; other types keep BSON order.
    expect(ids(await words.find({ w: { $in: ['CAFE', 'TEA'] } }, { collation: { locale: 'fr', strength: 2 } }).toArray())).toEqual([1, 2, 5]);
    expect(ids(await words.find({ w: { $gte: 'CAFE', $lt: 'CAFF' } }, { collation: { locale: 'en', strength: 1 } }).toArray())).toEqual([1, 2, 3, 4]);
    expect(ids(await words.find({ tags: 'RED' }, { collation: { locale: 'en', strength: 2 } }).toArray())).toEqual([8]);
    expect(ids(await words.find({ w: { $ne: 'CAFE' } }, { collation: { locale: 'en', strength: 1 } }).toArray())).toEqual([5, 6, 7, 8]);
    expect(ids(await words.find({ w: { $gt: 5 } }, { collation: { locale: 'en', strength: 1 } }).toArray())).toEqual([6]);
  });

  it('counts, distinct values, aggregates, updates, deletes and findAndModify under a collation', async () => {
    const ci = { locale: 'en_US', strength: 2 };
    expect(await words.countDocuments({ w: 'CAFE' }, { collation: ci })).toBe(2);
    expect(await client.db('d').command({ count: 'words', query: { w: 'CAFÉ' }, collation: ci })).toMatchObject({ n: 2 });
    const distinct = await words.distinct('w', { _id: { $lte: 5 } }, { collation: ci });
    expect(distinct).toHaveLength(3);
    expect(distinct).toEqual(expect.arrayContaining(['tea']));
    const grouped = await words.aggregate([{ $match: { w: 'CAFE' } }, { $sort: { _id: 1 } }, { $project: { _id: 1 } }], { collation: ci }).toArray();
    expect(grouped).toEqual([{ _id: 1 }, { _id: 2 }]);
    // $group and $sortByCount keys compare by the collation: cafe/Cafe and café/CAFÉ are two keys, not four.
    const counted = await words.aggregate([{ $match: { _id: { $lte: 5 } } }, { $sort: { _id: 1 } }, { $sortByCount: '$w' }, { $sort: { count: -1, _id: 1 } }], { collation: ci }).toArray();
    expect(counted).toEqual([
      { _id: 'cafe', count: 2 },
      { _id: 'café', count: 2 },
      { _id: 'tea', count: 1 },
    ]);
    expect((await words.updateMany({ w: 'CAFÉ' }, { $set: { tags: ['hot'] } }, { collation: ci })).modifiedCount).toBe(2);
    expect(ids(await words.find({ tags: 'hot' }).toArray())).toEqual([3, 4]);
    const before = await words.findOneAndUpdate({ w: 'TEA' }, { $set: { w: 'green tea' } }, { collation: ci });
    expect(before).toMatchObject({ _id: 5, w: 'tea' });
    expect((await words.deleteMany({ w: 'cafe' }, { collation: { locale: 'de', strength: 1 } })).deletedCount).toBe(4);
    expect(ids(await words.find({}).toArray())).toEqual([5, 6, 7, 8]);
    const bulk = await words.bulkWrite([{ updateOne: { filter: { w: 'GREEN TEA' }, update: { $set: { hot: true } }, collation: ci } }, { deleteOne: { filter: { w: 'X' }, collation: ci } }]);
    expect(bulk).toMatchObject({ modifiedCount: 1, deletedCount: 1 });
  });

  it('compares strings by the collation in $not, $all, $elemMatch, $expr, aggregation expressions and $lookup', async () => {
    const ci = { locale: 'en', strength: 2 };
    expect(ids(await words.find({ w: { $not: { $eq: 'cafe' } }, _id: { $lte: 5 } }, { collation: ci }).toArray())).toEqual([3, 4, 5]);
    expect(ids(await words.find({ tags: { $all: ['red', 'GREEN'] } }, { collation: ci }).toArray())).toEqual([8]);
    expect(ids(await words.find({ tags: { $all: ['red', 'GREEN'] } }).toArray())).toEqual([]);
    expect(ids(await words.find({ tags: { $elemMatch: { $eq: 'RED' } } }, { collation: ci }).toArray())).toEqual([8]);
    expect(ids(await words.find({ $expr: { $eq: ['$w', 'CAFÉ'] } }, { collation: ci }).toArray())).toEqual([3, 4]);
    const project = { _id: 0, has: { $in: ['RED', '$tags'] }, max: { $max: '$tags' }, subset: { $setIsSubset: [['GREEN'], '$tags'] } };
    expect(await words.aggregate([{ $match: { _id: 8 } }, { $project: project }], { collation: ci }).toArray()).toEqual([{ has: true, max: 'Red', subset: true }]);
    expect(await words.aggregate([{ $match: { _id: 8 } }, { $project: project }]).toArray()).toEqual([{ has: false, max: 'green', subset: false }]);
    const menu = client.db('d').collection<{ _id: number; item: string }>('menu');
    await menu.insertOne({ _id: 1, item: 'CAFE' });
    const lookup = { $lookup: { from: 'words', localField: 'item', foreignField: 'w', as: 'matches' } };
    const [joined] = await menu.aggregate<{ matches: Word[] }>([lookup], { collation: { locale: 'en', strength: 1 } }).toArray();
    expect(ids(joined.matches)).toEqual([1, 2, 3, 4]);
  });

  it('updates by the collation: $addToSet, $pull, $min and array filters', async () => {
    const ci = { locale: 'en', strength: 2 };
    expect(await words.updateOne({ _id: 8 }, { $addToSet: { tags: 'RED' } }, { collation: ci })).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
    expect(await words.updateOne({ _id: 8 }, { $pull: { tags: 'GREEN' } }, { collation: ci })).toMatchObject({ modifiedCount: 1 });
    expect(await words.findOne({ _id: 8 })).toMatchObject({ tags: ['Red'] });
    // 'X' equals 'x' at strength 2: $min keeps 'x'; in binary order 'X' < 'x' replaces it.
    expect(await words.updateOne({ _id: 8 }, { $min: { w: 'X' } }, { collation: ci })).toMatchObject({ modifiedCount: 0 });
    expect(await words.updateOne({ _id: 8 }, { $min: { w: 'X' } })).toMatchObject({ modifiedCount: 1 });
    await words.updateOne({ _id: 8 }, { $set: { 'tags.$[t]': 'blue' } }, { collation: ci, arrayFilters: [{ t: 'red' }] });
    expect(await words.findOne({ _id: 8 })).toMatchObject({ w: 'X', tags: ['blue'] });
  });

  it('sorts by the collation: numericOrdering, caseFirst upper, accents after base letters', async () => {
    const numbers = client.db('d').collection<{ _id: number; n: string }>('numbers');
    await numbers.insertMany([{ _id: 1, n: '10' }, { _id: 2, n: '2' }, { _id: 3, n: '1' }]);
    const numeric = await numbers.find({}, { sort: { n: 1 }, collation: { locale: 'en', numericOrdering: true } }).toArray();
    expect(numeric.map((d) => d.n)).toEqual(['1', '2', '10']);
    const binary = await numbers.find({}, { sort: { n: 1 } }).toArray();
    expect(binary.map((d) => d.n)).toEqual(['1', '10', '2']);
    const upper = await words.find({ _id: { $lte: 2 } }, { sort: { w: 1 }, collation: { locale: 'en', caseFirst: 'upper' } }).toArray();
    expect(upper.map((d) => d.w)).toEqual(['Cafe', 'cafe']);
    const lower = await words.find({ _id: { $lte: 2 } }, { sort: { w: 1 }, collation: { locale: 'en', caseFirst: 'lower' } }).toArray();
    expect(lower.map((d) => d.w)).toEqual(['cafe', 'Cafe']);
    // Other types keep BSON order around the strings (null < numbers < strings); binary order puts 'Cafe' first.
    const sorted = await words.find({}, { sort: { w: 1, _id: 1 }, collation: { locale: 'en' } }).toArray();
    expect(sorted.map((d) => d._id)).toEqual([7, 6, 1, 2, 3, 4, 5, 8]);
    const aggregated = await numbers.aggregate([{ $sort: { n: -1 } }], { collation: { locale: 'en', numericOrdering: true } }).toArray();
    expect(aggregated.map((d) => d.n)).toEqual(['10', '2', '1']);
  });

  it("refuses an unknown locale, bad fields and what ICU cannot do, with MongoDB's codes", async () => {
    const unknown = await failure(() => words.find({ w: 'cafe' }, { collation: { locale: 'xx_YY' } }).toArray());
    expect(unknown.code).toBe(2);
    expect(unknown.message).toMatch(/Field 'locale' is invalid/);
    expect((await failure(() => words.countDocuments({}, { collation: { locale: 'en', strength: 9 } }))).code).toBe(2);
    expect((await failure(() => words.countDocuments({}, { collation: { locale: 'en', caseFirst: 'sideways' } }))).code).toBe(2);
    expect((await failure(() => client.db('d').command({ find: 'words', collation: { locale: 'en', bogus: 1 } }))).code).toBe(40415);
    expect((await failure(() => client.db('d').command({ find: 'words', collation: { strength: 2 } }))).code).toBe(40414);
    expect((await failure(() => client.db('d').command({ find: 'words', collation: 'en' }))).code).toBe(14);
    expect((await failure(() => words.find({}, { collation: { locale: 'fr', backwards: true } }).toArray())).code).toBe(115);
    expect((await failure(() => words.deleteMany({ w: 'CAFE' }, { collation: { locale: 'xx' } }))).code).toBe(2);
    // A refused collation on a write changed nothing.
    expect(await words.countDocuments({})).toBe(8);
    expect((await failure(() => client.db('d').createCollection('c', { collation: { locale: 'zz' } }))).code).toBe(2);
  });

  it("keeps an index's collation: unique by it, used by queries with the same collation", async () => {
    const ci = { locale: 'en', strength: 2 };
    // words holds 'cafe' and 'Cafe': a unique index that calls them equal cannot be built.
    expect((await failure(() => words.createIndex({ w: 1 }, { unique: true, collation: ci }))).code).toBe(11000);
    const people = await client.db('d').createCollection<{ _id: string; email?: string }>('people', { collation: ci });
    await people.createIndex({ email: 1 }, { unique: true });
    await people.insertOne({ _id: 'ann', email: 'ann@example.org' });
    expect((await failure(() => people.insertOne({ _id: 'bob', email: 'Ann@Example.org' }))).code).toBe(11000);
    expect((await failure(() => people.insertOne({ _id: 'ANN' }))).code).toBe(11000);
    const indexes = await people.listIndexes().toArray();
    expect(indexes.find((i) => i.name === 'email_1')).toMatchObject({ unique: true, collation: ci });
    // The same collation spelled in another order uses the index.
    const explained = await people.find({ email: 'ANN@EXAMPLE.ORG' }, { collation: { strength: 2, locale: 'en' } }).explain('executionStats');
    expect(explained.queryPlanner.winningPlan).toMatchObject({ stage: 'FETCH', inputStage: { stage: 'IXSCAN', indexName: 'email_1' } });
    expect(explained.executionStats).toMatchObject({ nReturned: 1, totalDocsExamined: 1 });
  });

  it("keeps a view's collation, the default of operations on the view and refused another", async () => {
    const ci = { locale: 'en', strength: 2 };
    await client.db('d').createCollection('ci_words', { viewOn: 'words', pipeline: [{ $match: { w: 'CAFÉ' } }], collation: ci });
    const view = client.db('d').collection<Word>('ci_words');
    expect(ids(await view.find({}).toArray())).toEqual([3, 4]);
    expect(ids(await view.find({ w: 'café' }).toArray())).toEqual([3, 4]);
    expect((await failure(() => view.find({}, { collation: { locale: 'en' } }).toArray())).code).toBe(167);
    const [info] = await client.db('d').listCollections({ name: 'ci_words' }).toArray();
    expect(info).toMatchObject({ type: 'view', options: { viewOn: 'words', collation: ci } });
  });

  it("applies a collection's default collation when an operation names none, the simple one overriding it", async () => {
    const names = await client.db('d').createCollection<Word>('names', { collation: { locale: 'en', strength: 2 } });
    await names.insertMany([{ _id: 1, w: 'Ann' }, { _id: 2, w: 'ann' }, { _id: 3, w: 'Bob' }]);
    expect(ids(await names.find({ w: 'ANN' }).toArray())).toEqual([1, 2]);
    expect(await names.countDocuments({ w: 'BOB' })).toBe(1);
    expect(ids(await names.find({ w: 'ANN' }, { collation: { locale: 'simple' } }).toArray())).toEqual([]);
    expect(ids(await names.find({ w: 'ANN' }, { collation: { locale: 'en', strength: 3 } }).toArray())).toEqual([]);
    expect((await names.deleteMany({ w: 'BOB' })).deletedCount).toBe(1);
    const [info] = await client.db('d').listCollections({ name: 'names' }).toArray();
    expect(info).toMatchObject({ options: { collation: { locale: 'en', strength: 2 } } });
    // It survives a restart of the server (logged with the collection).
    await client.close();
    await server.close();
    server = await WireServer.start({ clustersDir: dir.path });
    client = new MongoClient(server.uri(), { serverSelectionTimeoutMS: 5000 });
    expect(ids(await client.db('d').collection<Word>('names').find({ w: 'aNN' }).toArray())).toEqual([1, 2]);
  });

  it("matches $merge's on field by the collation, through a unique index of the same collation", async () => {
    const ci = { locale: 'en', strength: 2 };
    const totals = client.db('d').collection<{ _id: number; name: string; n: number }>('totals');
    await totals.insertOne({ _id: 1, name: 'cafe', n: 1 });
    await totals.createIndex({ name: 1 }, { unique: true, collation: ci });
    const merge = [{ $match: { _id: 2 } }, { $project: { _id: 0, name: '$w', n: { $literal: 2 } } }, { $merge: { into: 'totals', on: 'name' } }];
    await words.aggregate(merge, { collation: ci }).toArray();
    expect(await totals.find({}, { projection: { _id: 0 } }).toArray()).toEqual([{ name: 'Cafe', n: 2 }]);
    expect((await failure(() => words.aggregate(merge).toArray())).code).toBe(51183);
  });
});
