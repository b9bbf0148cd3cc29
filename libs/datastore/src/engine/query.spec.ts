import fc from 'fast-check';
import { Query } from 'mingo';
import { type Document } from '../bson/values';
import { CollectionState } from './collection-state';
import { plan, select } from './query';

function collectionOf(docs: Document[], indexed: string[] = []): CollectionState {
  const coll = new CollectionState('db', 'c');
  for (const field of indexed) coll.indexes.set(`${field}_1`, coll.createIndex(`${field}_1`, { [field]: 1 }, false, false));
  for (const doc of docs) coll.insert(doc);
  return coll;
}

describe('query planning', () => {
  const docs = Array.from({ length: 1000 }, (_, i) => ({ _id: i, email: `u${i}@x`, age: i % 50, tags: [`t${i % 3}`] }));
  const coll = collectionOf(docs, ['email', 'age', 'tags']);

  it('answers a point query by _id with a lookup, not a scan', () => {
    const p = plan(coll, { _id: 42 });
    expect(p.description).toBe('IDHACK');
    expect([...p.records].map((r) => r.doc._id)).toEqual([42]);
  });

  it('uses a secondary index for equality and touches only the matching entries', () => {
    const p = plan(coll, { email: 'u7@x' });
    expect(p.description).toBe('IXSCAN email_1');
    expect(p.exact).toBe(true);
    expect([...p.records].map((r) => r.doc._id)).toEqual([7]);
  });

  it('walks an index in order for a range with a sort on the same field', () => {
    const p = plan(coll, { age: { $gte: 10, $lt: 12 } }, { age: -1 });
    expect(p.description).toBe('IXSCAN age_1 (sort)');
    expect(p.sorted).toBe(true);
    const ids = select(coll, { age: { $gte: 10, $lt: 12 } }, { sort: { age: -1 }, limit: 3 }).map((r) => r.doc.age);
    expect(ids).toEqual([11, 11, 11]);
  });

  it('does not take sort order from an index holding arrays', () => {
    expect(plan(coll, {}, { tags: 1 }).description).toBe('COLLSCAN');
    expect(plan(coll, { tags: 't1' }).description).toBe('IXSCAN tags_1');
  });

  it('uses a compound index for equality on all its fields or on a leading prefix', () => {
    const compound = collectionOf([]);
    compound.indexes.set('age_1_email_1', compound.createIndex('age_1_email_1', { age: 1, email: 1 }, false, false));
    for (const doc of docs) compound.insert(doc);
    const both = plan(compound, { age: 7, email: 'u7@x' });
    expect(both.description).toBe('IXSCAN age_1_email_1');
    expect(select(compound, { age: 7, email: 'u7@x' }).map((r) => r.doc._id)).toEqual([7]);
    expect(plan(compound, { age: 7 }).description).toBe('IXSCAN age_1_email_1');
    expect(select(compound, { age: 7 }).length).toBe(20);
    expect(plan(compound, { email: 'u7@x' }).description).toBe('COLLSCAN');
  });

  it('narrows a compound index by a range on the field after its equality prefix, and walks it for a sort on that field', () => {
    const logs = collectionOf([]);
    logs.indexes.set('b_1_a_-1', logs.createIndex('b_1_a_-1', { b: 1, a: -1 }, false, false));
    for (let i = 0; i < 1000; i++) logs.insert({ _id: i, b: i % 10, a: i });
    const stats = { plan: '', keysExamined: 0, docsExamined: 0 };
    const below = select(logs, { b: 3, a: { $lt: 500 } }, {}, stats);
    expect(below.map((r) => r.doc._id)).toEqual(Array.from({ length: 50 }, (_, i) => 3 + 10 * i));
    expect(stats).toEqual({ plan: 'IXSCAN b_1_a_-1', keysExamined: 50, docsExamined: 50 });
    const between = { plan: '', keysExamined: 0, docsExamined: 0 };
    expect(select(logs, { b: 3, a: { $gt: 13, $lte: 43 } }, {}, between).map((r) => r.doc._id)).toEqual([23, 33, 43]);
    expect(between.keysExamined).toBe(3);
    // Newest first, as the log store reads an app's entries: the last keys of b = 3, backwards.
    const newest = { plan: '', keysExamined: 0, docsExamined: 0 };
    expect(select(logs, { b: 3 }, { sort: { a: -1 }, limit: 3 }, newest).map((r) => r.doc._id)).toEqual([993, 983, 973]);
    expect(newest).toEqual({ plan: 'IXSCAN b_1_a_-1', keysExamined: 3, docsExamined: 3 });
    expect(select(logs, { b: 3, a: { $gte: 500 } }, { sort: { a: 1 }, skip: 1, limit: 2 }).map((r) => r.doc._id)).toEqual([513, 523]);
  });

  it('uses an index on a field of a rules-shaped $and', () => {
    const f = { $and: [{ email: 'u7@x' }, { $or: [{ age: 7 }, { tags: 't0' }] }] };
    expect(plan(coll, f).description).toBe('IXSCAN email_1');
    expect(select(coll, f).map((r) => r.doc._id)).toEqual([7]);
  });

  it('unions index lookups for an $or whose branches are all indexed, in insertion order', () => {
    const f = { $or: [{ email: 'u7@x' }, { email: 'u3@x' }, { age: { $gte: 49 } }] };
    const p = plan(coll, f);
    expect(p.description).toBe('OR (IXSCAN email_1, IXSCAN email_1, IXSCAN age_1)');
    expect(select(coll, f).map((r) => r.doc._id).slice(0, 4)).toEqual([3, 7, 49, 99]);
    expect(select(coll, f).length).toBe(22);
    expect(plan(coll, { $and: [{ missing: 1 }, f] }).description).toMatch(/^OR /);
  });

  it('scans an $or with an unindexed branch', () => {
    expect(plan(coll, { $or: [{ email: 'u7@x' }, { missing: 1 }] }).description).toBe('COLLSCAN');
  });

  it('does not look up null in a sparse index, which leaves out documents missing the field', () => {
    const sparse = new CollectionState('db', 'c');
    sparse.indexes.set('a_1', sparse.createIndex('a_1', { a: 1 }, false, true));
    sparse.indexes.set('a_1_b_1', sparse.createIndex('a_1_b_1', { a: 1, b: 1 }, false, true));
    for (const d of [{ _id: 1, a: 1 }, { _id: 2 }, { _id: 3, a: null }]) sparse.insert(d);
    for (const f of [{ a: null }, { a: { $in: [null, 1] } }, { $or: [{ a: null }, { a: 1 }] }, { a: null, b: null }]) {
      expect(select(sparse, f).map((r) => r.doc._id).sort()).toEqual(new Query(f).find([{ _id: 1, a: 1 }, { _id: 2 }, { _id: 3, a: null }]).all().map((d) => (d as Document)._id).sort());
    }
    expect(plan(sparse, { a: 1 }).description).toBe('IXSCAN a_1');
  });

  it('scans when no index applies', () => {
    expect(plan(coll, { missing: 1 }).description).toBe('COLLSCAN');
  });
});

describe('indexed queries agree with an unindexed scan', () => {
  const value = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom('a', 'b', 'c'), fc.constant(null), fc.boolean(), fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 3 }));
  const doc = fc.record({ a: value, b: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: ['b'] });
  const scalar = fc.oneof(fc.integer({ min: -6, max: 6 }), fc.constantFrom('a', 'b', 'z'), fc.constant(null), fc.boolean());
  const filter = fc.oneof(
    scalar.map((v) => ({ a: v })),
    fc.tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), fc.oneof(fc.integer({ min: -6, max: 6 }), fc.constantFrom('a', 'b'))).map(([op, v]) => ({ a: { [op]: v } })),
    fc.tuple(fc.integer({ min: -6, max: 6 }), fc.integer({ min: -6, max: 6 })).map(([lo, hi]) => ({ a: { $gte: lo, $lt: hi } })),
    fc.array(scalar, { maxLength: 3 }).map((vs) => ({ a: { $in: vs } })),
    fc.tuple(scalar, fc.integer({ min: 0, max: 3 })).map(([v, b]) => ({ a: v, b })),
    fc.integer({ min: -6, max: 6 }).map((v) => ({ a: { $ne: v } })),
  );
  const clause = fc.oneof(
    filter,
    fc.integer({ min: 0, max: 3 }).map((b) => ({ b })),
    fc.tuple(fc.constantFrom('$lt', '$gte'), fc.integer({ min: 0, max: 3 })).map(([op, b]) => ({ b: { [op]: b } })),
  );
  const logical = fc.oneof(
    fc.tuple(clause, fc.array(clause, { minLength: 1, maxLength: 3 })).map(([x, ys]) => ({ $and: [x, { $or: ys }] })),
    fc.array(clause, { minLength: 1, maxLength: 3 }).map((xs) => ({ $or: xs })),
    fc.tuple(clause, fc.array(clause, { minLength: 1, maxLength: 2 })).map(([x, ys]) => ({ $and: [x, { $nor: ys }] })),
    fc.tuple(fc.array(clause, { minLength: 1, maxLength: 2 }), fc.array(clause, { minLength: 1, maxLength: 2 })).map(([xs, ys]) => ({ $and: [{ $or: xs }, { $or: ys }] })),
  );

  it('returns the same documents with or without an index on the queried field', () => {
    fc.assert(
      fc.property(fc.array(doc, { maxLength: 40 }), filter, (raw, f) => {
        const docs = raw.map((d, i) => ({ _id: i, ...d }));
        const indexed = collectionOf(docs, ['a']);
        const compound = new CollectionState('db', 'c');
        compound.indexes.set('b_1_a_1', compound.createIndex('b_1_a_1', { b: 1, a: 1 }, false, false));
        for (const d of docs) compound.insert(d);
        const plain = collectionOf(docs);
        const viaIndex = select(indexed, f).map((r) => r.doc._id).sort();
        expect(select(compound, f).map((r) => r.doc._id).sort()).toEqual(viaIndex);
        const viaScan = select(plain, f).map((r) => r.doc._id).sort();
        const viaMingo = new Query(f).find(docs).all().map((d) => (d as Document)._id).sort();
        expect(viaIndex).toEqual(viaScan);
        expect(viaScan).toEqual(viaMingo);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 400) },
    );
  });

  it('returns the same documents for $and/$or/$nor combinations with or without indexes', () => {
    fc.assert(
      fc.property(fc.array(doc, { maxLength: 40 }), logical, fc.constantFrom<1 | -1>(1, -1), fc.integer({ min: 0, max: 5 }), (raw, f, dir, limit) => {
        const docs = raw.map((d, i) => ({ _id: i, ...d }));
        const viaMingo = new Query(f).find(docs).all().map((d) => (d as Document)._id).sort();
        const plain = collectionOf(docs);
        for (const indexed of [['a'], ['b'], ['a', 'b']]) {
          const coll = collectionOf(docs, indexed);
          expect(select(coll, f).map((r) => r.doc._id).sort()).toEqual(viaMingo);
          const sorted = (c: CollectionState) => select(c, f, { sort: { b: dir, _id: 1 }, limit }).map((r) => r.doc._id);
          expect(sorted(coll)).toEqual(sorted(plain));
          const byB = (c: CollectionState) => select(c, f, { sort: { b: dir }, limit }).map((r) => r.doc.b);
          expect(byB(coll)).toEqual(byB(plain));
        }
        expect(select(plain, f).map((r) => r.doc._id).sort()).toEqual(viaMingo);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 300) },
    );
  });

  it('returns and sorts the same through a compound index narrowed by a range past its equality prefix', () => {
    const scalarOrArray = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom('a', 'b'), fc.constant(null), fc.array(fc.integer({ min: -2, max: 2 }), { maxLength: 2 }));
    const row = fc.record({ a: fc.oneof({ weight: 6, arbitrary: fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom('a', 'b'), fc.constant(null)) }, { weight: 1, arbitrary: scalarOrArray }), b: fc.integer({ min: 0, max: 2 }), c: fc.integer({ min: 0, max: 2 }) }, { requiredKeys: ['b'] });
    const bound = fc.oneof(fc.integer({ min: -6, max: 6 }), fc.constantFrom('a', 'b'));
    const range = fc.oneof(
      fc.tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), bound).map(([op, v]) => ({ [op]: v })),
      fc.tuple(fc.constantFrom('$gt', '$gte'), bound, fc.constantFrom('$lt', '$lte'), bound).map(([lo, l, hi, h]) => ({ [lo]: l, [hi]: h })),
    );
    const compoundFilter = fc.oneof(
      fc.tuple(fc.integer({ min: 0, max: 2 }), range).map(([b, a]) => ({ b, a })),
      fc.tuple(fc.integer({ min: 0, max: 2 }), range, fc.integer({ min: 0, max: 2 })).map(([b, a, c]) => ({ b, a, c })),
      fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: -5, max: 5 }), range).map(([b, a, c]) => ({ b, a, c })),
      fc.integer({ min: 0, max: 2 }).map((b) => ({ b })),
    );
    fc.assert(
      fc.property(fc.array(row, { maxLength: 40 }), compoundFilter, fc.constantFrom<1 | -1>(1, -1), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 5 }), (raw, f, dir, skip, limit) => {
        const docs = raw.map((d, i) => ({ _id: i, ...d }));
        const plain = collectionOf(docs);
        const viaMingo = new Query(f).find(docs).all().map((d) => (d as Document)._id).sort();
        for (const spec of [{ b: 1, a: -1 }, { b: 1, a: 1, c: 1 }] as Array<Record<string, 1 | -1>>) {
          const coll = new CollectionState('db', 'c');
          coll.indexes.set('compound', coll.createIndex('compound', spec, false, false));
          for (const d of docs) coll.insert(d);
          expect(select(coll, f).map((r) => r.doc._id).sort()).toEqual(viaMingo);
          const byA = (c: CollectionState) => select(c, f, { sort: { a: dir }, skip, limit }).map((r) => r.doc.a ?? null);
          expect(byA(coll)).toEqual(byA(plain));
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 400) },
    );
  });

  it('sorts and limits the same with or without an index on the sort field', () => {
    const number = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constant(null), fc.constantFrom('a', 'b'));
    fc.assert(
      fc.property(fc.array(fc.record({ a: number }, { requiredKeys: [] }), { maxLength: 30 }), fc.constantFrom<1 | -1>(1, -1), fc.integer({ min: 1, max: 5 }), fc.integer({ min: -3, max: 3 }), (raw, dir, limit, lo) => {
        const docs = raw.map((d, i) => ({ _id: i, ...d }));
        const indexed = collectionOf(docs, ['a']);
        const plain = collectionOf(docs);
        for (const f of [{}, { a: { $gte: lo } }]) {
          const viaIndex = select(indexed, f, { sort: { a: dir }, limit }).map((r) => r.doc.a ?? null);
          const viaSort = select(plain, f, { sort: { a: dir }, limit }).map((r) => r.doc.a ?? null);
          expect(viaIndex).toEqual(viaSort);
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 300) },
    );
  });
});
