import { describe, expect, it } from 'vitest';
import { type Document } from '../bson/values';
import { applyUpdate } from './update';
import { type UpdateDescription, describeOperatorUpdate, describePipelineUpdate, updatePathsOf } from './update-description';

/** The description MongoDB's change stream gives an update, made the way the feed makes it (undefined: a replace event). */
function describeOrReplace(before: Document, update: Document | Document[], context: Parameters<typeof applyUpdate>[2] = {}): UpdateDescription | undefined {
  const after = applyUpdate(before, update, context);
  const paths = updatePathsOf(update);
  return paths ? describeOperatorUpdate(before, after, paths) : describePipelineUpdate(before, after);
}

function describeUpdate(before: Document, update: Document | Document[], context: Parameters<typeof applyUpdate>[2] = {}): UpdateDescription {
  const description = describeOrReplace(before, update, context);
  if (!description) throw new Error('expected an update event, not a replacement');
  return description;
}

/** A field long enough that a pipeline update's delta stays smaller than the document. */
const padding = 'x'.repeat(200);

describe('update descriptions of operator updates', () => {
  it('names an array element an operator changed by its index, which is not ambiguous alone', () => {
    expect(describeUpdate({ _id: 1, a: [1, 2, 3] }, { $set: { 'a.1': 5 } })).toEqual({ updatedFields: { 'a.1': 5 }, removedFields: [], truncatedArrays: [], disambiguatedPaths: {} });
    expect(describeUpdate({ _id: 1, a: [1, 2, 3] }, { $inc: { 'a.0': 1 } }).updatedFields).toEqual({ 'a.0': 2 });
  });

  it('disambiguates a numeric field name under an array element, giving the index as an integer', () => {
    const description = describeUpdate({ _id: 1, a: [{ '1': 1 }] }, { $set: { 'a.0.1': 2 } });
    expect(description.updatedFields).toEqual({ 'a.0.1': 2 });
    expect(description.disambiguatedPaths).toEqual({ 'a.0.1': ['a', 0, '1'] });
    expect(describeUpdate({ _id: 1, a: { '0': 0 } }, { $inc: { 'a.0': 1 } }).disambiguatedPaths).toEqual({ 'a.0': ['a', '0'] });
  });

  it('reports a $push that appended by its new elements, and other array operators by the whole array', () => {
    expect(describeUpdate({ _id: 1, a: [1, 2] }, { $push: { a: { $each: [3, 4] } } }).updatedFields).toEqual({ 'a.2': 3, 'a.3': 4 });
    expect(describeUpdate({ _id: 1, a: [] }, { $push: { a: 1 } }).updatedFields).toEqual({ a: [1] });
    expect(describeUpdate({ _id: 1, a: [3, 1] }, { $push: { a: { $each: [2], $sort: 1 } } }).updatedFields).toEqual({ a: [1, 2, 3] });
    expect(describeUpdate({ _id: 1, a: [1, 2, 3] }, { $push: { a: { $each: [4], $position: 0 } } }).updatedFields).toEqual({ a: [4, 1, 2, 3] });
    const popped = describeUpdate({ _id: 1, a: [1, 2, 3] }, { $pop: { a: 1 } });
    expect(popped).toMatchObject({ updatedFields: { a: [1, 2] }, truncatedArrays: [] });
    expect(describeUpdate({ _id: 1, a: [1, 2, 1] }, { $pull: { a: 1 } }).updatedFields).toEqual({ a: [2] });
    expect(describeUpdate({ _id: 1, a: [1] }, { $addToSet: { a: 2 } }).updatedFields).toEqual({ a: [1, 2] });
  });

  it('reports a value an operator set whole, and a new subtree at its first new field', () => {
    expect(describeUpdate({ _id: 1, n: { x: 1, y: 2 } }, { $set: { n: { x: 1, y: 3 } } }).updatedFields).toEqual({ n: { x: 1, y: 3 } });
    expect(describeUpdate({ _id: 1, n: { x: 1 } }, { $set: { 'n.y': 3, 'b.c.d': 1 } }).updatedFields).toEqual({ 'n.y': 3, b: { c: { d: 1 } } });
    expect(describeUpdate({ _id: 1, a: [{ b: [1, 2] }] }, { $set: { 'a.0.b.1': 9 } }).updatedFields).toEqual({ 'a.0.b.1': 9 });
  });

  it('reports $unset, $rename and positional updates by the paths they reached', () => {
    expect(describeUpdate({ _id: 1, a: [1, 2], x: 1 }, { $unset: { 'a.1': '', x: '' } })).toMatchObject({ updatedFields: { 'a.1': null }, removedFields: ['x'] });
    expect(describeUpdate({ _id: 1, a: 1 }, { $rename: { a: 'b' } })).toMatchObject({ updatedFields: { b: 1 }, removedFields: ['a'] });
    expect(describeUpdate({ _id: 1, a: [{ x: 1 }, { x: 2 }] }, { $inc: { 'a.$[].x': 1 } }).updatedFields).toEqual({ 'a.0.x': 2, 'a.1.x': 3 });
    expect(describeUpdate({ _id: 1, a: [{ x: 1 }, { x: 2 }] }, { $set: { 'a.$[e].x': 0 } }, { arrayFilters: [{ 'e.x': 2 }] }).updatedFields).toEqual({ 'a.1.x': 0 });
    expect(describeUpdate({ _id: 1, a: [5, 6] }, { $set: { 'a.$': 0 } }, { filter: { a: 6 } }).updatedFields).toEqual({ 'a.1': 0 });
  });
});

describe('update descriptions of pipeline updates', () => {
  it('reports a shortened array as truncated, as the spec case "Test array truncation" expects', () => {
    const before = { _id: 1, a: 1, array: ['foo', { a: 'bar' }, 1, 2, 3] };
    expect(describeUpdate(before, [{ $set: { array: ['foo', { a: 'bar' }] } }])).toEqual({
      updatedFields: {},
      removedFields: [],
      truncatedArrays: [{ field: 'array', newSize: 2 }],
      disambiguatedPaths: {},
    });
  });

  it('descends into nested arrays and embedded documents', () => {
    const [s, d, w] = ['s'.repeat(30), 'd'.repeat(30), 'w'.repeat(30)];
    const before = { _id: 1, padding, m: [[s, 2, 3], [d]], n: { x: 1, y: { z: 1, w } } };
    expect(describeUpdate(before, [{ $set: { m: [[s, 2], [d, 5]], 'n.y.z': 2 } }])).toEqual({
      updatedFields: { 'm.1.1': 5, 'n.y.z': 2 },
      removedFields: [],
      truncatedArrays: [{ field: 'm.0', newSize: 2 }],
      disambiguatedPaths: {},
    });
  });

  it('reports a field the pipeline moved or removed, disambiguating numeric field names', () => {
    const before = { _id: 1, padding, a: 1, b: 2, n: { '7': 1, long: padding } };
    expect(describeUpdate(before, [{ $unset: 'a' }, { $set: { c: 3, 'n.7': 2 } }])).toEqual({
      updatedFields: { c: 3, 'n.7': 2 },
      removedFields: ['a'],
      truncatedArrays: [],
      disambiguatedPaths: { 'n.7': ['n', '7'] },
    });
    expect(describeUpdate({ _id: 1, padding, a: 1, b: 2 }, [{ $replaceWith: { _id: '$_id', padding: '$padding', b: '$b', a: '$a' } }])).toMatchObject({ updatedFields: { a: 1 }, removedFields: [] });
  });

  it('reports an array or element whose delta would outweigh it whole, as MongoDB does', () => {
    expect(describeUpdate({ _id: 1, padding, a: [{ p: 1, q: 2 }] }, [{ $set: { a: [{ p: 2, q: 3 }] } }]).updatedFields).toEqual({ a: [{ p: 2, q: 3 }] });
    expect(describeUpdate({ _id: 1, padding, a: [{ p: 1, q: 2 }, padding] }, [{ $set: { a: [{ p: 2, q: 3 }, padding] } }]).updatedFields).toEqual({ 'a.0': { p: 2, q: 3 } });
  });

  it('is a replacement when the delta would not be smaller than the new document', () => {
    expect(describeOrReplace({ _id: 1, a: 1 }, [{ $set: { a: 2 } }])).toBeUndefined();
  });
});
