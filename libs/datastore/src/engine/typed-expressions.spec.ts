import { Decimal128, Double, Long } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import { numericKind } from '../bson/numeric';
import { type Document } from '../bson/values';
import { withCollation } from './collation';
import { runPipeline } from './mingo';

const stored: Document = {
  _id: 1,
  list: [Long.fromNumber(1), new Double(2), 3, Decimal128.fromString('4.0')],
  pairs: [{ k: 'a', v: Long.fromNumber(5) }],
  sub: { l: Long.fromNumber(6), d: new Double(7) },
  words: ['b', 'A', 'a'],
  none: null,
};

/** An expression evaluated over the stored document, as its $project computes it. */
function evaluate(expr: unknown, doc: Document = stored): unknown {
  return runPipeline([doc], [{ $project: { _id: 0, v: expr } }])[0]?.v;
}

/** A value's numbers by BSON type (int, long, double, decimal), at any depth. */
function kinds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(kinds);
  const kind = numericKind(value);
  if (kind !== undefined) return kind;
  if (value !== null && typeof value === 'object' && !(value instanceof Decimal128)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, kinds(v)]));
  return value;
}

function failure(expr: unknown): DatastoreError {
  try {
    evaluate(expr);
  } catch (error) {
    expect(error).toBeInstanceOf(DatastoreError);
    return error as DatastoreError;
  }
  throw new Error('expected the expression to fail');
}

describe('expressions that pass stored values through', () => {
  it('slices from the start, from the end and from a position, refusing what MongoDB refuses', () => {
    expect(kinds(evaluate({ $slice: ['$list', 2] }))).toEqual(['long', 'double']);
    expect(kinds(evaluate({ $slice: ['$list', -1] }))).toEqual(['decimal']);
    expect(kinds(evaluate({ $slice: ['$list', -3, 2] }))).toEqual(['double', 'int']);
    expect(evaluate({ $slice: ['$list', 10, 1] })).toEqual([]);
    expect(evaluate({ $slice: ['$missing', 1] })).toBeNull();
    expect(failure({ $slice: ['$list', 1, 0] }).code).toBe(28729);
    expect(failure({ $slice: ['$sub', 1] }).code).toBe(28724);
    expect(failure({ $slice: ['$list'] }).code).toBe(28667);
  });

  it('concatenates, reverses and zips arrays as stored, null for a null or missing operand', () => {
    expect(kinds(evaluate({ $concatArrays: [['$sub.l'], '$list'] }))).toEqual(['long', 'long', 'double', 'int', 'decimal']);
    expect(evaluate({ $concatArrays: ['$list', '$none'] })).toBeNull();
    expect(failure({ $concatArrays: ['$list', 1] }).code).toBe(28664);
    expect(kinds(evaluate({ $reverseArray: '$list' }))).toEqual(['decimal', 'int', 'double', 'long']);
    expect(kinds(evaluate({ $zip: { inputs: ['$list', ['$sub.d']] } }))).toEqual([['long', 'double']]);
    expect(kinds(evaluate({ $zip: { inputs: [['$sub.l'], '$list'], useLongestLength: true, defaults: [new Double(0), null] } }))).toEqual([
      ['long', 'long'],
      ['double', 'double'],
      ['double', 'int'],
      ['double', 'decimal'],
    ]);
    expect(evaluate({ $zip: { inputs: ['$list', '$missing'] } })).toBeNull();
    expect(failure({ $zip: { inputs: ['$list'], defaults: [1] } }).code).toBe(34466);
  });

  it('reads, sets and removes fields as stored', () => {
    expect(kinds(evaluate({ $getField: { field: 'l', input: '$sub' } }))).toBe('long');
    expect(kinds(evaluate({ $getField: { $literal: 'none' } }))).toBeNull();
    expect(evaluate({ $getField: { field: 'nope', input: '$sub' } })).toBeUndefined();
    expect(evaluate({ $getField: { field: 'l', input: '$missing' } })).toBeNull();
    expect(kinds(evaluate({ $setField: { field: 'x', input: '$sub', value: Long.fromNumber(1) } }))).toEqual({ l: 'long', d: 'double', x: 'long' });
    expect(kinds(evaluate({ $setField: { field: 'l', input: '$sub', value: '$$REMOVE' } }))).toEqual({ d: 'double' });
    expect(kinds(evaluate({ $unsetField: { field: 'd', input: '$sub' } }))).toEqual({ l: 'long' });
    expect(failure({ $setField: { field: 'x', input: '$list', value: 1 } }).code).toBe(4161105);
  });

  it('turns documents into arrays of pairs and back', () => {
    expect(kinds(evaluate({ $objectToArray: '$sub' }))).toEqual([
      { k: 'l', v: 'long' },
      { k: 'd', v: 'double' },
    ]);
    expect(kinds(evaluate({ $arrayToObject: '$pairs' }))).toEqual({ a: 'long' });
    expect(kinds(evaluate({ $arrayToObject: [[['x', '$sub.d']]] }))).toEqual({ x: 'double' });
    expect(evaluate({ $arrayToObject: '$none' })).toBeNull();
    expect(failure({ $arrayToObject: [[['x', 1, 2]]] }).code).toBe(40397);
  });

  it('sorts, takes the first, last, greatest and least n values as stored', () => {
    expect(kinds(evaluate({ $sortArray: { input: '$list', sortBy: -1 } }))).toEqual(['decimal', 'int', 'double', 'long']);
    expect(kinds(evaluate({ $sortArray: { input: [{ n: '$sub.d' }, { n: '$sub.l' }], sortBy: { n: 1 } } }))).toEqual([{ n: 'long' }, { n: 'double' }]);
    expect(kinds(evaluate({ $firstN: { input: '$list', n: 2 } }))).toEqual(['long', 'double']);
    expect(kinds(evaluate({ $lastN: { input: '$list', n: Long.fromNumber(1) } }))).toEqual(['decimal']);
    expect(kinds(evaluate({ $maxN: { input: [null, '$sub.l', '$sub.d'], n: 5 } }))).toEqual(['double', 'long']);
    expect(kinds(evaluate({ $minN: { input: '$list', n: 1 } }))).toEqual(['long']);
    expect(evaluate({ $firstN: { input: '$missing', n: 1 } })).toBeNull();
  });

  it('forms sets of stored values, strings compared by the collation', () => {
    expect(kinds(evaluate({ $setUnion: ['$list', [1, '$sub.d']] }))).toEqual(['long', 'double', 'int', 'decimal', 'double']);
    expect(kinds(evaluate({ $setIntersection: ['$list', [2, 4]] }))).toEqual(['double', 'decimal']);
    expect(kinds(evaluate({ $setDifference: ['$list', [1, 3]] }))).toEqual(['double', 'decimal']);
    expect(evaluate({ $setUnion: ['$list', '$missing'] })).toBeNull();
    expect(withCollation({ locale: 'en', strength: 2 }, () => evaluate({ $setUnion: ['$words', ['B']] }))).toEqual(['b', 'A']);
  });

  it('keeps types when mingo computes around a typed operator, and inside the variables that bind them', () => {
    expect(evaluate({ $size: { $concatArrays: ['$list', '$list'] } })).toBe(8);
    expect(kinds(evaluate({ $reduce: { input: '$list', initialValue: Long.fromNumber(0), in: { $add: ['$$value', { $toLong: '$$this' }] } } }))).toBe('long');
    expect(kinds(evaluate({ $let: { vars: { xs: { $slice: ['$list', 1] } }, in: { $first: '$$xs' } } }))).toBe('long');
    expect(kinds(evaluate({ $map: { input: { $zip: { inputs: ['$list', '$list'] } }, as: 'pair', in: { $last: '$$pair' } } }))).toEqual(['long', 'double', 'int', 'decimal']);
  });
});
