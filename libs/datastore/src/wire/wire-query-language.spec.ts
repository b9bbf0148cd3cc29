import { makeTempDir } from '@tessera/testing';
import { type Collection, Double, Long, MongoClient, MongoServerError } from 'mongodb';
import { WireServer } from './wire-server';

interface Item {
  _id: number;
  [field: string]: unknown;
}

// The query-language options MongoDB's driver sends (hint, let, comment, sort on updateOne, pipeline
// updates, $out and $merge), through the real wire server with the official driver.
describe('the wire server answers the query language as MongoDB 7 does', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let server: WireServer;
  let client: MongoClient;
  let coll: Collection<Item>;
  beforeEach(async () => {
    dir = makeTempDir('tessera-wire-query-');
    server = await WireServer.start({ clustersDir: dir.path });
    client = new MongoClient(server.uri(), { serverSelectionTimeoutMS: 5000 });
    coll = client.db('app').collection<Item>('items');
    await coll.insertMany([
      { _id: 1, x: 1 },
      { _id: 2, x: 2 },
      { _id: 3, x: 3 },
    ]);
  });
  afterEach(async () => {
    await client.close();
    await server.close();
    dir.remove();
  });

  async function serverError(promise: Promise<unknown>): Promise<MongoServerError> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MongoServerError);
    return error as MongoServerError;
  }

  it("refuses a hint naming no index with MongoDB's BadValue on find, update, delete, findAndModify and aggregate", async () => {
    const attempts = [
      () => coll.find({}, { hint: 'nope_1' }).toArray(),
      () => coll.updateOne({ _id: 1 }, { $set: { y: 1 } }, { hint: 'nope_1' }),
      () => coll.deleteMany({}, { hint: { nope: 1 } }),
      () => coll.findOneAndUpdate({ _id: 1 }, { $set: { y: 1 } }, { hint: { nope: 1 } }),
      () => coll.aggregate([], { hint: 'nope_1' }).toArray(),
      () => coll.countDocuments({}, { hint: 'nope_1' }),
    ];
    for (const attempt of attempts) {
      const error = await serverError(attempt());
      expect(error.code).toBe(2);
      expect(error.message).toBe('hint provided does not correspond to an existing index');
    }
    expect(await coll.countDocuments({}, { hint: '_id_' })).toBe(3);
    expect(await coll.find({ _id: 1 }).toArray()).toEqual([{ _id: 1, x: 1 }]);
  });

  it('passes let and comment to find, aggregate, updates and deletes', async () => {
    expect(await coll.find({ $expr: { $eq: ['$x', '$$want'] } }, { let: { want: 2 }, comment: 'by let' }).toArray()).toEqual([{ _id: 2, x: 2 }]);
    await coll.updateMany({ $expr: { $gte: ['$x', '$$from'] } }, [{ $set: { tag: '$$tag' } }], { let: { from: 2, tag: 'hi' } });
    expect(await coll.aggregate([{ $match: { tag: 'hi' } }, { $project: { _id: 1 } }], { let: { unused: 1 } }).toArray()).toEqual([{ _id: 2 }, { _id: 3 }]);
    expect((await coll.deleteOne({ $expr: { $eq: ['$_id', '$$id'] } }, { let: { id: 3 }, comment: { why: 'test' } })).deletedCount).toBe(1);
  });

  it('updates with a [$project, $addFields] pipeline, keeping _id', async () => {
    await coll.updateOne({ _id: 1 }, [{ $project: { x: 1 } }, { $addFields: { y: { $multiply: ['$x', 10] } } }]);
    await client.db('app').command({ update: 'items', updates: [{ q: { _id: 2 }, u: [{ $replaceWith: { z: 1 } }] }] });
    expect(await coll.find({ _id: { $in: [1, 2] } }).toArray()).toEqual([
      { _id: 1, x: 1, y: 10 },
      { _id: 2, z: 1 },
    ]);
  });

  it('accepts sort on updateOne and replaceOne, changing the first match in that order', async () => {
    await coll.updateOne({}, { $set: { top: true } }, { sort: { x: -1 } });
    await coll.bulkWrite([{ replaceOne: { filter: { x: { $lt: 3 } }, replacement: { second: true }, sort: { x: -1 } } }]);
    expect(await coll.find({}).toArray()).toEqual([
      { _id: 1, x: 1 },
      { _id: 2, second: true },
      { _id: 3, x: 3, top: true },
    ]);
  });

  it("refuses an _id holding a $-prefixed key with DollarPrefixedFieldName", async () => {
    const error = await coll.insertOne({ _id: { $a: 1 } } as unknown as Item).then(
      () => undefined,
      (e: unknown) => e as { code?: number },
    );
    expect(error?.code).toBe(52);
    expect(await coll.countDocuments()).toBe(3);
  });

  it('writes $out and $merge results', async () => {
    expect(await coll.aggregate([{ $match: { x: { $gt: 1 } } }, { $out: 'copy' }]).toArray()).toEqual([]);
    await coll.aggregate([{ $match: { _id: 1 } }, { $merge: { into: 'copy' } }]).toArray();
    expect(await client.db('app').collection('copy').find().sort({ _id: 1 }).toArray()).toEqual([
      { _id: 1, x: 1 },
      { _id: 2, x: 2 },
      { _id: 3, x: 3 },
    ]);
    const error = await serverError(coll.aggregate([{ $out: 'copy' }, { $match: {} }]).toArray());
    expect(error.code).toBe(40601);
  });

  it('runs a database-level aggregate from $documents, in batches, into $merge, and refuses one reading a collection', async () => {
    const db = client.db('app');
    const rows = Array.from({ length: 5 }, (_, i) => ({ n: i }));
    // batchSize 2: a first batch and getMores on the `$cmd.aggregate` cursor.
    expect(await db.aggregate([{ $documents: rows }, { $match: { n: { $gte: 1 } } }], { batchSize: 2 }).toArray()).toEqual(rows.slice(1));
    await db.aggregate([{ $documents: [{ _id: 4, x: 4 }] }, { $merge: { into: 'items' } }]).toArray();
    expect(await coll.countDocuments()).toBe(4);
    const duplicate = await serverError(db.aggregate([{ $documents: [{ _id: 2, x: 9 }] }, { $merge: { into: 'items', whenMatched: 'fail' } }]).toArray());
    expect(duplicate.code).toBe(11000);
    expect(duplicate.errorResponse).toMatchObject({ keyPattern: { _id: 1 }, keyValue: { _id: 2 } });
    expect((await serverError(db.aggregate([{ $match: {} }]).toArray())).code).toBe(73);
  });

  it('answers $all, the concise $lookup with a pipeline and comparing expressions as MongoDB 7 does', async () => {
    await coll.insertMany([
      { _id: 4, tag: 'x', arr: [1, 2] },
      { _id: 5, tag: ['x', 'y'] },
    ]);
    expect((await coll.find({ tag: { $all: ['x'] } }).sort({ _id: 1 }).toArray()).map((d) => d._id)).toEqual([4, 5]);
    expect(await coll.countDocuments({ tag: { $all: [] } })).toBe(0);
    await client.db('app').collection<{ _id: string; name: string; on: boolean }>('tags').insertMany([
      { _id: 't1', name: 'x', on: true },
      { _id: 't2', name: 'y', on: true },
      { _id: 't3', name: 'x', on: false },
    ]);
    const [joined] = await coll
      .aggregate([{ $match: { _id: 4 } }, { $lookup: { from: 'tags', localField: 'tag', foreignField: 'name', pipeline: [{ $match: { on: true } }], as: 'tags' } }])
      .toArray();
    expect(joined.tags).toEqual([{ _id: 't1', name: 'x', on: true }]);
    const [row] = await coll
      .aggregate([{ $match: { _id: 4 } }, { $project: { _id: 0, element: { $eq: ['$arr', 1] }, missing: { $eq: ['$missing', null] }, below: { $lt: ['$missing', null] } } }])
      .toArray();
    expect(row).toEqual({ element: false, missing: false, below: true });
  });

  it("reports a unique index's key pattern and the duplicate value with E11000", async () => {
    await coll.createIndex({ x: 1 }, { unique: true });
    const error = await serverError(coll.insertOne({ _id: 9, x: 3 }));
    expect(error.code).toBe(11000);
    expect(error.errorResponse).toMatchObject({ keyPattern: { x: 1 }, keyValue: { x: 3 } });
  });
  it("answers computed numbers with MongoDB's BSON types, as the driver reads them raw", async () => {
    await coll.insertMany([
      { _id: 4, l: Long.fromNumber(4), d: new Double(2), list: [Long.fromNumber(1), new Double(2)] },
      { _id: 5, l: Long.fromNumber(5), d: new Double(4) },
    ]);
    const raw = { promoteValues: false, promoteLongs: false } as const;
    /** Each value's BSON type as the driver decoded it, by field. */
    const bsonTypes = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(bsonTypes);
      if (value === null || typeof value !== 'object') return typeof value;
      const tag = (value as { _bsontype?: unknown })._bsontype;
      return typeof tag === 'string' ? tag : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bsonTypes(v)]));
    };
    const [group] = await coll
      .aggregate([{ $match: { _id: { $gt: 3 } } }, { $group: { _id: null, sum: { $sum: '$l' }, mean: { $avg: '$d' }, ones: { $sum: Long.fromNumber(1) }, firsts: { $push: '$l' } } }], raw)
      .toArray();
    expect(bsonTypes(group)).toEqual({ _id: 'object', sum: 'Long', mean: 'Double', ones: 'Long', firsts: ['Long', 'Long'] });
    expect(String(group.sum)).toBe('9');
    const [row] = await coll
      .aggregate([{ $match: { _id: 4 } }, { $project: { _id: 0, next: { $add: ['$l', 1] }, literal: { $add: [1, Long.fromNumber(1)] }, half: { $divide: ['$l', 2] }, asDouble: { $toDouble: 1 } } }], raw)
      .toArray();
    expect(bsonTypes(row)).toEqual({ next: 'Long', literal: 'Long', half: 'Double', asDouble: 'Double' });
    const unwound = await coll.aggregate([{ $match: { _id: 4 } }, { $unwind: { path: '$list', includeArrayIndex: 'at' } }, { $project: { _id: 0, list: 1, at: 1 } }], raw).toArray();
    expect(unwound.map(bsonTypes)).toEqual([
      { list: 'Long', at: 'Long' },
      { list: 'Double', at: 'Long' },
    ]);
    const [counted] = await coll.aggregate([{ $count: 'n' }], raw).toArray();
    expect(bsonTypes(counted)).toEqual({ n: 'Int32' });
    // A find projection's expressions are computed with the same types.
    const [found] = await coll.find({ _id: 5 }, { projection: { _id: 0, next: { $add: ['$l', 1] }, d: 1 }, ...raw }).toArray();
    expect(bsonTypes(found)).toEqual({ next: 'Long', d: 'Double' });
  });
});
