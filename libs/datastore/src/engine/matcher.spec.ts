import fc from 'fast-check';
import { Query } from 'mingo';
import { BSONSymbol, Double, Int32, Long } from 'bson';
import { compareValues, type Document, typeRank, valuesEqual } from '../bson/values';
import { fastMatcher } from './matcher';
import { compileFilter } from './mingo';

const mingoIds = (filter: Document, docs: Document[]) =>
  new Query(filter)
    .find(docs)
    .all()
    .map((d) => (d as Document)._id);

describe('fast matcher: $and, $or and $nor', () => {
  const docs: Document[] = [
    { _id: 1, category: 'x', price: 10, owner_id: 'u1', public: false },
    { _id: 2, category: 'x', price: 60, owner_id: 'u2', public: true },
    { _id: 3, category: 'x', price: 20, owner_id: 'u2', public: true },
    { _id: 4, category: 'y', price: 5, owner_id: 'u1', public: true },
    { _id: 5, category: ['x', 'z'], price: [70, 30], owner_id: 'u3' },
    { _id: 6, category: 'x', price: '5', owner_id: null, public: false },
  ];

  it('compiles a rules-shaped filter and matches what mingo matches', () => {
    const filter = { $and: [{ category: 'x', price: { $lt: 50 } }, { $or: [{ owner_id: 'u1' }, { public: true }] }] };
    const m = fastMatcher(filter);
    expect(m).toBeDefined();
    expect(docs.filter((d) => m?.(d)).map((d) => d._id)).toEqual([1, 3]);
    expect(mingoIds(filter, docs)).toEqual([1, 3]);
  });

  it('matches a document when any array element satisfies an $or branch', () => {
    const m = fastMatcher({ $or: [{ category: 'z' }, { price: { $gt: 100 } }] });
    expect(docs.filter((d) => m?.(d)).map((d) => d._id)).toEqual([5]);
  });

  it('keeps a document no $nor branch matches, including one missing the fields', () => {
    const m = fastMatcher({ $nor: [{ public: true }, { owner_id: 'u1' }] });
    expect(docs.filter((d) => m?.(d)).map((d) => d._id)).toEqual([5, 6]);
  });

  it('combines field conditions beside a logical operator', () => {
    const m = fastMatcher({ category: 'x', $or: [{ owner_id: 'u2' }, { owner_id: 'u3' }], $nor: [{ price: { $gte: 60 } }] });
    expect(docs.filter((d) => m?.(d)).map((d) => d._id)).toEqual([3]);
  });

  it('leaves filters outside the fast subset to mingo', () => {
    expect(fastMatcher({ $and: [] })).toBeUndefined();
    expect(fastMatcher({ $or: {} })).toBeUndefined();
    expect(fastMatcher({ $or: [{ a: 1 }, 'b'] })).toBeUndefined();
    expect(fastMatcher({ $and: [{ a: { $regex: 'x' } }] })).toBeUndefined();
    expect(fastMatcher({ $or: [{ a: 1 }, { $expr: { $eq: ['$a', 1] } }] })).toBeUndefined();
    expect(fastMatcher({ $or: [{ a: null }] })).toBeUndefined();
    expect(fastMatcher({ $and: [{ a: 1 }], $where: 'true' })).toBeUndefined();
  });

  it('leaves very large or deeply nested filters to mingo instead of compiling them', () => {
    const branches = (n: number) => Array.from({ length: n }, (_, i) => ({ owner_id: `u${i}` }));
    expect(fastMatcher({ $or: branches(64) })).toBeDefined();
    expect(fastMatcher({ $or: branches(100_000) })).toBeUndefined();
    let nested: Record<string, unknown> = { a: 1 };
    for (let i = 0; i < 40; i++) nested = { $and: [nested] };
    expect(fastMatcher(nested)).toBeUndefined();
    // Mingo still answers them.
    const matcher = compileFilter({ $or: branches(100_000) });
    expect(matcher({ owner_id: 'u99999' })).toBe(true);
    expect(matcher({ owner_id: 'nobody' })).toBe(false);
  });
});

describe('fast matcher agrees with mingo on random $and/$or/$nor filters', () => {
  const scalar = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'b'), fc.boolean());
  const sub = fc.record({ c: fc.oneof(scalar, fc.constant(null)) }, { requiredKeys: [], noNullPrototype: true });
  const value = fc.oneof(scalar, fc.constant(null), fc.array(fc.oneof(scalar, fc.constant(null)), { maxLength: 3 }), sub, fc.array(sub, { maxLength: 2 }));
  const doc = fc.record({ a: value, b: value, n: fc.record({ c: value }, { requiredKeys: [], noNullPrototype: true }) }, { requiredKeys: [], noNullPrototype: true });
  const field = fc.constantFrom('a', 'b', 'n.c', 'a.c');
  const condition = fc.oneof(
    scalar,
    scalar.map((v) => ({ $eq: v })),
    scalar.map((v) => ({ $ne: v })),
    fc.array(scalar, { maxLength: 3 }).map((vs) => ({ $in: vs })),
    fc.array(scalar, { maxLength: 3 }).map((vs) => ({ $nin: vs })),
    fc.tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), scalar).map(([op, v]) => ({ [op]: v })),
    fc.tuple(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -3, max: 3 })).map(([lo, hi]) => ({ $gt: lo, $lte: hi })),
    fc.boolean().map((b) => ({ $exists: b })),
  );
  const clause: fc.Arbitrary<Document> = fc.tuple(field, condition).map(([f, c]) => ({ [f]: c }));
  const { filter } = fc.letrec<{ filter: Document }>((tie) => ({
    filter: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      clause,
      fc.tuple(clause, clause).map(([x, y]) => ({ ...x, ...y })),
      fc.tuple(fc.constantFrom('$and', '$or', '$nor'), fc.array(tie('filter'), { minLength: 1, maxLength: 3 })).map(([op, branches]) => ({ [op]: branches })),
      fc.tuple(clause, fc.constantFrom('$and', '$or', '$nor'), fc.array(tie('filter'), { minLength: 1, maxLength: 3 })).map(([x, op, branches]) => ({ ...x, [op]: branches })),
    ),
  }));

  it('selects the same documents as mingo', () => {
    fc.assert(
      fc.property(fc.array(doc, { maxLength: 12 }), filter, (raw, f) => {
        const docs = raw.map((d, i) => ({ _id: i, ...d }));
        const m = fastMatcher(f);
        expect(m).toBeDefined();
        expect(docs.filter((d) => m?.(d)).map((d) => d._id)).toEqual(mingoIds(f, docs));
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 500) },
    );
  });
});

describe('fast matcher: primitive strings and numbers against every kind of stored value', () => {
  // The direct comparisons of primitives must answer what the general BSON comparison answers.
  const stored = fc.oneof(
    fc.double(),
    fc.integer({ min: -3, max: 3 }),
    fc.constantFrom(Number.NaN, -0, 0.5, 'a', 'b', '', true, null),
    fc.integer({ min: -3, max: 3 }).map((n) => new Int32(n)),
    fc.integer({ min: -3, max: 3 }).map((n) => Long.fromNumber(n)),
    fc.double().map((n) => new Double(n)),
    fc.constantFrom('a', 'b').map((s) => new BSONSymbol(s)),
  );
  const target = fc.oneof(fc.double(), fc.integer({ min: -3, max: 3 }), fc.constantFrom(Number.NaN, 0, 'a', 'b', ''));
  const ops: Record<string, (c: number) => boolean> = { $gt: (c) => c > 0, $gte: (c) => c >= 0, $lt: (c) => c < 0, $lte: (c) => c <= 0 };

  it('equality, $ne and ranges agree with compareValues', () => {
    fc.assert(
      fc.property(stored, target, (v, t) => {
        const doc = { a: v };
        expect(fastMatcher({ a: t })?.(doc)).toBe(valuesEqual(v, t));
        expect(fastMatcher({ a: { $ne: t } })?.(doc)).toBe(!valuesEqual(v, t));
        for (const [op, ok] of Object.entries(ops)) {
          const m = fastMatcher({ a: { [op]: t } });
          if (m) expect(m(doc)).toBe(typeRank(v) === typeRank(t) && ok(compareValues(v, t)));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('two bounds and nested $or/$nor agree with compareValues', () => {
    const eq = (v: unknown, t: unknown) => v !== undefined && valuesEqual(v, t);
    const inRange = (v: unknown, op: string, t: unknown) => v !== undefined && typeRank(v) === typeRank(t) && ops[op](compareValues(v, t));
    fc.assert(
      fc.property(stored, stored, target, target, fc.constantFrom(...Object.keys(ops)), fc.constantFrom(...Object.keys(ops)), (a, b, t1, t2, op1, op2) => {
        const doc = { a, b };
        const bounds = { [op1]: t1, [op2]: t2 };
        const m = fastMatcher({ a: bounds });
        if (m) expect(m(doc)).toBe(Object.entries(bounds).every(([op, t]) => inRange(a, op, t)));
        expect(fastMatcher({ $or: [{ a: t1 }, { b: { [op2]: t2 } }] })?.(doc)).toBe(eq(a, t1) || inRange(b, op2, t2));
        expect(fastMatcher({ $nor: [{ a: { $ne: t1 } }, { b: t2 }] })?.(doc)).toBe(!(!eq(a, t1) || eq(b, t2)));
      }),
      { numRuns: 2000 },
    );
  });

  it('answers filters of one shape with their own fields and values', () => {
    const first = fastMatcher({ $or: [{ owner: 'u1' }, { stock: { $gte: 5 } }] });
    const second = fastMatcher({ $or: [{ team: 'red' }, { price: { $gte: 100 } }] });
    expect(first?.({ owner: 'u1', stock: 0 })).toBe(true);
    expect(second?.({ owner: 'u1', stock: 0 })).toBe(false);
    expect(second?.({ team: 'red' })).toBe(true);
    expect(second?.({ price: 150 })).toBe(true);
    expect(first?.({ price: 150 })).toBe(false);
  });
});
