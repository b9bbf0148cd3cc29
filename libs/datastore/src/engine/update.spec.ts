import { DatastoreError } from '../api/datastore.error';
import { applyUpdate, checkReplacement, checkUpdate, upsertBase } from './update';

function failure(fn: () => unknown): DatastoreError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DatastoreError);
    return error as DatastoreError;
  }
  throw new Error('expected a failure');
}

describe('update documents', () => {
  it('tells operator updates from pipelines and refuses mixtures', () => {
    expect(checkUpdate({ $set: { a: 1 } })).toBe('operators');
    expect(checkUpdate([{ $set: { a: 1 } }])).toBe('pipeline');
    expect(failure(() => checkUpdate({ $set: { a: 1 }, b: 2 })).message).toBe('Update document requires atomic operators');
    expect(failure(() => checkUpdate({})).isClientError).toBe(true);
    expect(failure(() => checkUpdate([{ $match: {} }])).message).toMatch(/\$match is not allowed to be used within an update/);
    expect(failure(() => checkReplacement({ $set: { a: 1 } })).message).toBe('Replacement document must not contain atomic operators');
  });

  it('refuses conflicting paths and non-numeric increments with MongoDB codes', () => {
    expect(failure(() => applyUpdate({ _id: 1 }, { $set: { a: 1 }, $inc: { 'a.b': 1 } })).code).toBe(40);
    expect(failure(() => applyUpdate({ _id: 1, a: 'x' }, { $inc: { a: 1 } })).code).toBe(14);
    expect(failure(() => applyUpdate({ _id: 1, a: 1 }, { $inc: { a: 'x' } })).code).toBe(14);
    expect(failure(() => applyUpdate({ _id: 1, a: 1 }, { $push: { a: 2 } })).message).toMatch(/must be an array but is of type int/);
    expect(failure(() => applyUpdate({ _id: 1, a: 5 }, { $set: { 'a.b': 1 } })).code).toBe(28);
    expect(failure(() => applyUpdate({ _id: 1, a: [1] }, { $set: { 'a.$': 2 } }, { filter: { _id: 1 } })).message).toMatch(/positional operator did not find the match/);
    expect(failure(() => applyUpdate({ _id: 1, a: [1] }, { $set: { 'a.$[x]': 2 } })).message).toMatch(/No array filter found for identifier 'x'/);
  });

  it('adds new fields in name order and leaves the input untouched', () => {
    const doc = { _id: 1, z: 1 };
    const next = applyUpdate(doc, { $set: { b: 1, a: 1 } });
    expect(Object.keys(next)).toEqual(['_id', 'z', 'a', 'b']);
    expect(doc).toEqual({ _id: 1, z: 1 });
  });

  it('positions, slices and sorts pushed elements', () => {
    expect(applyUpdate({ _id: 1, a: [1, 2] }, { $push: { a: { $each: [9], $position: 0 } } }).a).toEqual([9, 1, 2]);
    expect(applyUpdate({ _id: 1, a: [{ n: 2 }, { n: 1 }] }, { $push: { a: { $each: [{ n: 3 }], $sort: { n: -1 }, $slice: 2 } } }).a).toEqual([{ n: 3 }, { n: 2 }]);
  });

  it('pulls by condition from arrays of documents and of values', () => {
    expect(applyUpdate({ _id: 1, a: [{ x: 1 }, { x: 2 }] }, { $pull: { a: { x: { $gt: 1 } } } }).a).toEqual([{ x: 1 }]);
    expect(applyUpdate({ _id: 1, a: [1, 2, 3, 2] }, { $pullAll: { a: [2, 3] } }).a).toEqual([1]);
  });

  it('renames into nested paths and unsets array elements to null', () => {
    expect(applyUpdate({ _id: 1, a: 1 }, { $rename: { a: 'b.c' } })).toEqual({ _id: 1, b: { c: 1 } });
    expect(applyUpdate({ _id: 1, a: [1, 2] }, { $unset: { 'a.0': '' } }).a).toEqual([null, 2]);
  });

  it('builds an upsert from equality conditions, including $and and dotted paths', () => {
    expect(upsertBase({ a: 1, 'b.c': 2, d: { $gt: 1 }, e: { $eq: 3 }, $and: [{ f: 4 }] })).toEqual({ a: 1, b: { c: 2 }, e: 3, f: 4 });
  });
});
