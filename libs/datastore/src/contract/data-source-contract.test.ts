/**
 * The contract every DataSourceClient engine must meet, as shared spec functions: `embedded.spec.ts` runs
 * it against the embedded engine and `mongodb.spec.ts` against MongoDB (when MONGODB_URI is set). Named
 * `.test.ts` so that vitest does not run it on its own and the build leaves it out.
 */
import { BSON, BSONRegExp, Binary, Decimal128, Double, EJSON, Int32, Long, ObjectId, UUID } from 'bson';
import { type DataSourceClient, type Document } from '../api/data-source';
import { DatastoreError, isDuplicateKeyError } from '../api/datastore.error';

export interface ContractTarget {
  open(): Promise<DataSourceClient>;
  /** Database name unique to one test. */
  dbName(): string;
  supportsTransactions: boolean;
}

function errorOf(promise: Promise<unknown>): Promise<DatastoreError> {
  return promise.then(
    () => {
      throw new Error('expected the operation to fail');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(DatastoreError);
      return error as DatastoreError;
    },
  );
}

/** Each value's BSON type as bson writes it (what a MongoDB client reads back), by field. */
function typesOf(value: unknown): unknown {
  const doc = BSON.deserialize(BSON.serialize({ v: value }), { promoteValues: false, promoteLongs: false });
  const name = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(name);
    if (v instanceof Int32) return 'int';
    if (v instanceof Double) return 'double';
    if (v instanceof Long) return 'long';
    if (v instanceof Decimal128) return 'decimal';
    if (typeof v === 'string') return 'string';
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, name(x)]));
    return typeof v;
  };
  return name(doc.v);
}

/** The value with every number as a JS number (Longs by their exact digits). */
function numbersOf(value: unknown): unknown {
  return EJSON.deserialize(EJSON.serialize(value, { relaxed: true }), { relaxed: true });
}

export function dataSourceContract(target: ContractTarget): void {
  let client: DataSourceClient;
  let dbName: string;
  const coll = (name = 'items') => client.db(dbName).collection(name);

  beforeEach(async () => {
    client = await target.open();
    dbName = target.dbName();
  });
  afterEach(async () => {
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  describe('reads', () => {
    beforeEach(async () => {
      await coll().insertMany([
        { _id: 1, name: 'ann', age: 30, tags: ['a', 'b'], address: { city: 'Oslo' } },
        { _id: 2, name: 'bob', age: 25, tags: ['b'] },
        { _id: 3, name: 'cy', age: null },
        { _id: 4, name: 'dee', age: 41, address: { city: 'Rome' } },
      ]);
    });

    it('selects everything with an empty query and in insertion order', async () => {
      expect((await coll().find({}).toArray()).map((d) => d._id)).toEqual([1, 2, 3, 4]);
      expect(await coll().count({})).toBe(4);
    });

    it('matches null for both null and missing fields, and $exists tells them apart', async () => {
      expect((await coll().find({ age: null }).toArray()).map((d) => d._id)).toEqual([3]);
      expect((await coll().find({ 'address.city': null }).toArray()).map((d) => d._id)).toEqual([2, 3]);
      expect((await coll().find({ age: { $exists: true } }).toArray()).length).toBe(4);
    });

    it('matches array elements and dotted paths', async () => {
      expect((await coll().find({ tags: 'b' }).toArray()).map((d) => d._id)).toEqual([1, 2]);
      expect((await coll().find({ 'address.city': 'Rome' }).toArray()).map((d) => d._id)).toEqual([4]);
    });

    it('sorts, skips and limits, skipped documents not counting toward the limit', async () => {
      const docs = await coll().find({ age: { $gte: 0 } }).sort({ age: -1 }).skip(1).limit(2).toArray();
      expect(docs.map((d) => d._id)).toEqual([1, 2]);
    });

    it('sorts null and missing before numbers', async () => {
      await coll().insertOne({ _id: 5, name: 'eve' });
      const ids = (await coll().find({}, { _id: 1 }, { sort: { age: 1, _id: 1 } }).toArray()).map((d) => d._id);
      expect(ids).toEqual([3, 5, 2, 1, 4]);
    });

    it('sorts arrays by their smallest element ascending and largest descending, in find and aggregate', async () => {
      await coll('mixed').insertMany([{ _id: 1, t: [5, 1] }, { _id: 2, t: 3 }, { _id: 3 }, { _id: 4, t: 'a' }, { _id: 5, t: null }, { _id: 6, t: [2, 9] }]);
      const asc = [3, 5, 1, 6, 2, 4];
      const desc = [4, 6, 1, 2, 3, 5];
      expect((await coll('mixed').find({}).sort({ t: 1, _id: 1 }).toArray()).map((d) => d._id)).toEqual(asc);
      expect((await coll('mixed').aggregate([{ $sort: { t: 1, _id: 1 } }]).toArray()).map((d) => d._id)).toEqual(asc);
      expect((await coll('mixed').aggregate([{ $sort: { t: -1, _id: 1 } }]).toArray()).map((d) => d._id)).toEqual(desc);
    });

    it('iterates a cursor with next() and refuses modifiers once documents were retrieved', async () => {
      const cursor = coll().find({}).sort({ _id: 1 });
      expect((await cursor.next())?._id).toBe(1);
      expect(() => cursor.skip(1)).toThrow(/already initialized/);
      expect(() => cursor.limit(1)).toThrow(/already initialized/);
      expect(() => cursor.sort({ _id: -1 })).toThrow(/already initialized/);
      expect((await cursor.toArray()).map((d) => d._id)).toEqual([2, 3, 4]);
      expect(await cursor.next()).toBeNull();
    });

    it('projects included or excluded fields but refuses a mix', async () => {
      expect(await coll().findOne({ _id: 1 }, { name: 1 })).toEqual({ _id: 1, name: 'ann' });
      expect(await coll().findOne({ _id: 1 }, { name: 1, _id: 0 })).toEqual({ name: 'ann' });
      expect(await coll().findOne({ _id: 2 }, { tags: 0, age: 0 })).toEqual({ _id: 2, name: 'bob' });
      expect(await coll().findOne({ _id: 1 }, { 'address.city': 1, _id: 0 })).toEqual({ address: { city: 'Oslo' } });
      const error = await errorOf(coll().find({}, { name: 1, age: 0 }).toArray());
      expect(error.message).toMatch(/Cannot do exclusion on field age in inclusion projection/);
    });

    it('slices arrays, projects matching elements and keeps _id first', async () => {
      await coll().insertOne({ _id: 9, n: [5, 6, 7, 8], a: [{ b: 1 }, { b: 2 }] });
      expect(await coll().findOne({ _id: 9 }, { n: { $slice: 2 } })).toEqual({ _id: 9, n: [5, 6], a: [{ b: 1 }, { b: 2 }] });
      expect(Object.keys((await coll().findOne({ _id: 9 }, { n: { $slice: -1 } })) as Document)).toEqual(['_id', 'n', 'a']);
      expect(await coll().findOne({ _id: 9 }, { a: { $elemMatch: { b: 2 } } })).toEqual({ _id: 9, a: [{ b: 2 }] });
      expect(await coll().findOne({ _id: 9, 'a.b': 2 }, { 'a.$': 1 })).toEqual({ _id: 9, a: [{ b: 2 }] });
    });

    it('rejects unknown query operators and pipeline stages', async () => {
      expect((await errorOf(coll().aggregate([{ $bogus: {} }]).toArray())).message).toMatch(/Unrecognized pipeline stage name: '\$bogus'/);
      const error = await errorOf(coll().find({ age: { $foo: 1 } }).toArray());
      expect(error.message).toMatch(/unknown operator: \$foo/);
      expect(error.code).toBe(2);
    });

    it('aggregates with grouping, sorting and lookups', async () => {
      await coll('orders').insertMany([
        { _id: 'o1', customer: 1, total: 10 },
        { _id: 'o2', customer: 1, total: 5 },
        { _id: 'o3', customer: 2, total: 7 },
      ]);
      const grouped = await coll('orders')
        .aggregate([{ $group: { _id: '$customer', sum: { $sum: '$total' } } }, { $sort: { _id: 1 } }])
        .toArray();
      expect(grouped).toEqual([
        { _id: 1, sum: 15 },
        { _id: 2, sum: 7 },
      ]);
      const joined = await coll()
        .aggregate([{ $match: { _id: 2 } }, { $lookup: { from: 'orders', localField: '_id', foreignField: 'customer', as: 'orders' } }, { $project: { n: { $size: '$orders' } } }])
        .toArray();
      expect(joined).toEqual([{ _id: 2, n: 1 }]);
    });

    it('leaves the stored documents as they were when a pipeline sets, removes or unwinds nested fields', async () => {
      const stored = await coll().find({}).sort({ _id: 1 }).toArray();
      const pipelines = [
        [{ $addFields: { 'address.zip': 1 } }],
        [{ $set: { 'address.city': 'Lima' } }],
        [{ $unset: 'address.city' }],
        [{ $project: { 'address.city': 0 } }],
        [{ $unwind: { path: '$name', includeArrayIndex: 'at' } }],
        [{ $unwind: { path: '$tags', preserveNullAndEmptyArrays: true } }],
      ];
      for (const pipeline of pipelines) await coll().aggregate(pipeline).toArray();
      expect(await coll().find({}).sort({ _id: 1 }).toArray()).toEqual(stored);
      const [set] = await coll().aggregate([{ $match: { _id: 1 } }, { $set: { 'address.zip': 1 } }, { $project: { address: 1 } }]).toArray();
      expect(set).toEqual({ _id: 1, address: { city: 'Oslo', zip: 1 } });
    });

    it('aggregates at database level from $documents, joins a collection and merges into one', async () => {
      const db = client.db(dbName);
      const rows = await db.aggregate([{ $documents: [{ who: 1 }, { who: 4 }, { who: 9 }] }, { $lookup: { from: 'items', localField: 'who', foreignField: '_id', as: 'found' } }, { $project: { who: 1, n: { $size: '$found' } } }]).toArray();
      expect(rows).toEqual([
        { who: 1, n: 1 },
        { who: 4, n: 1 },
        { who: 9, n: 0 },
      ]);
      await db.aggregate([{ $documents: [{ _id: 5, name: 'eve' }] }, { $merge: { into: 'items' } }]).toArray();
      expect(await coll().countDocuments({})).toBe(5);
      const duplicate = await errorOf(db.aggregate([{ $documents: [{ _id: 5 }] }, { $merge: { into: 'items', whenMatched: 'fail' } }]).toArray());
      expect(duplicate.code).toBe(11000);
      expect((await errorOf(db.aggregate([{ $match: {} }]).toArray())).code).toBe(73);
    });

    it('answers distinct values, flattening arrays', async () => {
      expect((await coll().distinct('tags', {})).sort()).toEqual(['a', 'b']);
      expect(await coll().distinct('name', { age: { $gt: 26 } })).toEqual(['ann', 'dee']);
    });

    it('lists databases and collections', async () => {
      expect(await client.admin().getDBNames()).toContain(dbName);
      expect(await client.db(dbName).getCollectionNames()).toContain('items');
    });
  });

  describe('BSON types', () => {
    it('round-trips ObjectId, Long, Decimal128, UUID, Binary and Date values', async () => {
      const oid = new ObjectId();
      const uuid = new UUID();
      const when = new Date('2024-01-02T03:04:05.678Z');
      await coll().insertOne({ _id: oid, big: Long.fromString('9007199254740993'), dec: Decimal128.fromString('1.10'), uuid, bin: new Binary(Buffer.from([1, 2, 3])), when });
      const doc = (await coll().findOne({ _id: new ObjectId(oid.toHexString()) })) as Document;
      expect((doc._id as ObjectId).equals(oid)).toBe(true);
      expect(String(doc.big)).toBe('9007199254740993');
      expect(String(doc.dec)).toBe('1.10');
      expect((doc.when as Date).getTime()).toBe(when.getTime());
      expect(Buffer.from((doc.uuid as Binary).buffer).equals(Buffer.from(uuid.buffer))).toBe(true);
      expect(await coll().countDocuments({ when: { $gt: new Date('2024-01-01') } })).toBe(1);
    });

    it('treats Int32, Long and Double of the same value as equal', async () => {
      await coll().insertMany([{ _id: 1, n: new Int32(5) }, { _id: 2, n: Long.fromNumber(5) }, { _id: 3, n: new Double(5) }, { _id: 4, n: 5.5 }]);
      expect(await coll().countDocuments({ n: 5 })).toBe(3);
      expect(await coll().countDocuments({ n: Long.fromNumber(5) })).toBe(3);
      expect(await coll().countDocuments({ n: { $gt: new Int32(5) } })).toBe(1);
    });

    it('keeps the BSON type of every number: an int, a double holding an integer, a long of any size', async () => {
      await coll().insertOne({ _id: 1, i: new Int32(7), d: new Double(1), f: 2.5, l: Long.fromNumber(5), big: Long.fromString('9007199254740993'), nested: { d: new Double(-3), list: [new Double(0), Long.fromNumber(-1), 4] } });
      const doc = (await coll().findOne({ _id: 1 })) as Document;
      expect(typesOf(doc)).toEqual({ _id: 'int', i: 'int', d: 'double', f: 'double', l: 'long', big: 'long', nested: { d: 'double', list: ['double', 'long', 'int'] } });
      expect(numbersOf(doc)).toEqual({ _id: 1, i: 7, d: 1, f: 2.5, l: 5, big: 9007199254740992, nested: { d: -3, list: [0, -1, 4] } });
      // Reads of every kind give the stored types: a projection, a pipeline passing the document through or reshaping it.
      expect(typesOf((await coll().find({ d: 1 }, { d: 1, l: 1 }).toArray())[0])).toEqual({ _id: 'int', d: 'double', l: 'long' });
      expect(typesOf((await coll().aggregate([{ $match: { l: 5 } }]).toArray())[0])).toEqual(typesOf(doc));
      const [reshaped] = await coll().aggregate([{ $project: { d: 1, l: 1, sum: { $add: ['$i', 1] } } }]).toArray();
      expect(typesOf(reshaped)).toEqual({ _id: 'int', d: 'double', l: 'long', sum: 'int' });
      const [named] = await coll().aggregate([{ $project: { _id: 0, i: { $type: '$i' }, d: { $type: '$d' }, l: { $type: '$l' }, f: { $type: '$f' }, nested: { $type: '$nested.d' }, none: { $type: '$none' } } }]).toArray();
      expect(named).toEqual({ i: 'int', d: 'double', l: 'long', f: 'double', nested: 'double', none: 'missing' });
    });

    it('finds numbers by BSON type with $type', async () => {
      await coll().insertMany([{ _id: 1, n: new Int32(1) }, { _id: 2, n: new Double(1) }, { _id: 3, n: Long.fromNumber(1) }, { _id: 4, n: 1.5 }, { _id: 5, n: Decimal128.fromString('1') }, { _id: 6, n: [new Double(2)] }, { _id: 7, n: '1' }]);
      const ids = async (type: unknown) => (await coll().find({ n: { $type: type } }).toArray()).map((d) => d._id);
      expect(await ids('int')).toEqual([1]);
      expect(await ids('double')).toEqual([2, 4, 6]);
      expect(await ids(18)).toEqual([3]);
      expect(await ids('decimal')).toEqual([5]);
      expect(await ids('number')).toEqual([1, 2, 3, 4, 5, 6]);
      expect(await ids(['long', 'string'])).toEqual([3, 7]);
      expect(await ids('array')).toEqual([6]);
    });

    it('gives $inc and $mul results the types MongoDB gives them', async () => {
      await coll().insertOne({ _id: 1, i: 1, big: 2147483647, l: Long.fromNumber(10), d: new Double(2), m: 3 });
      await coll().updateOne({ _id: 1 }, { $inc: { i: 1, big: 1, l: 1, d: 1, fresh: Long.fromNumber(4) }, $mul: { m: new Double(2) } });
      const doc = (await coll().findOne({ _id: 1 })) as Document;
      expect(typesOf(doc)).toEqual({ _id: 'int', i: 'int', big: 'long', l: 'long', d: 'double', m: 'double', fresh: 'long' });
      expect(numbersOf(doc)).toEqual({ _id: 1, i: 2, big: 2147483648, l: 11, d: 3, m: 6, fresh: 4 });
      await coll().updateOne({ _id: 1 }, { $set: { s: new Double(8), t: Long.fromNumber(9) }, $push: { list: { $each: [new Double(1)], $slice: -5 } } });
      await coll().updateOne({ _id: 1 }, [{ $set: { u: 'added by a pipeline' } }]);
      expect(typesOf(await coll().findOne({ _id: 1 }))).toMatchObject({ l: 'long', d: 'double', s: 'double', t: 'long', list: ['double'], u: 'string' });
    });

    it('counts a change of BSON type as a modification, and the same value of the same type as none', async () => {
      await coll().insertOne({ _id: 1, n: 1, l: Long.fromNumber(2) });
      expect(await coll().updateOne({ _id: 1 }, { $set: { n: 1, l: Long.fromNumber(2) } })).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
      expect(await coll().updateOne({ _id: 1 }, { $set: { n: new Double(1) } })).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
      expect(await coll().replaceOne({ _id: 1 }, { n: new Double(1), l: 2 })).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
      expect(typesOf(await coll().findOne({ _id: 1 }))).toEqual({ _id: 'int', n: 'double', l: 'int' });
    });

    it('gives arithmetic and conversion results the types MongoDB gives them', async () => {
      await coll().insertOne({ _id: 1, i: new Int32(2), l: Long.fromNumber(10), d: new Double(2), f: 2.5 });
      const [doc] = await coll()
        .aggregate([
          {
            $project: {
              _id: 0,
              intSum: { $add: ['$i', 1] },
              intOverflow: { $add: ['$i', 2147483647] },
              longSum: { $add: ['$l', '$i'] },
              longLiteral: { $add: ['$i', Long.fromNumber(1)] },
              doubleSum: { $add: ['$d', '$l'] },
              difference: { $subtract: ['$l', 1] },
              product: { $multiply: ['$i', '$i'] },
              quotient: { $divide: ['$i', 1] },
              remainder: { $mod: ['$l', 3] },
              absolute: { $abs: '$d' },
              ceiling: { $ceil: '$l' },
              floor: { $floor: '$f' },
              rounded: { $round: ['$i', 0] },
              truncated: { $trunc: '$f' },
              power: { $pow: ['$i', 3] },
              root: { $sqrt: 4 },
              decimalSum: { $add: ['$l', { $toDecimal: 1 }] },
              toLong: { $toLong: '$i' },
              toDouble: { $toDouble: '$i' },
              toInt: { $toInt: '$d' },
              toDecimal: { $toDecimal: '$f' },
              converted: { $convert: { input: '$d', to: 'long' } },
              fallback: { $convert: { input: 'x', to: 'int', onError: { $toLong: 0 } } },
            },
          },
        ])
        .toArray();
      expect(typesOf(doc)).toEqual({
        intSum: 'int',
        intOverflow: 'long',
        longSum: 'long',
        longLiteral: 'long',
        doubleSum: 'double',
        difference: 'long',
        product: 'int',
        quotient: 'double',
        remainder: 'long',
        absolute: 'double',
        ceiling: 'long',
        floor: 'double',
        rounded: 'int',
        truncated: 'double',
        power: 'int',
        root: 'double',
        decimalSum: 'decimal',
        toLong: 'long',
        toDouble: 'double',
        toInt: 'int',
        toDecimal: 'decimal',
        converted: 'long',
        fallback: 'long',
      });
      expect(numbersOf({ ...doc, decimalSum: String(doc.decimalSum), toDecimal: String(doc.toDecimal) })).toEqual({
        intSum: 3,
        intOverflow: 2147483649,
        longSum: 12,
        longLiteral: 3,
        doubleSum: 12,
        difference: 9,
        product: 4,
        quotient: 2,
        remainder: 1,
        absolute: 2,
        ceiling: 10,
        floor: 2,
        rounded: 2,
        truncated: 2,
        power: 8,
        root: 2,
        decimalSum: '11',
        toLong: 2,
        toDouble: 2,
        toInt: 2,
        toDecimal: '2.50000000000000',
        converted: 2,
        fallback: 0,
      });
      // A pipeline update computes with the same types: a long plus an int stays a long.
      await coll().updateOne({ _id: 1 }, [{ $set: { l: { $add: ['$l', 1] }, half: { $divide: ['$i', 2] } } }]);
      expect(typesOf(await coll().findOne({ _id: 1 }))).toMatchObject({ i: 'int', l: 'long', d: 'double', half: 'double' });
    });

    it('gives accumulators the types MongoDB gives them, and group keys and accumulated values their stored types', async () => {
      await coll().insertMany([
        { _id: 1, g: 'a', i: 1, l: Long.fromNumber(1), d: new Double(2), tags: [Long.fromNumber(7)] },
        { _id: 2, g: 'a', i: 3, l: Long.fromNumber(2), d: new Double(4), tags: [] },
        { _id: 3, g: 'b', i: 2147483647, l: Long.fromNumber(5), d: 1.5, tags: [new Double(1), 2] },
      ]);
      const groups = await coll()
        .aggregate([
          {
            $group: {
              _id: '$g',
              ints: { $sum: '$i' },
              longs: { $sum: '$l' },
              doubles: { $sum: '$d' },
              none: { $sum: '$missing' },
              mean: { $avg: '$i' },
              count: { $count: {} },
              counted: { $sum: 1 },
              first: { $first: '$l' },
              last: { $last: '$d' },
              pushed: { $push: '$l' },
              set: { $addToSet: '$d' },
              least: { $min: '$l' },
              most: { $max: '$d' },
              sizes: { $push: { $size: '$tags' } },
            },
          },
          { $sort: { _id: 1 } },
        ])
        .toArray();
      expect(groups.map(typesOf)).toEqual([
        { _id: 'string', ints: 'int', longs: 'long', doubles: 'double', none: 'int', mean: 'double', count: 'int', counted: 'int', first: 'long', last: 'double', pushed: ['long', 'long'], set: ['double', 'double'], least: 'long', most: 'double', sizes: ['int', 'int'] },
        { _id: 'string', ints: 'int', longs: 'long', doubles: 'double', none: 'int', mean: 'double', count: 'int', counted: 'int', first: 'long', last: 'double', pushed: ['long'], set: ['double'], least: 'long', most: 'double', sizes: ['int'] },
      ]);
      expect(numbersOf(groups[0])).toMatchObject({ ints: 4, longs: 3, doubles: 6, none: 0, mean: 2, count: 2, first: 1, last: 4, least: 1, most: 4 });
      // An int sum that leaves int32 is a long; the mean of ints is a double even when integral.
      const [all] = await coll().aggregate([{ $group: { _id: null, ints: { $sum: '$i' }, mean: { $avg: '$l' } } }]).toArray();
      expect(typesOf(all)).toEqual({ _id: 'object', ints: 'long', mean: 'double' });
      expect(numbersOf(all)).toEqual({ _id: null, ints: 2147483651, mean: 8 / 3 });
      // Group keys keep their type: a long key, a double key; equal numbers of different types are one group.
      const keys = await coll().aggregate([{ $group: { _id: '$l', n: { $sum: 1 } } }, { $sort: { _id: 1 } }]).toArray();
      expect(keys.map(typesOf)).toEqual([
        { _id: 'long', n: 'int' },
        { _id: 'long', n: 'int' },
        { _id: 'long', n: 'int' },
      ]);
      const [sorted] = await coll().aggregate([{ $sortByCount: '$d' }, { $limit: 1 }]).toArray();
      expect(typesOf(sorted)).toEqual({ _id: 'double', count: 'int' });
      const [counted] = await coll().aggregate([{ $count: 'n' }]).toArray();
      expect(typesOf(counted)).toEqual({ n: 'int' });
    });

    it('keeps stored types through $lookup, $graphLookup, $unionWith, $facet and $unwind', async () => {
      await coll().insertMany([
        { _id: 1, next: 2, l: Long.fromNumber(1), d: new Double(1), list: [Long.fromNumber(3), new Double(4), 5] },
        { _id: 2, l: Long.fromNumber(2), d: new Double(2) },
      ]);
      await coll('other').insertOne({ _id: 9, ref: 1, w: new Double(9), v: Long.fromNumber(9) });
      const [joined] = await coll()
        .aggregate([
          { $match: { _id: 1 } },
          { $lookup: { from: 'other', localField: '_id', foreignField: 'ref', as: 'plain' } },
          { $lookup: { from: 'other', let: { id: '$_id' }, pipeline: [{ $match: { $expr: { $eq: ['$ref', '$$id'] } } }, { $set: { v2: { $add: ['$v', 1] } } }], as: 'piped' } },
          { $graphLookup: { from: 'items', startWith: '$next', connectFromField: 'next', connectToField: '_id', as: 'chain', depthField: 'depth' } },
          { $project: { _id: 0, plain: 1, piped: 1, chain: { l: 1, d: 1, depth: 1 } } },
        ])
        .toArray();
      expect(typesOf(joined)).toEqual({
        plain: [{ _id: 'int', ref: 'int', w: 'double', v: 'long' }],
        piped: [{ _id: 'int', ref: 'int', w: 'double', v: 'long', v2: 'long' }],
        chain: [{ l: 'long', d: 'double', depth: 'long' }],
      });
      const united = await coll()
        .aggregate([{ $project: { _id: 0, l: 1 } }, { $unionWith: { coll: 'other', pipeline: [{ $project: { _id: 0, w: 1 } }] } }])
        .toArray();
      expect(united.map(typesOf)).toEqual([{ l: 'long' }, { l: 'long' }, { w: 'double' }]);
      const [faceted] = await coll()
        .aggregate([{ $facet: { docs: [{ $project: { _id: 0, d: 1 } }], total: [{ $group: { _id: null, sum: { $sum: '$l' } } }] } }])
        .toArray();
      expect(typesOf(faceted)).toEqual({ docs: [{ d: 'double' }, { d: 'double' }], total: [{ _id: 'object', sum: 'long' }] });
      const unwound = await coll()
        .aggregate([{ $match: { _id: 1 } }, { $unwind: { path: '$list', includeArrayIndex: 'at' } }, { $project: { _id: 0, list: 1, at: 1, l: 1 } }])
        .toArray();
      expect(unwound.map(typesOf)).toEqual([
        { l: 'long', list: 'long', at: 'long' },
        { l: 'long', list: 'double', at: 'long' },
        { l: 'long', list: 'int', at: 'long' },
      ]);
    });

    it('passes array elements, fields and variables through expressions with their stored types', async () => {
      await coll().insertOne({
        _id: 1,
        list: [Long.fromNumber(1), new Double(2), new Int32(3), Decimal128.fromString('4.0')],
        more: [new Double(5)],
        sub: { l: Long.fromNumber(6), d: new Double(7) },
        l: Long.fromNumber(8),
        d: new Double(9),
      });
      const [doc] = await coll()
        .aggregate([
          {
            $project: {
              _id: 0,
              sliced: { $slice: ['$list', 1, 2] },
              tail: { $slice: ['$list', -1] },
              concatenated: { $concatArrays: ['$list', '$more', [Long.fromNumber(10)]] },
              zipped: { $zip: { inputs: ['$list', '$more'], useLongestLength: true, defaults: [null, Long.fromNumber(0)] } },
              field: { $getField: { field: 'l', input: '$sub' } },
              ownField: { $getField: 'd' },
              element: { $arrayElemAt: ['$list', 0] },
              lastElement: { $arrayElemAt: ['$list', -3] },
              first: { $first: '$list' },
              last: { $last: '$more' },
              reversed: { $reverseArray: '$list' },
              union: { $setUnion: ['$more', ['$d']] },
              sorted: { $sortArray: { input: '$list', sortBy: -1 } },
              firstTwo: { $firstN: { input: '$list', n: 2 } },
              lastTwo: { $lastN: { input: '$list', n: 2 } },
              largest: { $maxN: { input: '$list', n: 2 } },
              pairs: { $objectToArray: '$sub' },
              rebuilt: { $arrayToObject: [[['a', '$l'], ['b', '$d']]] },
              withField: { $setField: { field: 'x', input: '$sub', value: '$d' } },
              withoutField: { $unsetField: { field: 'd', input: '$sub' } },
              reduced: { $reduce: { input: '$list', initialValue: [], in: { $concatArrays: ['$$value', ['$$this']] } } },
              mapped: { $map: { input: '$list', as: 'n', in: { $arrayElemAt: [['$$n'], 0] } } },
              filtered: { $filter: { input: '$list', cond: { $gte: ['$$this', 2] }, limit: 2 } },
              bound: { $let: { vars: { x: '$l', xs: { $slice: ['$list', 2] } }, in: { $concatArrays: [['$$x'], '$$xs'] } } },
              chosen: { $cond: [{ $gt: ['$l', 1] }, '$sub.l', '$d'] },
              switched: { $switch: { branches: [{ case: false, then: '$l' }], default: { $first: '$more' } } },
              defaulted: { $ifNull: ['$missing', '$sub.d'] },
              nested: { $first: { $slice: [{ $reverseArray: { $concatArrays: ['$more', '$list'] } }, 2] } },
            },
          },
        ])
        .toArray();
      const list = ['long', 'double', 'int', 'decimal'];
      expect(typesOf(doc)).toEqual({
        sliced: ['double', 'int'],
        tail: ['decimal'],
        concatenated: [...list, 'double', 'long'],
        zipped: [['long', 'double'], ['double', 'long'], ['int', 'long'], ['decimal', 'long']],
        field: 'long',
        ownField: 'double',
        element: 'long',
        lastElement: 'double',
        first: 'long',
        last: 'double',
        reversed: [...list].reverse(),
        union: ['double', 'double'],
        sorted: ['decimal', 'int', 'double', 'long'],
        firstTwo: ['long', 'double'],
        lastTwo: ['int', 'decimal'],
        largest: ['decimal', 'int'],
        pairs: [{ k: 'string', v: 'long' }, { k: 'string', v: 'double' }],
        rebuilt: { a: 'long', b: 'double' },
        withField: { l: 'long', d: 'double', x: 'double' },
        withoutField: { l: 'long' },
        reduced: list,
        mapped: list,
        filtered: ['double', 'int'],
        bound: ['long', 'long', 'double'],
        chosen: 'long',
        switched: 'double',
        defaulted: 'double',
        nested: 'decimal',
      });
      expect(numbersOf({ sliced: doc.sliced, bound: doc.bound, zipped: (doc.zipped as unknown[][]).slice(0, 3), field: doc.field })).toEqual({ sliced: [2, 3], bound: [8, 1, 2], zipped: [[1, 5], [2, 0], [3, 0]], field: 6 });
    });

    it('computes square roots, exponentials, logarithms and powers of decimals in decimal, to 34 digits', async () => {
      await coll().insertOne({ _id: 1, two: Decimal128.fromString('2'), ten: Decimal128.fromString('10'), i: new Int32(2), l: Long.fromNumber(3) });
      const [doc] = await coll()
        .aggregate([
          {
            $project: {
              _id: 0,
              sqrt: { $sqrt: '$two' },
              exactSqrt: { $sqrt: { $toDecimal: '2.25' } },
              exp: { $exp: { $toDecimal: 1 } },
              ln: { $ln: '$ten' },
              log10: { $log10: '$two' },
              exactLog10: { $log10: { $toDecimal: 1000 } },
              log: { $log: [{ $toDecimal: 100 }, 3] },
              exactLog: { $log: [{ $toDecimal: 8 }, '$two'] },
              pow: { $pow: [{ $toDecimal: '1.5' }, { $toDecimal: '2.5' }] },
              exactPow: { $pow: ['$two', '$i'] },
              inversePow: { $pow: ['$two', -2] },
              longBase: { $pow: ['$l', '$two'] },
              doubleRoot: { $sqrt: '$i' },
              longLog: { $log10: '$l' },
            },
          },
        ])
        .toArray();
      const decimals = ['sqrt', 'exactSqrt', 'exp', 'ln', 'log10', 'exactLog10', 'log', 'exactLog', 'pow', 'exactPow', 'inversePow', 'longBase'];
      expect(typesOf(doc)).toEqual({ ...Object.fromEntries(decimals.map((name) => [name, 'decimal'])), doubleRoot: 'double', longLog: 'double' });
      expect(Object.fromEntries(decimals.map((name) => [name, String(doc[name])]))).toEqual({
        sqrt: '1.414213562373095048801688724209698',
        exactSqrt: '1.5',
        exp: '2.718281828459045235360287471352662',
        ln: '2.302585092994045684017991454684364',
        log10: '0.3010299956639811952137388947244930',
        exactLog10: '3',
        log: '4.191806548578769208593135044042803',
        exactLog: '3',
        pow: '2.755675960631075360471944584044128',
        exactPow: '4',
        inversePow: '0.25',
        longBase: '9',
      });
      expect(numbersOf({ doubleRoot: doc.doubleRoot, longLog: doc.longLog })).toEqual({ doubleRoot: Math.SQRT2, longLog: Math.log10(3) });
    });

    it('keeps the operand type through $round, $trunc and $abs, and gives $mod, $divide and conversions their types', async () => {
      await coll().insertOne({ _id: 1, l: Long.fromString('1234567890123456789'), dec: Decimal128.fromString('-12.3456'), d: new Double(7.5), i: new Int32(6) });
      const [doc] = await coll()
        .aggregate([
          {
            $project: {
              _id: 0,
              roundLong: { $round: ['$l', -2] },
              truncLong: { $trunc: ['$l', -3] },
              roundLongPlaces: { $round: ['$l', 2] },
              roundDecimal: { $round: ['$dec', 2] },
              truncDecimal: { $trunc: ['$dec', 1] },
              roundDecimalWhole: { $round: '$dec' },
              roundDouble: { $round: ['$d', 0] },
              absLong: { $abs: { $subtract: [0, '$l'] } },
              absDecimal: { $abs: '$dec' },
              modDecimal: { $mod: ['$dec', 5] },
              modLong: { $mod: ['$l', 10] },
              modLongDouble: { $mod: [Long.fromNumber(10), new Double(4)] },
              divideInts: { $divide: ['$i', 3] },
              divideLongs: { $divide: ['$l', '$l'] },
              divideDecimal: { $divide: ['$dec', 2] },
              toInt: { $toInt: '$dec' },
              toLong: { $toLong: '$d' },
              toDouble: { $toDouble: '$i' },
              toDecimal: { $toDecimal: '$l' },
              convertInt: { $convert: { input: '12', to: 'int' } },
              convertLong: { $convert: { input: '$i', to: 18 } },
              convertDouble: { $convert: { input: '$dec', to: 'double' } },
              convertDecimal: { $convert: { input: '$d', to: { $literal: 'decimal' } } },
            },
          },
        ])
        .toArray();
      expect(typesOf(doc)).toEqual({
        roundLong: 'long',
        truncLong: 'long',
        roundLongPlaces: 'long',
        roundDecimal: 'decimal',
        truncDecimal: 'decimal',
        roundDecimalWhole: 'decimal',
        roundDouble: 'double',
        absLong: 'long',
        absDecimal: 'decimal',
        modDecimal: 'decimal',
        modLong: 'long',
        modLongDouble: 'double',
        divideInts: 'double',
        divideLongs: 'double',
        divideDecimal: 'decimal',
        toInt: 'int',
        toLong: 'long',
        toDouble: 'double',
        toDecimal: 'decimal',
        convertInt: 'int',
        convertLong: 'long',
        convertDouble: 'double',
        convertDecimal: 'decimal',
      });
      const shown = Object.fromEntries(Object.entries(doc).map(([name, value]) => [name, value instanceof Double ? value.value : String(value)]));
      expect(shown).toEqual({
        roundLong: '1234567890123456800',
        truncLong: '1234567890123456000',
        roundLongPlaces: '1234567890123456789',
        roundDecimal: '-12.35',
        truncDecimal: '-12.3',
        roundDecimalWhole: '-12',
        roundDouble: 8,
        absLong: '1234567890123456789',
        absDecimal: '12.3456',
        modDecimal: '-2.3456',
        modLong: '9',
        modLongDouble: 2,
        divideInts: 2,
        divideLongs: 1,
        divideDecimal: '-6.1728',
        toInt: '-12',
        toLong: '7',
        toDouble: 6,
        toDecimal: '1234567890123456789',
        convertInt: '12',
        convertLong: '6',
        convertDouble: '-12.3456',
        convertDecimal: '7.50000000000000',
      });
    });

    it('keeps the BSON type of number literals in a view pipeline, $bucket boundaries and default, and find projections', async () => {
      await coll().insertMany([{ _id: 1, n: 1 }, { _id: 2, n: 15 }, { _id: 3, n: 'x' }]);
      // A view's pipeline as mongodump's metadata writes it: canonical Extended JSON.
      const pipeline = EJSON.parse(
        '[{"$match": {"_id": {"$numberLong": "2"}}}, {"$set": {"l": {"$numberLong": "5"}, "d": {"$numberDouble": "1.0"}, "i": {"$numberInt": "2"}, "m": {"$numberDecimal": "1.50"}, "sum": {"$add": ["$n", {"$numberLong": "1"}]}, "list": [{"$numberDouble": "3"}]}}]',
        { relaxed: false },
      ) as Document[];
      await client.db(dbName).createCollection('typed', { viewOn: 'items', pipeline });
      const viewed = await coll('typed').find({}).toArray();
      expect(viewed.map(typesOf)).toEqual([{ _id: 'int', n: 'int', l: 'long', d: 'double', i: 'int', m: 'decimal', sum: 'long', list: ['double'] }]);
      expect(String(viewed[0].m)).toBe('1.50');
      const bucketed = await coll()
        .aggregate([{ $bucket: { groupBy: '$n', boundaries: [Long.fromNumber(0), Long.fromNumber(10), Long.fromNumber(20)], default: new Double(99), output: { count: { $sum: 1 } } } }])
        .toArray();
      expect(bucketed.map(typesOf)).toEqual([
        { _id: 'long', count: 'int' },
        { _id: 'long', count: 'int' },
        { _id: 'double', count: 'int' },
      ]);
      expect(numbersOf(bucketed)).toEqual([
        { _id: 0, count: 1 },
        { _id: 10, count: 1 },
        { _id: 99, count: 1 },
      ]);
      const projection = { _id: 0, literal: { $literal: Long.fromNumber(5) }, decimal: { $literal: Decimal128.fromString('2.50') }, computed: { $add: ['$n', Long.fromNumber(1)] }, list: [new Double(1), '$n'], nested: { d: { $literal: new Double(3) } } };
      const [projected] = await coll().find({ _id: 2 }, projection).toArray();
      expect(typesOf(projected)).toEqual({ literal: 'long', decimal: 'decimal', computed: 'long', list: ['double', 'int'], nested: { d: 'double' } });
      expect(typesOf(await coll().findOne({ _id: 2 }, projection))).toEqual(typesOf(projected));
      expect(typesOf(await coll().findOneAndUpdate({ _id: 2 }, { $set: { seen: true } }, { projection, returnNewDocument: true }))).toEqual(typesOf(projected));
      // A number of any type in a projection is an inclusion or an exclusion, not a value.
      expect(await coll().findOne({ _id: 2 }, { n: Long.fromNumber(1), _id: new Int32(0) })).toEqual({ n: 15 });
      expect(await coll().findOne({ _id: 2 }, { n: new Double(0) })).toEqual({ _id: 2, seen: true });
    });

    it('treats _id values 1 and 1.0 as the same key', async () => {
      await coll().insertOne({ _id: 1 });
      const error = await errorOf(coll().insertOne({ _id: new Double(1) }));
      expect(error.code).toBe(11000);
    });
  });

  describe('regular expressions', () => {
    beforeEach(async () => {
      await coll().insertMany([
        { _id: 1, name: 'Ann', tags: ['alpha', 'Beta'] },
        { _id: 2, name: 'bob\nANN' },
        { _id: 3, name: 'carol', tags: ['gamma'] },
        { _id: 4, name: 42 },
        { _id: 5, name: new BSONRegExp('^a', 'i') },
        { _id: 6 },
      ]);
    });
    const ids = async (filter: Document): Promise<unknown[]> => (await coll().find(filter).toArray()).map((d) => d._id);

    it('matches strings by a regex literal, a BSON regex and $regex with a string or a regex', async () => {
      expect(await ids({ name: /^c/ })).toEqual([3]);
      expect(await ids({ name: new BSONRegExp('^c', '') })).toEqual([3]);
      expect(await ids({ name: { $regex: /^c/ } })).toEqual([3]);
      expect(await ids({ name: { $regex: '^c' } })).toEqual([3]);
      expect(await ids({ name: { $regex: 'ANN$' } })).toEqual([2]);
    });

    it('applies the options i, m, s and x, from $options or from the regex', async () => {
      expect(await ids({ name: { $regex: '^ann', $options: 'i' } })).toEqual([1]);
      expect(await ids({ name: { $regex: /^ann/, $options: 'im' } })).toEqual([1, 2]);
      expect(await ids({ name: /^ann$/im })).toEqual([1, 2]);
      expect(await ids({ name: { $regex: 'bob.ANN' } })).toEqual([]);
      expect(await ids({ name: { $regex: 'bob.ANN', $options: 's' } })).toEqual([2]);
      expect(await ids({ name: { $regex: '^ c a r  # the start\n o l $', $options: 'x' } })).toEqual([3]);
      expect(await ids({ name: { $regex: '^carol$', $options: 'u' } })).toEqual([3]);
    });

    it('matches an array when any string element matches, and never numbers or missing fields', async () => {
      expect(await ids({ tags: /^b/i })).toEqual([1]);
      expect(await ids({ tags: { $regex: 'amm' } })).toEqual([3]);
      expect(await ids({ name: /42/ })).toEqual([]);
      expect(await ids({ name: /.*/ })).toEqual([1, 2, 3]);
    });

    it('matches a stored regex equal to the query regex, and $eq matches only that', async () => {
      expect(await ids({ name: /^a/i })).toEqual([1, 5]);
      expect(await ids({ name: { $eq: /^a/i } })).toEqual([5]);
      expect(await ids({ name: { $eq: /^a/ } })).toEqual([]);
      const stored = (await coll().findOne({ _id: 5 })) as Document;
      expect(stored.name).toBeInstanceOf(BSONRegExp);
      expect(stored.name).toMatchObject({ pattern: '^a', options: 'i' });
    });

    it('keeps PCRE options a JavaScript RegExp cannot hold in a stored regex', async () => {
      await coll().insertOne({ _id: 7, r: new BSONRegExp('a b # comment', 'sx') });
      expect(((await coll().findOne({ _id: 7 })) as Document).r).toMatchObject({ pattern: 'a b # comment', options: 'sx' });
    });

    it('tests regexes inside $in, $nin, $not, $all, $elemMatch and $or', async () => {
      expect(await ids({ name: { $in: [/^c/, 42] } })).toEqual([3, 4]);
      expect(await ids({ name: { $nin: [/^c/, 42] } })).toEqual([1, 2, 5, 6]);
      expect(await ids({ name: { $not: /^c/ } })).toEqual([1, 2, 4, 5, 6]);
      expect(await ids({ name: { $not: { $regex: '^C', $options: 'i' } } })).toEqual([1, 2, 4, 5, 6]);
      expect(await ids({ tags: { $all: [/^a/, /^B/] } })).toEqual([1]);
      expect(await ids({ tags: { $elemMatch: { $regex: '^g' } } })).toEqual([3]);
      expect(await ids({ $or: [{ name: /^b/ }, { tags: /^g/ }] })).toEqual([2, 3]);
      expect(await coll().countDocuments({ name: { $regex: '^c' } })).toBe(1);
    });

    it('uses regexes in aggregation $match and $regexMatch', async () => {
      expect((await coll().aggregate([{ $match: { name: { $regex: '^ann', $options: 'i' } } }]).toArray()).map((d) => d._id)).toEqual([1]);
      const matched = await coll()
        .aggregate([{ $match: { _id: { $lte: 3 } } }, { $project: { m: { $regexMatch: { input: '$name', regex: 'c a', options: 'x' } } } }])
        .toArray();
      expect(matched.map((d) => d.m)).toEqual([false, false, true]);
    });

    it('never uses an index as if a regex were an equality', async () => {
      await coll().createIndex({ name: 1 });
      expect(await ids({ name: /^c/ })).toEqual([3]);
      expect(await ids({ name: new BSONRegExp('arol', '') })).toEqual([3]);
      expect(await ids({ name: { $in: [/^C/i, 'bob'] } })).toEqual([3]);
    });

    it('deletes and updates only the documents a regex matches', async () => {
      expect((await coll().deleteMany({ name: { $regex: /^c/ } })).deletedCount).toBe(1);
      expect((await coll().updateMany({ name: { $regex: 'ann', $options: 'i' } }, { $set: { hit: true } })).modifiedCount).toBe(2);
      expect(await ids({})).toEqual([1, 2, 4, 5, 6]);
      expect(await ids({ hit: true })).toEqual([1, 2]);
    });

    it('refuses an invalid pattern, unknown options, options given twice and $options alone', async () => {
      const invalid = await errorOf(coll().find({ name: { $regex: '(' } }).toArray());
      expect(invalid.codeName).toBe('BadValue');
      expect(invalid.code).toBe(51091);
      expect(invalid.message).toMatch(/Regular expression is invalid/);
      expect(invalid.httpStatus).toBe(400);
      expect((await errorOf(coll().find({ name: { $regex: 'a', $options: 'z' } }).toArray())).code).toBe(51108);
      expect((await errorOf(coll().find({ name: { $regex: /a/i, $options: 'm' } }).toArray())).message).toMatch(/options set in both \$regex and \$options/);
      expect((await errorOf(coll().find({ name: { $options: 'i' } }).toArray())).message).toMatch(/\$options needs a \$regex/);
      expect((await errorOf(coll().deleteMany({ name: { $regex: '[' } }))).code).toBe(51091);
      expect(await coll().countDocuments({})).toBe(6);
    });
  });

  describe('writes', () => {
    it('generates an ObjectId _id and reports it', async () => {
      const { insertedId } = await coll().insertOne({ a: 1 });
      expect(insertedId).toBeInstanceOf(ObjectId);
      expect(await coll().findOne({ _id: insertedId as ObjectId })).toEqual({ _id: insertedId, a: 1 });
    });

    it('reports duplicate keys with code 11000 and MongoDB message shape', async () => {
      await coll().insertOne({ _id: 1 });
      const error = await errorOf(coll().insertOne({ _id: 1 }));
      expect(error.code).toBe(11000);
      expect(isDuplicateKeyError(error)).toBe(true);
      expect(error.errorCode).toBe('MongoDBError');
      expect(error.message).toBe(`E11000 duplicate key error collection: ${dbName}.items index: _id_ dup key: { _id: 1 }`);
    });

    it('stops an ordered insertMany at the first failure and continues an unordered one', async () => {
      await coll().insertOne({ _id: 2 });
      await errorOf(coll().insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]));
      expect(await coll().countDocuments({})).toBe(2);
      const error = await errorOf(coll('other').insertMany([{ _id: 1 }, { _id: 1 }, { _id: 3 }], { ordered: false }));
      expect(error.writeErrors?.map((e) => e.index)).toEqual([1]);
      expect(await coll('other').countDocuments({})).toBe(2);
    });

    it('enforces unique secondary indexes', async () => {
      await coll().createIndex({ email: 1 }, { unique: true });
      await coll().insertOne({ _id: 1, email: 'a@x' });
      const error = await errorOf(coll().insertOne({ _id: 2, email: 'a@x' }));
      expect(error.message).toMatch(/index: email_1 dup key: \{ email: "a@x" \}/);
      await errorOf(coll().updateOne({ _id: 1 }, { $set: { email: 'b@x' } }).then(() => coll().insertOne({ _id: 3, email: 'b@x' })));
      expect((await coll().listIndexes()).map((i) => i.name)).toEqual(['_id_', 'email_1']);
    });

    it('applies update operators', async () => {
      await coll().insertOne({ _id: 1, n: 1, m: 2, s: 'x', arr: [1, 2, 3], set: ['a'], old: 1, lo: 5, hi: 5 });
      await coll().updateOne(
        { _id: 1 },
        {
          $inc: { n: 2 },
          $mul: { m: 3 },
          $unset: { s: '' },
          $push: { arr: { $each: [9, 0], $sort: 1, $slice: -3 } },
          $addToSet: { set: { $each: ['a', 'b'] } },
          $rename: { old: 'renamed' },
          $min: { lo: 3 },
          $max: { hi: 7 },
          $set: { 'deep.path': true },
        },
      );
      expect(await coll().findOne({ _id: 1 })).toEqual({ _id: 1, n: 3, m: 6, arr: [2, 3, 9], set: ['a', 'b'], lo: 3, hi: 7, deep: { path: true }, renamed: 1 });
      await coll().updateOne({ _id: 1 }, { $pull: { arr: { $gte: 3 } }, $pop: { set: -1 }, $currentDate: { at: true } });
      const doc = (await coll().findOne({ _id: 1 })) as Document;
      expect(doc.arr).toEqual([2]);
      expect(doc.set).toEqual(['b']);
      expect(doc.at).toBeInstanceOf(Date);
    });

    it('updates matched array elements with $, $[] and $[identifier]', async () => {
      await coll().insertOne({ _id: 1, grades: [80, 95, 70], items: [{ q: 1 }, { q: 5 }] });
      await coll().updateOne({ _id: 1, grades: 95 }, { $set: { 'grades.$': 96 } });
      await coll().updateOne({ _id: 1 }, { $inc: { 'items.$[].q': 1 } });
      await coll().updateOne({ _id: 1 }, { $set: { 'items.$[big].big': true } }, { arrayFilters: [{ 'big.q': { $gt: 3 } }] });
      expect(await coll().findOne({ _id: 1 })).toEqual({ _id: 1, grades: [80, 96, 70], items: [{ q: 2 }, { q: 6, big: true }] });
    });

    it('upserts from the equality fields of the query and applies $setOnInsert only on insert', async () => {
      const first = await coll().updateOne({ name: 'x', n: { $gt: 1 } }, { $set: { v: 1 }, $setOnInsert: { created: true } }, { upsert: true });
      expect(first.upsertedCount).toBe(1);
      const doc = (await coll().findOne({ name: 'x' })) as Document;
      expect(doc).toEqual({ _id: first.upsertedId, name: 'x', v: 1, created: true });
      const second = await coll().updateOne({ name: 'x' }, { $set: { v: 2 }, $setOnInsert: { created: false } }, { upsert: true });
      expect(second).toMatchObject({ matchedCount: 1, modifiedCount: 1, upsertedCount: 0 });
      expect(await coll().findOne({ name: 'x' }, { _id: 0 })).toEqual({ name: 'x', v: 2, created: true });
    });

    it('runs pipeline updates', async () => {
      await coll().insertOne({ _id: 1, a: 2, b: 3 });
      await coll().updateMany({}, [{ $set: { sum: { $add: ['$a', '$b'] } } }, { $unset: ['b'] }]);
      expect(await coll().findOne({ _id: 1 })).toEqual({ _id: 1, a: 2, sum: 5 });
    });

    it('refuses a replacement holding operators and an update without them', async () => {
      await coll().insertOne({ _id: 1, a: 1 });
      expect((await errorOf(coll().replaceOne({ _id: 1 }, { $set: { a: 2 } }))).message).toMatch(/Replacement document must not contain atomic operators/);
      expect((await errorOf(coll().updateOne({ _id: 1 }, { a: 2 }))).message).toMatch(/Update document requires atomic operators/);
      expect((await errorOf(coll().updateOne({ _id: 1 }, { $bogus: { a: 2 } }))).message).toMatch(/\$bogus/);
      expect((await errorOf(coll().updateOne({ _id: 1 }, { $set: { _id: 2 } }))).code).toBe(66);
    });

    it('finds and modifies one document atomically', async () => {
      await coll().insertMany([{ _id: 1, n: 1 }, { _id: 2, n: 2 }]);
      expect(await coll().findOneAndUpdate({}, { $inc: { n: 10 } }, { sort: { n: -1 } })).toEqual({ _id: 2, n: 2 });
      expect(await coll().findOneAndUpdate({ _id: 1 }, { $inc: { n: 10 } }, { returnNewDocument: true, projection: { _id: 0 } })).toEqual({ n: 11 });
      expect(await coll().findOneAndReplace({ _id: 2 }, { r: true }, { returnNewDocument: true })).toEqual({ _id: 2, r: true });
      expect(await coll().findOneAndUpdate({ _id: 3 }, { $set: { n: 3 } }, { upsert: true, returnNewDocument: true })).toEqual({ _id: 3, n: 3 });
      expect(await coll().findOneAndDelete({ _id: 1 })).toEqual({ _id: 1, n: 11 });
      expect(await coll().findOneAndDelete({ _id: 1 })).toBeNull();
    });

    it('deletes one or many', async () => {
      await coll().insertMany([{ k: 1 }, { k: 1 }, { k: 2 }]);
      expect(await coll().deleteOne({ k: 1 })).toEqual({ deletedCount: 1 });
      expect(await coll().deleteMany({})).toEqual({ deletedCount: 2 });
    });

    it('runs ordered and unordered bulk writes', async () => {
      const result = await coll().bulkWrite([
        { insertOne: { document: { _id: 1, v: 1 } } },
        { updateOne: { filter: { _id: 1 }, update: { $set: { v: 2 } } } },
        { updateMany: { filter: { _id: 2 }, update: { $set: { v: 3 } }, upsert: true } },
        { replaceOne: { filter: { _id: 1 }, replacement: { v: 4 } } },
        { deleteOne: { filter: { _id: 2 } } },
      ]);
      expect(result).toMatchObject({ insertedCount: 1, matchedCount: 2, modifiedCount: 2, upsertedCount: 1, deletedCount: 1 });
      const error = await errorOf(coll().bulkWrite([{ insertOne: { document: { _id: 1 } } }, { insertOne: { document: { _id: 5 } } }], { ordered: false }));
      expect(error.code).toBe(11000);
      expect(await coll().countDocuments({ _id: 5 })).toBe(1);
    });
  });

  describe.skipIf(!target.supportsTransactions)('transactions', () => {
    it('commits writes to several collections together', async () => {
      await coll('a').insertOne({ _id: 0 });
      await coll('b').insertOne({ _id: 0 });
      const session = client.startSession();
      await session.withTransaction(async (s) => {
        await coll('a').insertOne({ _id: 1 }, { session: s });
        await coll('b').updateOne({ _id: 0 }, { $set: { moved: true } }, { session: s });
      });
      await session.endSession();
      expect(await coll('a').countDocuments({})).toBe(2);
      expect(await coll('b').findOne({ _id: 0 })).toEqual({ _id: 0, moved: true });
    });

    it('aborts every write of a failed transaction', async () => {
      await coll('a').insertOne({ _id: 0 });
      await coll('b').insertOne({ _id: 0 });
      const session = client.startSession();
      await expect(
        session.withTransaction(async (s) => {
          await coll('a').insertOne({ _id: 1 }, { session: s });
          await coll('b').deleteOne({ _id: 0 }, { session: s });
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      await session.endSession();
      expect(await coll('a').countDocuments({})).toBe(1);
      expect(await coll('b').countDocuments({})).toBe(1);
    });
  });

  describe('change feed', () => {
    it('reports inserts, updates, replaces and deletes in order with their documents', async () => {
      await coll().insertOne({ _id: 0 });
      const stream = coll().watch([], { fullDocument: 'updateLookup' });
      try {
        await coll().insertOne({ _id: 1, a: 1, b: 1 });
        await coll().updateOne({ _id: 1 }, { $set: { a: 2 }, $unset: { b: '' } });
        await coll().replaceOne({ _id: 1 }, { c: 3 });
        await coll().deleteOne({ _id: 1 });
        const insert = await stream.next();
        expect(insert).toMatchObject({ operationType: 'insert', documentKey: { _id: 1 }, fullDocument: { _id: 1, a: 1, b: 1 }, ns: { db: dbName, coll: 'items' } });
        const update = await stream.next();
        expect(update.operationType).toBe('update');
        expect(update.updateDescription).toMatchObject({ updatedFields: { a: 2 }, removedFields: ['b'] });
        expect((await stream.next()).operationType).toBe('replace');
        const removed = await stream.next();
        expect(removed).toMatchObject({ operationType: 'delete', documentKey: { _id: 1 } });
        expect(stream.resumeToken).toEqual(removed._id);
      } finally {
        await stream.close();
      }
    });

    it('resumes after a token without repeating or skipping events', async () => {
      const stream = coll().watch();
      await coll().insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
      const first = await stream.next();
      await stream.close();
      const resumed = coll().watch([], { resumeAfter: first._id });
      try {
        expect((await resumed.next()).documentKey).toEqual({ _id: 2 });
        expect((await resumed.next()).documentKey).toEqual({ _id: 3 });
      } finally {
        await resumed.close();
      }
    });
  });
}
