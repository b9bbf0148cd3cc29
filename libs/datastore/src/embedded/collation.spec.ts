import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DatastoreError } from '../api/datastore.error';
import { type CollectionHandle, type Document } from '../api/data-source';
import { compareValues } from '../bson/values';
import { compileCollation, withCollation } from '../engine/collation';
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

    it('refuses, rather than answers in binary order, filters it cannot compare by the collation', async () => {
      await expect(coll.find({ w: { $not: { $eq: 'CAFE' } } }, undefined, { collation: ci }).toArray()).rejects.toMatchObject({ code: 115, codeName: 'CommandNotSupported' });
      await expect(coll.aggregate([{ $sort: { _id: 1 } }, { $match: { $expr: { $eq: ['$w', 'CAFE'] } } }], { collation: ci }).toArray()).rejects.toMatchObject({ code: 115 });
      await expect(coll.deleteMany({ list: { $elemMatch: { $eq: 'a' } } }, { collation: ci })).rejects.toMatchObject({ code: 115 });
      expect(await coll.countDocuments({})).toBe(4);
      // Regular expressions and types name no string to compare: they run.
      expect(ids(await coll.find({ w: { $regex: '^caf', $options: 'i' }, list: { $exists: false } }, undefined, { collation: ci, sort: { _id: 1 } }).toArray())).toEqual([1, 2, 3]);
      expect(ids(await coll.find({ w: { $type: 'string' }, _id: { $lt: 2 } }, undefined, { collation: ci }).toArray())).toEqual([1]);
    });

    it('applies to views, updates, replacements and findOneAndDelete', async () => {
      await client.db('app').createCollection('words_view', { viewOn: 'words', pipeline: [{ $match: { _id: { $lte: 3 } } }] });
      expect(ids(await client.db('app').collection('words_view').find({ w: 'CAFE' }, undefined, { collation: ci, sort: { _id: 1 } }).toArray())).toEqual([1, 2]);
      expect(await coll.updateMany({ w: 'CAFE' }, { $set: { hit: true } }, { collation: ci })).toMatchObject({ matchedCount: 2, modifiedCount: 2 });
      expect(await coll.replaceOne({ w: 'TEA' }, { w: 'green tea' }, { collation: ci })).toMatchObject({ matchedCount: 1 });
      expect(await coll.findOneAndDelete({ w: 'CAFÉ' }, { collation: { locale: 'en', strength: 1 }, sort: { _id: -1 } })).toMatchObject({ _id: 3 });
      expect(ids(await coll.find({}, undefined, { sort: { _id: 1 } }).toArray())).toEqual([1, 2, 4]);
      await expect(coll.updateOne({ w: 'x' }, { $set: { y: 1 } }, { collation: { locale: 'klingon' } })).rejects.toMatchObject({ code: 2 });
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
      await expect(client.db('app').createCollection('v', { viewOn: 'names', collation: { locale: 'de' } })).rejects.toMatchObject({ code: 115 });
    });
  });
});
