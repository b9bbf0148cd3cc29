import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatastoreError } from '../api/datastore.error';
import { type CollectionHandle, type DataSourceClient, type Document } from '../api/data-source';
import { openEmbeddedClient } from './embedded-client';

// The query-language surface MongoDB 7 offers beyond plain CRUD: pipeline updates, hint, let, comment,
// sort on single-document updates (as 8.0), _id key validation, $out/$merge and cross-collection stages.
describe('the embedded engine query language', () => {
  let dir: string;
  let client: DataSourceClient;
  let coll: CollectionHandle;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-query-language-'));
    client = openEmbeddedClient(dir);
    coll = client.db('app').collection('items');
    await coll.insertMany([
      { _id: 1, x: 1, t: { u: 1 } },
      { _id: 2, x: 2 },
      { _id: 3, x: 3 },
    ]);
  });
  afterEach(async () => {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function failure(promise: Promise<unknown>): Promise<DatastoreError> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DatastoreError);
    return error as DatastoreError;
  }

  describe('updates with an aggregation pipeline', () => {
    it('keeps the stored _id when $project and $replaceRoot leave it out', async () => {
      await coll.updateOne({ _id: 1 }, [{ $project: { x: 1, _id: 0 } }, { $addFields: { y: 5 } }]);
      await coll.updateOne({ _id: 2 }, [{ $replaceWith: { z: '$x' } }]);
      await coll.updateMany({ _id: 3 }, [{ $unset: '_id' }, { $set: { w: { $add: ['$x', 1] } } }]);
      expect(await coll.find({}, undefined, { sort: { _id: 1 } }).toArray()).toEqual([
        { _id: 1, x: 1, y: 5 },
        { _id: 2, z: 2 },
        { _id: 3, x: 3, w: 4 },
      ]);
    });

    it('refuses a pipeline that changes _id with ImmutableField', async () => {
      const error = await failure(coll.findOneAndUpdate({ _id: 1 }, [{ $set: { _id: 9 } }]));
      expect(error.code).toBe(66);
      expect(await coll.findOne({ _id: 1 })).toMatchObject({ x: 1 });
    });

    it('runs in bulk writes and findOneAndUpdate', async () => {
      await coll.bulkWrite([{ updateOne: { filter: { _id: 1 }, update: [{ $replaceRoot: { newRoot: '$t' } }] } }]);
      const after = await coll.findOneAndUpdate({ _id: 2 }, [{ $project: { x: 1 } }, { $set: { a: 1 } }], { returnNewDocument: true });
      expect(after).toEqual({ _id: 2, x: 2, a: 1 });
      expect(await coll.findOne({ _id: 1 })).toEqual({ _id: 1, u: 1 });
    });
  });

  describe('hint', () => {
    it('accepts an existing index by name or key on every operation', async () => {
      await coll.createIndex({ x: 1 });
      expect(await coll.find({ x: { $gt: 1 } }, undefined, { hint: 'x_1' }).toArray()).toHaveLength(2);
      expect(await coll.countDocuments({}, { hint: { _id: 1 } })).toBe(3);
      expect((await coll.updateOne({ x: 2 }, { $set: { y: 1 } }, { hint: { x: 1 } })).modifiedCount).toBe(1);
      expect((await coll.deleteOne({ x: 3 }, { hint: '_id_' })).deletedCount).toBe(1);
      expect(await coll.aggregate([{ $match: { x: 1 } }], { hint: 'x_1' }).toArray()).toHaveLength(1);
    });

    it('answers BadValue for a hint naming no index, and writes nothing', async () => {
      const attempts: Promise<unknown>[] = [
        coll.find({}, undefined, { hint: 'nope_1' }).toArray(),
        coll.countDocuments({}, { hint: { y: 1 } }),
        coll.updateMany({}, { $set: { y: 1 } }, { hint: 'nope_1' }),
        coll.replaceOne({ _id: 1 }, { y: 1 }, { hint: { x: -1 } }),
        coll.deleteMany({}, { hint: 'nope_1' }),
        coll.findOneAndDelete({}, { hint: 'nope_1' }),
        coll.aggregate([], { hint: 'nope_1' }).toArray(),
      ];
      for (const attempt of attempts) {
        const error = await failure(attempt);
        expect(error.code).toBe(2);
        expect(error.message).toBe('hint provided does not correspond to an existing index');
      }
      const bulk = await failure(coll.bulkWrite([{ deleteOne: { filter: { _id: 1 }, hint: 'nope_1' } }]));
      expect(bulk.writeErrors?.[0]).toMatchObject({ index: 0, code: 2 });
      expect(await coll.countDocuments()).toBe(3);
    });
  });

  describe('let variables and comment', () => {
    it('reads $$variables in find $expr, aggregate, update pipelines and deletes', async () => {
      const found = await coll.find({ $expr: { $eq: ['$x', '$$target'] } }, undefined, { let: { target: 2 }, comment: 'by let' }).toArray();
      expect(found).toEqual([{ _id: 2, x: 2 }]);
      const projected = await coll.aggregate([{ $match: { _id: 1 } }, { $project: { v: '$$v', _id: 0 } }], { let: { v: { $literal: '$x' } } }).toArray();
      expect(projected).toEqual([{ v: '$x' }]);
      await coll.updateOne({ $expr: { $eq: ['$_id', '$$id'] } }, [{ $set: { y: '$$y' } }], { let: { id: 3, y: { $add: [1, 1] } } });
      expect(await coll.findOne({ _id: 3 })).toEqual({ _id: 3, x: 3, y: 2 });
      expect((await coll.deleteMany({ $expr: { $lt: ['$x', '$$max'] } }, { let: { max: 3 } })).deletedCount).toBe(2);
    });

    it('refuses an invalid variable name', async () => {
      const error = await failure(coll.find({}, undefined, { let: { Upper: 1 } }).toArray());
      expect(error.code).toBe(16870);
    });
  });

  describe('sort on updateOne and replaceOne (as MongoDB 8.0)', () => {
    it('changes the first matching document in sort order', async () => {
      await coll.updateOne({}, { $set: { top: true } }, { sort: { x: -1 } });
      await coll.replaceOne({ x: { $lt: 3 } }, { replaced: true }, { sort: { x: -1 } });
      await coll.bulkWrite([{ updateOne: { filter: { x: { $exists: true } }, update: { $set: { low: true } }, sort: { x: 1 } } }]);
      expect(await coll.find({}, undefined, { sort: { _id: 1 } }).toArray()).toEqual([
        { _id: 1, x: 1, t: { u: 1 }, low: true },
        { _id: 2, replaced: true },
        { _id: 3, x: 3, top: true },
      ]);
    });

    it('refuses sort on updateMany', async () => {
      const error = await failure(coll.updateMany({}, { $set: { y: 1 } }, { sort: { x: 1 } }));
      expect(error.codeName).toBe('InvalidOptions');
    });
  });

  describe('field names', () => {
    it("refuses an _id holding a $-prefixed key at any depth with MongoDB's DollarPrefixedFieldName", async () => {
      for (const _id of [{ $a: 1 }, { a: { $b: 1 } }]) {
        const error = await failure(coll.insertOne({ _id }));
        expect(error.code).toBe(52);
        expect(error.message).toMatch(/_id fields may not contain '\$'-prefixed fields: \$\w is not valid for storage\./);
      }
    });

    it('stores dotted and $-prefixed fields outside _id, as MongoDB 5.0+', async () => {
      await coll.insertOne({ _id: 10, 'a.b': 1, $c: 2, n: { 'd.e': 3, $f: 4 } });
      expect(await coll.findOne({ _id: 10 })).toEqual({ _id: 10, 'a.b': 1, $c: 2, n: { 'd.e': 3, $f: 4 } });
    });
  });

  describe('$out and $merge', () => {
    it('$out replaces the target with the results and keeps its indexes', async () => {
      const target = client.db('app').collection('report');
      await target.insertOne({ _id: 'old' });
      await target.createIndex({ x: 1 }, { name: 'x_1' });
      expect(await coll.aggregate([{ $match: { x: { $gte: 2 } } }, { $project: { x: 1 } }, { $out: 'report' }]).toArray()).toEqual([]);
      expect(await target.find({}, undefined, { sort: { _id: 1 } }).toArray()).toEqual([
        { _id: 2, x: 2 },
        { _id: 3, x: 3 },
      ]);
      expect((await target.listIndexes()).map((i) => i.name)).toContain('x_1');
    });

    it('$out writes nothing when its results hold a duplicate _id', async () => {
      const target = client.db('other').collection('report');
      await target.insertOne({ _id: 'kept' });
      const error = await failure(coll.aggregate([{ $replaceWith: { _id: 'same' } }, { $out: { db: 'other', coll: 'report' } }]).toArray());
      expect(error.code).toBe(11000);
      expect(await target.find().toArray()).toEqual([{ _id: 'kept' }]);
    });

    it('$merge merges, replaces, keeps, fails or runs a pipeline on matches', async () => {
      const target = client.db('app').collection('totals');
      await target.insertMany([{ _id: 1, total: 10, keep: true }, { _id: 2, total: 20 }]);
      await coll.aggregate([{ $match: { _id: 1 } }, { $project: { total: '$x' } }, { $merge: { into: 'totals' } }]).toArray();
      expect(await target.findOne({ _id: 1 })).toEqual({ _id: 1, total: 1, keep: true });
      await coll.aggregate([{ $project: { total: '$x' } }, { $merge: { into: 'totals', whenMatched: [{ $set: { total: { $add: ['$total', '$$new.total'] } } }], whenNotMatched: 'discard' } }]).toArray();
      expect(await target.find({}, undefined, { sort: { _id: 1 } }).toArray()).toEqual([
        { _id: 1, total: 2, keep: true },
        { _id: 2, total: 22 },
      ]);
      const error = await failure(coll.aggregate([{ $merge: { into: 'totals', whenMatched: 'fail' } }]).toArray());
      expect(error.code).toBe(11000);
      const notMatched = await failure(coll.aggregate([{ $match: { _id: 3 } }, { $merge: { into: 'totals', whenNotMatched: 'fail' } }]).toArray());
      expect(notMatched.code).toBe(13113);
    });

    it('refuses $merge on a field without a unique index, and write stages anywhere but last', async () => {
      expect((await failure(coll.aggregate([{ $merge: { into: 'x', on: 'x' } }]).toArray())).code).toBe(51183);
      expect((await failure(Promise.resolve().then(() => coll.aggregate([{ $out: 'x' }, { $match: {} }]).toArray()))).code).toBe(40601);
      expect((await failure(Promise.resolve().then(() => coll.aggregate([{ $facet: { a: [{ $out: 'x' }] } }]).toArray()))).code).toBe(40600);
    });

    it('refuses $out inside a transaction', async () => {
      const session = client.startSession();
      session.startTransaction();
      const error = await failure(Promise.resolve().then(() => coll.aggregate([{ $out: 'x' }], { session }).toArray()));
      expect(error.code).toBe(263);
      await session.abortTransaction();
      await session.endSession();
    });
  });

  describe('stages reading other collections', () => {
    it('$lookup, $unionWith and $graphLookup read other collections, nested in $facet too', async () => {
      const tags = client.db('app').collection('tags');
      await tags.insertMany([{ _id: 't1', item: 1, parent: null }, { _id: 't2', item: 1, parent: 't1' }]);
      const [facet] = await coll
        .aggregate([
          { $match: { _id: 1 } },
          {
            $facet: {
              joined: [{ $lookup: { from: 'tags', localField: '_id', foreignField: 'item', as: 'tags' } }, { $project: { n: { $size: '$tags' } } }],
              union: [{ $project: { _id: 1 } }, { $unionWith: { coll: 'tags', pipeline: [{ $project: { _id: 1 } }] } }],
              graph: [{ $graphLookup: { from: 'tags', startWith: 't2', connectFromField: 'parent', connectToField: '_id', as: 'chain' } }, { $project: { n: { $size: '$chain' } } }],
            },
          },
        ])
        .toArray();
      expect(facet).toEqual({ joined: [{ _id: 1, n: 2 }], union: [{ _id: 1 }, { _id: 't1' }, { _id: 't2' }], graph: [{ _id: 1, n: 2 }] });
    });

    it('answers malformed cross-collection stages, at any depth, with MongoDB errors and no engine internals', async () => {
      const malformed: [Document, number][] = [
        [{ $lookup: { from: 5, as: 'x', localField: 'a', foreignField: 'b' } }, 9],
        [{ $lookup: { from: 'tags' } }, 9],
        [{ $lookup: { from: 'tags', localField: 'x', as: 'y' } }, 9],
        [{ $graphLookup: { from: 'tags' } }, 40103],
        [{ $facet: { a: [{ $graphLookup: { from: 'tags', startWith: '$x', connectFromField: 3, connectToField: '_id', as: 'q' } }] } }, 40103],
        [{ $unionWith: 5 }, 9],
        [{ $facet: 3 }, 40169],
        [{ $facet: { a: [{ $unionWith: { coll: 'tags', pipeline: [{ $lookup: { from: 'tags', as: 'z' } }] } }] } }, 9],
      ];
      for (const [stage, code] of malformed) {
        const error = await failure(Promise.resolve().then(() => coll.aggregate([stage]).toArray()));
        expect({ stage, code: error.code }).toEqual({ stage, code });
        expect(error.message).not.toMatch(/Cannot read|is not a function|undefined \(reading|TypeError/);
      }
    });
  });

  // mingo's own operators answer these otherwise than MongoDB 7: the engine registers its own (see engine/mingo.ts),
  // which compare strings in binary order when no collation runs.
  describe('where mingo answers otherwise than MongoDB', () => {
    const ids = (docs: Document[]): unknown[] => docs.map((d) => d._id);

    it('matches $all as an $and of equalities, on a field that is not an array too, and nothing for an empty $all', async () => {
      await coll.insertMany([
        { _id: 10, a: 'x' },
        { _id: 11, a: ['x', 'y'] },
        { _id: 12, a: ['y'] },
        { _id: 13, a: [['x']] },
        { _id: 14, a: 1 },
      ]);
      const found = async (filter: Document): Promise<unknown[]> => ids(await coll.find(filter, undefined, { sort: { _id: 1 } }).toArray());
      expect(await found({ a: { $all: ['x'] } })).toEqual([10, 11]);
      expect(await found({ a: { $all: ['x', 'y'] } })).toEqual([11]);
      expect(await found({ a: { $all: [1] } })).toEqual([14]);
      expect(await found({ a: { $all: [/^x/] } })).toEqual([10, 11]);
      expect(await found({ a: { $all: [['x']] } })).toEqual([13]);
      expect(await found({ a: { $all: [{ $elemMatch: { $eq: 'y' } }] } })).toEqual([11, 12]);
      // {$all: [null]} is {a: null}: documents without the field.
      expect(await found({ a: { $all: [null] } })).toEqual([1, 2, 3]);
      expect(await found({ a: { $all: [] } })).toEqual([]);
      expect(ids(await coll.aggregate([{ $match: { a: { $all: ['x'] } } }, { $sort: { _id: 1 } }]).toArray())).toEqual([10, 11]);
      expect((await failure(coll.find({ a: { $all: 'x' } }).toArray())).codeName).toBe('BadValue');
    });

    it("runs $lookup's pipeline over the foreign documents whose foreignField matches localField only", async () => {
      await client.db('app').collection('stock').insertMany([
        { _id: 1, sku: 'b', qty: 3 },
        { _id: 2, sku: 'z', qty: 2 },
        { _id: 3, sku: 'a', qty: 0 },
        { _id: 4, sku: 'a', qty: 5 },
      ]);
      await coll.insertMany([
        { _id: 10, item: 'a' },
        { _id: 11, item: 'c' },
        { _id: 12, item: ['a', 'b'] },
      ]);
      const lookup = { $lookup: { from: 'stock', localField: 'item', foreignField: 'sku', let: { least: 1 }, pipeline: [{ $match: { $expr: { $gte: ['$qty', '$$least'] } } }, { $project: { qty: 0 } }], as: 'in' } };
      const joined = await coll.aggregate([{ $match: { _id: { $gte: 10 } } }, lookup, { $project: { in: 1 } }, { $sort: { _id: 1 } }]).toArray();
      expect(joined).toEqual([
        { _id: 10, in: [{ _id: 4, sku: 'a' }] },
        { _id: 11, in: [] },
        // In the foreign collection's order (a scan's, as MongoDB's without an index), not the local array's.
        { _id: 12, in: [{ _id: 1, sku: 'b' }, { _id: 4, sku: 'a' }] },
      ]);
      const plain = await coll.aggregate([{ $match: { _id: 12 } }, { $lookup: { from: 'stock', localField: 'item', foreignField: 'sku', as: 'in' } }]).toArray();
      expect(ids(plain[0].in as Document[])).toEqual([1, 3, 4]);
    });

    it('compares whole values in BSON order in expressions: an array is not equal to one of its elements', async () => {
      await coll.insertOne({ _id: 20, arr: [1, 2] });
      const [row] = await coll
        .aggregate([
          { $match: { _id: 20 } },
          {
            $project: {
              _id: 0,
              eq: { $eq: ['$arr', 1] },
              ne: { $ne: ['$arr', 1] },
              whole: { $eq: ['$arr', [1, 2]] },
              gt: { $gt: ['$arr', 1] },
              lt: { $lt: ['$arr', 1] },
              cmp: { $cmp: ['$arr', 1] },
              in: { $in: ['$arr', [1, 2]] },
              stringAboveNumber: { $gt: ['a', 1] },
              nullBelowNumber: { $lt: [null, 1] },
              objectBelowArray: { $lt: [{ a: 1 }, [0]] },
              // Field order counts in a document's comparison.
              fieldOrder: { $eq: [{ a: 1, b: 2 }, { b: 2, a: 1 }] },
              filtered: { $filter: { input: [[1, 2], 1, 2], cond: { $eq: ['$$this', '$arr'] } } },
            },
          },
        ])
        .toArray();
      expect(row).toEqual({
        eq: false,
        ne: true,
        whole: true,
        gt: true,
        lt: false,
        cmp: 1,
        in: false,
        stringAboveNumber: true,
        nullBelowNumber: true,
        objectBelowArray: true,
        fieldOrder: false,
        filtered: [[1, 2]],
      });
      expect(ids(await coll.find({ $expr: { $eq: ['$arr', 1] } }).toArray())).toEqual([]);
    });

    it('tells a missing field from null in expressions, not in query filters', async () => {
      await coll.insertOne({ _id: 20, n: null });
      const [row] = await coll
        .aggregate([
          { $match: { _id: 20 } },
          {
            $project: {
              _id: 0,
              missingIsNull: { $eq: ['$missing', null] },
              nullIsNull: { $eq: ['$n', null] },
              missingNotNull: { $ne: ['$missing', null] },
              missingBelowNull: { $lt: ['$missing', null] },
              cmp: { $cmp: ['$missing', null] },
              missingIn: { $in: ['$missing', [null]] },
              index: { $indexOfArray: [[null], '$missing'] },
              ifNull: { $ifNull: ['$missing', 'default'] },
              type: { $type: '$missing' },
            },
          },
        ])
        .toArray();
      expect(row).toEqual({ missingIsNull: false, nullIsNull: true, missingNotNull: true, missingBelowNull: true, cmp: -1, missingIn: false, index: -1, ifNull: 'default', type: 'missing' });
      expect(ids(await coll.find({ $expr: { $eq: ['$n', null] } }).toArray())).toEqual([20]);
      expect(ids(await coll.find({ n: null }, undefined, { sort: { _id: 1 } }).toArray())).toEqual([1, 2, 3, 20]);
    });

    it('orders and deduplicates mixed types in BSON order in $max, $min, $sortArray and the set operators', async () => {
      await coll.insertMany([
        { _id: 20, v: 'a' },
        { _id: 21, v: [0] },
        { _id: 22, v: null },
      ]);
      const [row] = await coll
        .aggregate([
          { $match: { _id: 1 } },
          {
            $project: {
              _id: 0,
              max: { $max: [1, 'a', null] },
              min: { $min: [1, 'a', null] },
              maxDocument: { $max: [{ a: 1 }, [0], 'z'] },
              sorted: { $sortArray: { input: [3, 'a', null, [1], { a: 1 }, true, 1], sortBy: 1 } },
              union: { $sortArray: { input: { $setUnion: [[3, 'a', 1], [null, 'a', 1, [1]]] }, sortBy: 1 } },
              distinctDocuments: { $size: { $setUnion: [[{ a: 1, b: 2 }], [{ b: 2, a: 1 }]] } },
            },
          },
        ])
        .toArray();
      expect(row).toEqual({
        max: 'a',
        min: 1,
        maxDocument: [0],
        sorted: [null, 1, 3, 'a', { a: 1 }, [1], true],
        union: [null, 1, 3, 'a', [1]],
        distinctDocuments: 2,
      });
      const [group] = await coll.aggregate([{ $group: { _id: null, max: { $max: '$v' }, min: { $min: '$v' } } }]).toArray();
      expect(group).toEqual({ _id: null, max: [0], min: 'a' });
    });

    it('$bucketAuto orders values of mixed types in BSON order, missing as null', async () => {
      await coll.insertMany([
        { _id: 20, v: 'a' },
        { _id: 21, v: null },
        { _id: 22, v: 5 },
      ]);
      // Two documents a bucket; the first takes every null (1, 2 and 3 have no v) and ends where the next begins.
      const buckets = await coll.aggregate([{ $bucketAuto: { groupBy: '$v', buckets: 3, output: { ids: { $push: '$_id' } } } }]).toArray();
      expect(buckets).toEqual([
        { _id: { min: null, max: 5 }, ids: [1, 2, 3, 21] },
        { _id: { min: 5, max: 'a' }, ids: [22, 20] },
      ]);
      const even = await coll.aggregate([{ $match: { _id: { $lte: 3 } } }, { $bucketAuto: { groupBy: '$x', buckets: 2 } }]).toArray();
      expect(even).toEqual([
        { _id: { min: 1, max: 3 }, count: 2 },
        { _id: { min: 3, max: 3 }, count: 1 },
      ]);
    });

    it('$densify partitions by values of any type and fills each partition on its own steps', async () => {
      await coll.deleteMany({});
      await coll.insertMany([
        { _id: 1, p: 1, v: 1 },
        { _id: 2, p: 1, v: 4 },
        { _id: 3, p: 'b', v: 2 },
        { _id: 4, p: 'b', v: 3.5 },
        { _id: 5, v: 7 },
        { _id: 6, p: 1 },
      ]);
      const dense = async (range: Document, fields = ['p']): Promise<unknown[]> => {
        const docs = await coll.aggregate([{ $densify: { field: 'v', ...(fields.length > 0 ? { partitionByFields: fields } : {}), range } }, { $project: { _id: 0 } }]).toArray();
        return docs.map((d) => `${String(d.p)}:${String(d.v)}`).sort();
      };
      expect(await dense({ step: 1, bounds: 'partition' })).toEqual(['1:1', '1:2', '1:3', '1:4', '1:undefined', 'b:2', 'b:3', 'b:3.5', 'undefined:7']);
      expect(await dense({ step: 2, bounds: [0, 5] })).toEqual(['1:0', '1:1', '1:2', '1:4', '1:undefined', 'b:0', 'b:2', 'b:3.5', 'b:4', 'undefined:0', 'undefined:2', 'undefined:4', 'undefined:7']);
      expect(await dense({ step: 3, bounds: 'full' })).toEqual(['1:1', '1:4', '1:7', '1:undefined', 'b:1', 'b:2', 'b:3.5', 'b:4', 'b:7', 'undefined:1', 'undefined:4', 'undefined:7']);
      expect(await dense({ step: 3, bounds: 'full' }, [])).toEqual(['1:1', '1:4', '1:undefined', 'b:2', 'b:3.5', 'undefined:7']);
      await coll.insertMany([{ _id: 10, at: new Date('2024-01-30T00:00:00Z') }, { _id: 11, at: new Date('2024-02-02T00:00:00Z') }]);
      const dates = await coll.aggregate([{ $match: { at: { $exists: true } } }, { $densify: { field: 'at', range: { step: 1, unit: 'day', bounds: 'full' } } }, { $project: { _id: 0, at: 1 } }]).toArray();
      expect(dates.map((d) => (d.at as Date).toISOString().slice(0, 10))).toEqual(['2024-01-30', '2024-01-31', '2024-02-01', '2024-02-02']);
      const refused = await failure(coll.aggregate([{ $densify: { field: 'v', range: { step: 1, bounds: 'partition' } } }]).toArray());
      expect(refused.code).toBe(5733408);
    });

    it('$fill fills by value, by the last value seen and linearly, per partition', async () => {
      await coll.deleteMany({});
      await coll.insertMany([
        { _id: 1, p: 'a', v: 1, w: null },
        { _id: 2, p: 'a', v: null },
        { _id: 3, p: 'b', v: null },
        { _id: 4, p: 'a', v: 4 },
        { _id: 5, p: 'b', v: 10 },
        { _id: 6, p: 'b', v: null },
      ]);
      const fill = async (spec: Document): Promise<Document[]> => coll.aggregate([{ $fill: spec }, { $sort: { _id: 1 } }]).toArray();
      expect((await fill({ partitionByFields: ['p'], sortBy: { _id: 1 }, output: { v: { method: 'locf' }, w: { value: 0 } } })).map((d) => [d.v, d.w])).toEqual([
        [1, 0],
        [1, 0],
        [null, 0],
        [4, 0],
        [10, 0],
        [10, 0],
      ]);
      expect((await fill({ partitionBy: '$p', sortBy: { _id: 1 }, output: { v: { method: 'linear' } } })).map((d) => d.v)).toEqual([1, 2, null, 4, 10, null]);
    });
  });

  describe('window functions', () => {
    it('computes $setWindowFields outputs per partition, and still refuses a script operator inside the stage', async () => {
      await coll.insertMany([
        { _id: 4, x: 1 },
        { _id: 5, x: 2 },
      ]);
      const running = await coll.aggregate([{ $setWindowFields: { partitionBy: '$x', sortBy: { _id: 1 }, output: { seen: { $sum: 1, window: { documents: ['unbounded', 'current'] } } } } }, { $sort: { _id: 1 } }, { $project: { _id: 1, seen: 1 } }]).toArray();
      expect(running).toEqual([
        { _id: 1, seen: 1 },
        { _id: 2, seen: 1 },
        { _id: 3, seen: 1 },
        { _id: 4, seen: 2 },
        { _id: 5, seen: 2 },
      ]);
      const ranked = await coll.aggregate([{ $setWindowFields: { sortBy: { x: -1 }, output: { rank: { $denseRank: {} } } } }, { $sort: { _id: 1 } }, { $project: { _id: 0, rank: 1 } }]).toArray();
      expect(ranked.map((d) => d.rank)).toEqual([3, 2, 1, 3, 2]);
      const script = { $function: { body: 'function () { return 1; }', args: [], lang: 'js' } };
      const error = await failure(coll.aggregate([{ $setWindowFields: { sortBy: { _id: 1 }, output: { f: { $push: script } } } }]).toArray());
      expect(error.message).toMatch(/scriptEnabled/);
    });
  });
});
