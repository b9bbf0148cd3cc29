import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DatastoreError } from '../api/datastore.error';
import { type CollectionHandle, type Document } from '../api/data-source';
import { compareValues } from '../bson/values';
import { compileCollation, withCollation } from '../engine/collation';
import { observeSelects } from '../engine/query';
import { openEmbeddedClient } from './embedded-client';

describe('collations', () => {
  describe('compiling a collation document', () => {
    it('maps strength, caseLevel, caseFirst, numericOrdering and alternate onto ICU', () => {
      const at = (collation: Document, a: string, b: string): number => (compileCollation(collation) as (x: string, y: string) => number)(a, b);
      expect(compileCollation(undefined)).toBeUndefined();
      expect(compileCollation({ locale: 'simple' })).toBeUndefined();
      expect(at({ locale: 'en', strength: 1 }, 'résumé', 'RESUME')).toBe(0);
      expect(at({ locale: 'en', strength: 2 }, 'résumé', 'RESUME')).not.toBe(0);
      expect(at({ locale: 'en', strength: 2 }, 'resume', 'RESUME')).toBe(0);
      expect(at({ locale: 'en', strength: 3 }, 'resume', 'RESUME')).not.toBe(0);
      expect(at({ locale: 'en', strength: 1, caseLevel: true }, 'resume', 'résumé')).toBe(0);
      expect(at({ locale: 'en', strength: 1, caseLevel: true }, 'resume', 'Resume')).not.toBe(0);
      expect(at({ locale: 'en', caseFirst: 'upper' }, 'A', 'a')).toBeLessThan(0);
      expect(at({ locale: 'en', caseFirst: 'lower' }, 'A', 'a')).toBeGreaterThan(0);
      expect(at({ locale: 'en', numericOrdering: true }, '2', '10')).toBeLessThan(0);
      expect(at({ locale: 'en' }, '2', '10')).toBeGreaterThan(0);
      expect(at({ locale: 'en', alternate: 'shifted' }, 'e-mail', 'email')).toBe(0);
      expect(at({ locale: 'en' }, 'e-mail', 'email')).not.toBe(0);
      // Locales differ: in Swedish 'ä' sorts after 'z', in German beside 'a'.
      expect(at({ locale: 'sv' }, 'ä', 'z')).toBeGreaterThan(0);
      expect(at({ locale: 'de' }, 'ä', 'z')).toBeLessThan(0);
      expect(at({ locale: 'en_US', strength: 5 }, 'a', 'a')).toBe(0);
    });

    it("refuses what MongoDB refuses, with its codes, and what ICU in Node cannot do with CommandNotSupported", () => {
      const code = (collation: unknown): number => {
        try {
          compileCollation(collation);
        } catch (error) {
          return (error as DatastoreError).code;
        }
        return 0;
      };
      expect(code({ locale: 'xx' })).toBe(2);
      expect(code({ locale: 'en', strength: 0 })).toBe(2);
      expect(code({ locale: 'en', strength: 2.5 })).toBe(2);
      expect(code({ locale: 'en', caseFirst: 'UPPER' })).toBe(2);
      expect(code({ locale: 'en', alternate: 'ignore' })).toBe(2);
      expect(code({ locale: 'en', numericOrdering: 'yes' })).toBe(14);
      expect(code({ locale: 7 })).toBe(14);
      expect(code('en')).toBe(14);
      expect(code({})).toBe(40414);
      expect(code({ locale: 'en', colour: 'red' })).toBe(40415);
      expect(code({ locale: 'simple', strength: 2 })).toBe(2);
      expect(code({ locale: 'fr', backwards: true })).toBe(115);
      expect(code({ locale: 'en', alternate: 'shifted', maxVariable: 'space' })).toBe(115);
      expect(code({ locale: 'fr', backwards: false, alternate: 'shifted', maxVariable: 'punct', normalization: true })).toBe(0);
    });

    it('compares strings by the collation only inside withCollation, other types in BSON order', () => {
      const ci = { locale: 'en', strength: 2 };
      expect(withCollation(ci, () => compareValues('a', 'A'))).toBe(0);
      expect(compareValues('a', 'A')).toBeGreaterThan(0);
      expect(withCollation(ci, () => compareValues({ k: ['X'] }, { k: ['x'] }))).toBe(0);
      expect(withCollation(ci, () => compareValues(1, 'a'))).toBeLessThan(0);
      expect(() => withCollation(ci, () => { throw new Error('boom'); })).toThrow('boom');
      expect(compareValues('a', 'A')).toBeGreaterThan(0);
    });
  });

  describe('on the embedded engine', () => {
    let dir: string;
    let client: ReturnType<typeof openEmbeddedClient>;
    let coll: CollectionHandle;
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tessera-collation-'));
      client = openEmbeddedClient(dir);
      coll = client.db('app').collection('words');
      await coll.insertMany([
        { _id: 1, w: 'cafe', n: { w: 'Tea' } },
        { _id: 2, w: 'Cafe' },
        { _id: 3, w: 'café' },
        { _id: 4, w: 'tea', list: ['A', 'b'] },
      ]);
      await coll.createIndex({ w: 1 });
    });
    afterEach(async () => {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const ids = (docs: Document[]): unknown[] => docs.map((d) => d._id);
    const ci = { locale: 'en', strength: 2 };

    it('matches dotted paths and array elements by the collation, past the binary index', async () => {
      expect(ids(await coll.find({ w: 'CAFE' }, undefined, { collation: ci, sort: { _id: 1 } }).toArray())).toEqual([1, 2]);
      expect(ids(await coll.find({ 'n.w': 'tea' }, undefined, { collation: ci }).toArray())).toEqual([1]);
      expect(ids(await coll.find({ list: { $all: ['a'] } }, undefined, {}).toArray())).toEqual([]);
      expect(ids(await coll.find({ list: 'a' }, undefined, { collation: ci }).toArray())).toEqual([4]);
      expect(ids(await coll.find({ $or: [{ w: 'TEA' }, { _id: 3 }] }, undefined, { collation: ci, sort: { _id: 1 } }).toArray())).toEqual([3, 4]);
      expect(await coll.findOne({ w: 'CAFÉ' }, undefined, { collation: { locale: 'fr', strength: 1 }, sort: { _id: -1 } })).toMatchObject({ _id: 3 });
      // Without the collation the index answers in binary order: nothing is 'CAFE'.
      expect(await coll.countDocuments({ w: 'CAFE' })).toBe(0);
    });

    it('counts distinct values once per collation class, and sorts by it in aggregations', async () => {
      const values = await coll.distinct('w', {}, { collation: { locale: 'en', strength: 1 } });
      expect(values).toEqual(['cafe', 'tea']);
      expect(await coll.distinct('w', {})).toHaveLength(4);
      const sorted = await coll.aggregate([{ $match: { w: { $in: ['CAFE', 'TEA'] } } }, { $sort: { w: -1, _id: 1 } }], { collation: { locale: 'en', strength: 2 } }).toArray();
      expect(ids(sorted)).toEqual([4, 1, 2]);
      // A later $match stage (run by mingo's pipeline) compares by the collation too.
      const later = await coll.aggregate([{ $sort: { _id: 1 } }, { $match: { w: 'CAFE' } }], { collation: ci }).toArray();
      expect(ids(later)).toEqual([1, 2]);
    });

    it('groups keys equal by the collation into one group, in $group and $sortByCount, at any depth of the key', async () => {
      const grouped = await coll.aggregate([{ $sort: { _id: 1 } }, { $group: { _id: '$w', n: { $sum: 1 }, ids: { $push: '$_id' } } }, { $sort: { n: -1, _id: 1 } }], { collation: ci }).toArray();
      // 'cafe' and 'Cafe' are one key at strength 2 (the first met names it); 'café' differs by its accent.
      expect(grouped).toEqual([
        { _id: 'cafe', n: 2, ids: [1, 2] },
        { _id: 'café', n: 1, ids: [3] },
        { _id: 'tea', n: 1, ids: [4] },
      ]);
      const byAccentless = await coll.aggregate([{ $sort: { _id: 1 } }, { $sortByCount: '$w' }], { collation: { locale: 'en', strength: 1 } }).toArray();
      expect(byAccentless).toEqual([
        { _id: 'cafe', count: 3 },
        { _id: 'tea', count: 1 },
      ]);
      const compound = await coll.aggregate([{ $match: { _id: { $lte: 2 } } }, { $group: { _id: { word: '$w' }, n: { $sum: 1 } } }], { collation: ci }).toArray();
      expect(compound).toEqual([{ _id: { word: 'cafe' }, n: 2 }]);
      // Without a collation, binary order: four keys.
      expect(await coll.aggregate([{ $group: { _id: '$w' } }]).toArray()).toHaveLength(4);
    });

    it('groups many distinct strings by the collation, each new one found among the others by bisection', async () => {
      // 60,000 distinct strings in 30,000 classes at strength 2: compared one by one against every class met,
      // this would take hundreds of millions of ICU comparisons (minutes); by bisection, a few hundred thousand.
      const many = client.db('app').collection('many');
      const classes = 30_000;
      await many.insertMany(Array.from({ length: classes * 2 }, (_unused, i) => ({ _id: i, w: `${i % 2 ? 'W' : 'w'}ord ${String(Math.floor(i / 2)).padStart(5, '0')}` })));
      const grouped = await many.aggregate([{ $sort: { _id: 1 } }, { $group: { _id: '$w', n: { $sum: 1 } } }, { $sort: { _id: 1 } }], { collation: ci }).toArray();
      expect(grouped).toHaveLength(classes);
      expect(grouped.every((group) => group.n === 2 && /^word \d{5}$/.test(String(group._id)))).toBe(true);
      expect(grouped.slice(0, 2)).toEqual([
        { _id: 'word 00000', n: 2 },
        { _id: 'word 00001', n: 2 },
      ]);
    });

    it('compares strings by the collation in $not, $expr, $elemMatch, $all, $in with regexes and embedded documents', async () => {
      const find = async (filter: Document, collation: Document | undefined = ci): Promise<unknown[]> => ids(await coll.find(filter, undefined, { collation, sort: { _id: 1 } }).toArray());
      expect(await find({ w: { $not: { $eq: 'CAFE' } } })).toEqual([3, 4]);
      expect(await find({ $expr: { $eq: ['$w', 'CAFE'] } })).toEqual([1, 2]);
      expect(await find({ $expr: { $in: ['$w', ['TEA', 'x']] } })).toEqual([4]);
      expect(await find({ list: { $all: ['a', 'B'] } })).toEqual([4]);
      expect(await find({ list: { $all: ['a', 'B'] } }, { locale: 'simple' })).toEqual([]);
      expect(await find({ n: { w: 'TEA' } })).toEqual([1]);
      expect(await find({ w: { $in: [/^x/, 'CAFE'] } })).toEqual([1, 2]);
      expect(await find({ w: { $gt: 'CAFE', $type: 'string' }, n: { $exists: false } })).toEqual([3, 4]);
      await coll.insertOne({ _id: 5, tags: [{ k: 'Red' }, { k: 'blue' }] });
      expect(await find({ tags: { $elemMatch: { k: 'BLUE' } } })).toEqual([5]);
      expect(await find({ tags: { $elemMatch: { k: 'BLUE' } } }, { locale: 'simple' })).toEqual([]);
      expect(await find({ tags: { k: 'RED' } })).toEqual([5]);
      expect(await find({ tags: { $all: [{ $elemMatch: { k: 'RED' } }, { $elemMatch: { k: 'Blue' } }] } })).toEqual([5]);
      // A projection's $elemMatch compares by the query's collation too.
      expect(await coll.findOne({ _id: 5 }, { tags: { $elemMatch: { k: 'BLUE' } } }, { collation: ci })).toEqual({ _id: 5, tags: [{ k: 'blue' }] });
      expect(await coll.findOne({ _id: 5 }, { tags: { $elemMatch: { k: 'BLUE' } } })).toEqual({ _id: 5 });
      // A later $match stage with $expr, and a delete with $elemMatch.
      expect(ids(await coll.aggregate([{ $sort: { _id: 1 } }, { $match: { $expr: { $eq: ['$w', 'CAFE'] } } }], { collation: ci }).toArray())).toEqual([1, 2]);
      expect(await coll.deleteMany({ list: { $elemMatch: { $eq: 'a' } } }, { collation: ci })).toMatchObject({ deletedCount: 1 });
      // Regular expressions and type names are not collated (as in MongoDB): /^Caf/ matches 'Cafe' only.
      expect(await find({ w: { $regex: '^Caf' } })).toEqual([2]);
      expect(await find({ w: { $not: /^caf/ }, _id: { $lt: 5 } })).toEqual([2]);
    });

    it('evaluates aggregation expressions under the collation, $strcasecmp aside', async () => {
      const project = {
        _id: 0,
        eq: { $eq: ['$w', 'CAFE'] },
        ne: { $ne: ['$w', 'CAFE'] },
        gte: { $gte: ['$w', 'CAFE'] },
        lt: { $lt: ['$w', 'CAFE'] },
        cmp: { $cmp: ['$w', 'CAFE'] },
        in: { $in: ['$w', ['x', 'CAFE']] },
        index: { $indexOfArray: [['x', 'CAFE'], '$w'] },
        union: { $setUnion: [['a', 'A'], ['b', 'B']] },
        intersection: { $setIntersection: [['$w', 'x'], ['CAFE']] },
        difference: { $setDifference: [['$w', 'x'], ['CAFE']] },
        equals: { $setEquals: [['$w'], ['CAFE', 'Cafe']] },
        subset: { $setIsSubset: [['CAFE'], ['$w', 'x']] },
        max: { $max: ['a', 'B'] },
        min: { $min: ['a', 'B'] },
        sorted: { $sortArray: { input: ['b', 'a', 'C'], sortBy: 1 } },
        filtered: { $filter: { input: ['x', 'CAFE', 'Cafe'], cond: { $eq: ['$$this', '$w'] } } },
        branch: { $switch: { branches: [{ case: { $eq: ['$w', 'CAFE'] }, then: 'same' }], default: 'different' } },
        strcasecmp: { $strcasecmp: ['$w', 'CAFÉ'] },
        accentless: { $cmp: ['$w', 'CAFÉ'] },
      };
      const run = async (collation?: Document): Promise<Document[]> => coll.aggregate([{ $match: { _id: 1 } }, { $project: project }], { collation }).toArray();
      expect(await run({ locale: 'en', strength: 2 })).toEqual([
        {
          eq: true,
          ne: false,
          gte: true,
          lt: false,
          cmp: 0,
          in: true,
          index: 1,
          union: ['a', 'b'],
          intersection: ['cafe'],
          difference: ['x'],
          equals: true,
          subset: true,
          max: 'B',
          min: 'a',
          sorted: ['a', 'b', 'C'],
          filtered: ['CAFE', 'Cafe'],
          branch: 'same',
          strcasecmp: -1,
          accentless: -1,
        },
      ]);
      // Strength 1 ignores the accent too; $strcasecmp still does not (it is not collated in MongoDB).
      expect(await run({ locale: 'en', strength: 1 })).toEqual([expect.objectContaining({ accentless: 0, strcasecmp: -1 })]);
      // Binary order without a collation: 'B' < 'a', 'C' < 'a'.
      expect(await run()).toEqual([expect.objectContaining({ eq: false, cmp: 1, index: -1, max: 'a', min: 'B', sorted: ['C', 'a', 'b'], branch: 'different' })]);
    });

    it('accumulates, buckets, joins and windows by the collation', async () => {
      const db = client.db('app');
      const first = <T>(docs: T[]): T => docs[0];
      const sorted = [{ $sort: { _id: 1 } }];
      const extremes = { $group: { _id: null, words: { $addToSet: '$w' }, hi: { $max: '$w' }, lo: { $min: '$w' } } };
      expect(first(await coll.aggregate([...sorted, extremes], { collation: ci }).toArray())).toEqual({ _id: null, words: ['cafe', 'café', 'tea'], hi: 'tea', lo: 'cafe' });
      // Without one, binary order (mingo's own $max and $min answered the first value for strings).
      expect(first(await coll.aggregate([...sorted, extremes]).toArray())).toMatchObject({ hi: 'tea', lo: 'Cafe' });
      // 'Cafe' sorts before 'a' in binary order, after it by the collation.
      const bucket = { $bucket: { groupBy: '$w', boundaries: ['a', 'd', 'n'], default: 'other' } };
      expect(await coll.aggregate([bucket], { collation: ci }).toArray()).toEqual([
        { _id: 'a', count: 3 },
        { _id: 'other', count: 1 },
      ]);
      await db.collection('prices').insertMany([{ _id: 1, word: 'CAFE', price: 3 }, { _id: 2, word: 'TEA', price: 2 }]);
      const lookup = { $lookup: { from: 'prices', localField: 'w', foreignField: 'word', as: 'p' } };
      const joined = await coll.aggregate([...sorted, lookup, { $project: { n: { $size: '$p' } } }], { collation: ci }).toArray();
      expect(joined).toEqual([{ _id: 1, n: 1 }, { _id: 2, n: 1 }, { _id: 3, n: 0 }, { _id: 4, n: 1 }]);
      const concise = { $lookup: { from: 'prices', localField: 'w', foreignField: 'word', pipeline: [{ $project: { _id: 0, price: 1 } }], as: 'p' } };
      expect(await coll.aggregate([{ $match: { _id: { $in: [3, 4] } } }, ...sorted, concise, { $project: { p: 1 } }], { collation: ci }).toArray()).toEqual([
        { _id: 3, p: [] },
        { _id: 4, p: [{ price: 2 }] },
      ]);
      await db.collection('links').insertMany([{ _id: 1, name: 'A', next: 'b' }, { _id: 2, name: 'B', next: 'c' }, { _id: 3, name: 'C', next: null }]);
      const graph = { $graphLookup: { from: 'links', startWith: '$next', connectFromField: 'next', connectToField: 'name', as: 'chain' } };
      const chain = async (collation?: Document): Promise<unknown[]> => {
        const [doc] = await db.collection('links').aggregate([{ $match: { _id: 1 } }, graph], { collation }).toArray();
        return (doc.chain as Document[]).map((d) => d._id).sort();
      };
      expect(await chain(ci)).toEqual([2, 3]);
      expect(await chain()).toEqual([]);
      const windows = { $setWindowFields: { partitionBy: '$w', sortBy: { _id: 1 }, output: { n: { $sum: 1 } } } };
      expect((await coll.aggregate([windows, ...sorted], { collation: ci }).toArray()).map((d) => d.n)).toEqual([2, 2, 1, 1]);
      const ranks = { $setWindowFields: { sortBy: { w: 1 }, output: { r: { $rank: {} }, d: { $denseRank: {} } } } };
      expect((await coll.aggregate([ranks, ...sorted], { collation: ci }).toArray()).map((d) => [d.r, d.d])).toEqual([[1, 1], [1, 1], [3, 2], [4, 3]]);
      expect(await coll.aggregate([ranks, { $match: { _id: 1 } }], { collation: ci }).toArray()).toEqual([{ _id: 1, w: 'cafe', n: { w: 'Tea' }, r: 1, d: 1 }]);
    });

    it('buckets automatically, densifies and fills by the collation', async () => {
      const accentless = { locale: 'en', strength: 1 };
      const auto = [{ $sort: { _id: 1 } }, { $bucketAuto: { groupBy: '$w', buckets: 2 } }];
      // 'cafe', 'Cafe' and 'café' are one value at strength 1: one bucket takes them all.
      expect(await coll.aggregate(auto, { collation: accentless }).toArray()).toEqual([
        { _id: { min: 'cafe', max: 'tea' }, count: 3 },
        { _id: { min: 'tea', max: 'tea' }, count: 1 },
      ]);
      expect(await coll.aggregate(auto).toArray()).toEqual([
        { _id: { min: 'Cafe', max: 'café' }, count: 2 },
        { _id: { min: 'café', max: 'tea' }, count: 2 },
      ]);
      const readings = client.db('app').collection('readings');
      await readings.insertMany([
        { _id: 1, p: 'A', v: 1, f: 10 },
        { _id: 2, p: 'a', v: 3, f: null },
        { _id: 3, p: 'B', v: 2, f: null },
      ]);
      const densify = [{ $densify: { field: 'v', partitionByFields: ['p'], range: { step: 1, bounds: 'partition' } } }, { $match: { _id: { $exists: false } } }];
      // 'A' and 'a' are one partition: 2 is made between them, with the partition value of the document after the gap.
      expect(await readings.aggregate(densify, { collation: ci }).toArray()).toEqual([{ p: 'a', v: 2 }]);
      expect(await readings.aggregate(densify).toArray()).toEqual([]);
      const fill = [{ $fill: { partitionByFields: ['p'], sortBy: { v: 1 }, output: { f: { method: 'locf' } } } }, { $sort: { _id: 1 } }, { $project: { _id: 0, f: 1 } }];
      expect(await readings.aggregate(fill, { collation: ci }).toArray()).toEqual([{ f: 10 }, { f: 10 }, { f: null }]);
      expect(await readings.aggregate(fill).toArray()).toEqual([{ f: 10 }, { f: null }, { f: null }]);
    });

    it("matches $merge's on fields by the collation, through a unique index of that collation only", async () => {
      const totals = client.db('app').collection('totals');
      await totals.insertMany([{ _id: 1, name: 'cafe', n: 1 }]);
      await totals.createIndex({ name: 1 }, { unique: true, collation: ci });
      const merge = [{ $match: { _id: 2 } }, { $project: { _id: 0, name: '$w', n: { $literal: 2 } } }, { $merge: { into: 'totals', on: 'name', whenMatched: 'merge', whenNotMatched: 'insert' } }];
      await coll.aggregate(merge, { collation: ci }).toArray();
      expect(await totals.find({}, { _id: 0 }).toArray()).toEqual([{ name: 'Cafe', n: 2 }]);
      // The index's collation must be the operation's: a binary $merge finds no index for 'name'.
      await expect(coll.aggregate(merge).toArray()).rejects.toMatchObject({ code: 51183 });
      // A binary $merge matches by code point: 'cafe' is not 'Cafe', and the collated unique index refuses its insert.
      await totals.createIndex({ name: 1 }, { unique: true, name: 'name_binary' });
      await expect(coll.aggregate([{ $match: { _id: 1 } }, ...merge.slice(1)]).toArray()).rejects.toMatchObject({ code: 11000 });
      expect(await totals.find({}, { _id: 0 }).toArray()).toEqual([{ name: 'Cafe', n: 2 }]);
    });

    it('compares strings by the collation in $addToSet, $pull, $pullAll, $min, $max, $push $sort and array filters', async () => {
      await coll.insertOne({ _id: 10, tags: ['Red', 'green'], best: 'm', items: [{ k: 'A', v: 1 }, { k: 'b', v: 2 }] });
      const update = async (change: Document, options: Document = { collation: ci }): Promise<Document | null> => {
        await coll.updateOne({ _id: 10 }, change, options);
        return coll.findOne({ _id: 10 });
      };
      expect(await update({ $addToSet: { tags: 'RED' } })).toMatchObject({ tags: ['Red', 'green'] });
      expect(await update({ $addToSet: { tags: { $each: ['GREEN', 'blue'] } } })).toMatchObject({ tags: ['Red', 'green', 'blue'] });
      expect(await update({ $pull: { tags: 'BLUE' } })).toMatchObject({ tags: ['Red', 'green'] });
      expect(await update({ $push: { tags: { $each: ['apple'], $sort: 1 } } })).toMatchObject({ tags: ['apple', 'green', 'Red'] });
      expect(await update({ $pullAll: { tags: ['APPLE', 'red'] } })).toMatchObject({ tags: ['green'] });
      // 'M' equals 'm' at strength 2 ($min keeps it), 'N' sorts after 'm' ($max takes it); in binary order 'N' < 'm'.
      expect(await update({ $min: { best: 'M' } })).toMatchObject({ best: 'm' });
      expect(await update({ $max: { best: 'N' } })).toMatchObject({ best: 'N' });
      expect(await update({ $max: { best: 'm' } }, {})).toMatchObject({ best: 'm' });
      expect(await update({ $set: { 'items.$[e].v': 9 } }, { collation: ci, arrayFilters: [{ 'e.k': 'a' }] })).toMatchObject({ items: [{ k: 'A', v: 9 }, { k: 'b', v: 2 }] });
      expect(await update({ $pull: { items: { k: 'B' } } })).toMatchObject({ items: [{ k: 'A', v: 9 }] });
      expect(await coll.updateOne({ 'items.k': 'a' }, { $set: { 'items.$.v': 7 } }, { collation: ci })).toMatchObject({ modifiedCount: 1 });
      // Without the collation nothing equals 'RED'.
      expect(await update({ $addToSet: { tags: 'GREEN' } }, {})).toMatchObject({ tags: ['green', 'GREEN'] });
      // A value that only changes case is still a change, and `_id` compares in binary order.
      expect(await coll.updateOne({ w: 'CAFE' }, { $set: { w: 'CAFE' } }, { collation: ci })).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
      await coll.insertOne({ _id: 'abc' });
      await expect(coll.updateOne({ _id: 'ABC' }, { $set: { _id: 'ABC' } }, { collation: ci })).rejects.toMatchObject({ code: 66 });
      expect(await coll.updateOne({ _id: 'ABC' }, { $set: { _id: 'abc', x: 1 } }, { collation: ci })).toMatchObject({ modifiedCount: 1 });
    });

    it('applies to views, updates, replacements and findOneAndDelete', async () => {
      await client.db('app').createCollection('words_view', { viewOn: 'words', pipeline: [{ $match: { _id: { $lte: 3 } } }] });
      expect(ids(await client.db('app').collection('words_view').find({ w: 'CAFE' }, undefined, { sort: { _id: 1 } }).toArray())).toEqual([]);
      // A view's collation is the default of operations on it, and its pipeline runs under it.
      await client.db('app').createCollection('ci_view', { viewOn: 'words', pipeline: [{ $match: { w: { $in: ['CAFE', 'TEA'] } } }], collation: ci });
      const view = client.db('app').collection('ci_view');
      expect(ids(await view.find({}, undefined, { sort: { _id: 1 } }).toArray())).toEqual([1, 2, 4]);
      expect(ids(await view.find({ w: 'CAFE' }, undefined, { sort: { _id: 1 } }).toArray())).toEqual([1, 2]);
      expect(await view.countDocuments({ w: 'tea' }, { collation: { strength: 2, locale: 'en' } })).toBe(1);
      expect(await view.aggregate([{ $group: { _id: '$w', n: { $sum: 1 } } }, { $sort: { _id: 1 } }]).toArray()).toEqual([{ _id: 'cafe', n: 2 }, { _id: 'tea', n: 1 }]);
      // MongoDB refuses another collation on a view (even the simple one on a collated view), and a view on it with another.
      await expect(view.find({ w: 'CAFE' }, undefined, { collation: { locale: 'fr' } }).toArray()).rejects.toMatchObject({ code: 167 });
      await expect(view.countDocuments({}, { collation: { locale: 'simple' } })).rejects.toMatchObject({ code: 167 });
      await expect(client.db('app').collection('words_view').find({}, undefined, { collation: ci }).toArray()).rejects.toMatchObject({ code: 167 });
      await expect(client.db('app').createCollection('view_of_view', { viewOn: 'ci_view' })).rejects.toMatchObject({ code: 167 });
      await client.db('app').createCollection('view_of_view', { viewOn: 'ci_view', collation: { locale: 'en', strength: 2 } });
      expect(await coll.updateMany({ w: 'CAFE' }, { $set: { hit: true } }, { collation: ci })).toMatchObject({ matchedCount: 2, modifiedCount: 2 });
      expect(await coll.replaceOne({ w: 'TEA' }, { w: 'green tea' }, { collation: ci })).toMatchObject({ matchedCount: 1 });
      expect(await coll.findOneAndDelete({ w: 'CAFÉ' }, { collation: { locale: 'en', strength: 1 }, sort: { _id: -1 } })).toMatchObject({ _id: 3 });
      expect(ids(await coll.find({}, undefined, { sort: { _id: 1 } }).toArray())).toEqual([1, 2, 4]);
      await expect(coll.updateOne({ w: 'x' }, { $set: { y: 1 } }, { collation: { locale: 'klingon' } })).rejects.toMatchObject({ code: 2 });
    });

    it('orders, deduplicates and answers with indexes by their collation, across a restart', async () => {
      const plans: string[] = [];
      observeSelects((observed) => plans.push(observed.plan));
      try {
        await coll.createIndex({ w: 1 }, { name: 'w_en2', collation: ci });
        const find = async (filter: Document, options: Document = {}): Promise<unknown[]> => ids(await coll.find(filter, undefined, options).toArray());
        expect(await find({ w: 'CAFE' }, { collation: ci, sort: { _id: 1 } })).toEqual([1, 2]);
        expect(await find({ w: { $gte: 'CAFE', $lt: 'CAFF' } }, { collation: ci, sort: { _id: 1 } })).toEqual([1, 2, 3]);
        expect(await find({ w: { $in: ['CAFÉ', 'TEA'] } }, { collation: { locale: 'en', strength: 2 }, sort: { _id: 1 } })).toEqual([3, 4]);
        expect(plans.splice(0)).toEqual(['IXSCAN w_en2', 'IXSCAN w_en2', 'IXSCAN w_en2']);
        // Sorted by the index's order (equal keys by insertion); binary queries keep the binary index.
        expect(await find({}, { collation: ci, sort: { w: 1 } })).toEqual([1, 2, 3, 4]);
        expect(await find({ w: 'Cafe' })).toEqual([2]);
        expect(await find({ w: 'CAFE' }, { collation: { locale: 'en', strength: 1 }, sort: { _id: 1 } })).toEqual([1, 2, 3]);
        expect(plans.splice(0)).toEqual(['IXSCAN w_en2 (sort)', 'IXSCAN w_1', 'COLLSCAN']);

        // A unique index with a collation refuses strings it calls equal; a collection's collation is its indexes' default.
        await expect(coll.createIndex({ w: 1 }, { name: 'w_unique', unique: true, collation: ci })).rejects.toMatchObject({ code: 11000 });
        const db = client.db('app');
        await db.createCollection('people', { collation: ci });
        const people = db.collection('people');
        await people.createIndex({ email: 1 }, { unique: true });
        await people.createIndex({ code: 1 }, { unique: true, collation: { locale: 'simple' } });
        await people.insertOne({ _id: 'ann', email: 'ann@example.org', code: 'x' });
        await expect(people.insertOne({ _id: 'bob', email: 'ANN@example.org', code: 'y' })).rejects.toMatchObject({ code: 11000 });
        await expect(people.insertOne({ _id: 'ANN', email: 'a2@example.org', code: 'z' })).rejects.toMatchObject({ code: 11000 });
        await people.insertOne({ _id: 'bob', email: 'bob@example.org', code: 'X' });
        await expect(people.updateOne({ _id: 'BOB' }, { $set: { email: 'Ann@Example.org' } })).rejects.toMatchObject({ code: 11000 });
        expect(await people.findOne({ _id: 'BOB' })).toMatchObject({ _id: 'bob' });
        expect((await people.listIndexes()).map((i) => [i.name, i.collation])).toEqual([
          ['_id_', ci],
          ['email_1', ci],
          ['code_1', undefined],
        ]);

        for (const snapshot of [false, true]) {
          if (snapshot) await client.store.snapshot();
          await client.close();
          client = openEmbeddedClient(dir);
          coll = client.db('app').collection('words');
          const reopened = client.db('app').collection('people');
          await expect(reopened.insertOne({ _id: 'carl', email: 'BOB@EXAMPLE.ORG' })).rejects.toMatchObject({ code: 11000 });
          await expect(reopened.insertOne({ _id: 'Ann' })).rejects.toMatchObject({ code: 11000 });
          plans.splice(0);
          expect(await find({ w: 'CAFE' }, { collation: ci, sort: { _id: 1 } })).toEqual([1, 2]);
          expect(plans).toEqual(['IXSCAN w_en2']);
        }
      } finally {
        observeSelects(undefined);
      }
    });

    it("keeps a collection's default collation in the log and in a snapshot", async () => {
      await client.db('app').createCollection('names', { collation: { locale: 'de', strength: 1 } });
      await client.db('app').collection('names').insertMany([{ _id: 1, n: 'Müller' }, { _id: 2, n: 'MULLER' }, { _id: 3, n: 'Meier' }]);
      const reopen = async (): Promise<CollectionHandle> => {
        await client.close();
        client = openEmbeddedClient(dir);
        return client.db('app').collection('names');
      };
      let names = await reopen();
      expect(ids(await names.find({ n: 'muller' }, undefined, { sort: { _id: 1 } }).toArray())).toEqual([1, 2]);
      await client.store.snapshot();
      names = await reopen();
      expect(ids(await names.find({ n: 'muller' }, undefined, { sort: { _id: 1 } }).toArray())).toEqual([1, 2]);
      expect(await names.countDocuments({ n: 'muller' }, { collation: { locale: 'simple' } })).toBe(0);
      // A view's collation is kept too.
      await client.db('app').createCollection('v', { viewOn: 'names', pipeline: [], collation: { locale: 'de', strength: 1 } });
      await reopen();
      expect(ids(await client.db('app').collection('v').find({ n: 'muller' }, undefined, { sort: { _id: 1 } }).toArray())).toEqual([1, 2]);
    });
  });
});
