import type { FieldModel } from '@tessera/graphql-schema';
import type { GraphQLResolveInfo } from 'graphql/index.js';
import { RelationshipBatches } from './relationship-batches';

// Prefetched relationships must answer exactly as the batch would, synchronously, and fail per parent.
const toOne: FieldModel = { name: 'category', key: 'category', required: false, listDepth: 0, kind: 'relationship', relationship: { target: 'Category', foreignKey: 'code', foreignScalar: 'String', isList: false } };
const toMany: FieldModel = { name: 'tags', key: 'tags', required: false, listDepth: 1, kind: 'relationship', relationship: { target: 'Tag', foreignKey: 'code', foreignScalar: 'String', isList: true } };
const info = (key: string) => ({ path: { key, prev: { key: 0, prev: { key: 'items', prev: undefined } } } }) as unknown as GraphQLResolveInfo;

describe('RelationshipBatches', () => {
  const foreign = [{ code: 'a', n: 1 }, { code: 'b', n: 2 }];

  it('answers prefetched relationships at once, like the batch, with one read per field', async () => {
    const keysRead: unknown[][] = [];
    const batches = new RelationshipBatches(async (_field, keys) => {
      keysRead.push(keys);
      return foreign.filter((d) => keys.includes(d.code));
    });
    const parents = [{ category: 'a', tags: ['b', 'x', 'a'] }, { category: 'x', tags: 'b' }, { category: null }];
    await batches.prefetch(toOne, parents);
    await batches.prefetch(toMany, parents);
    expect(batches.reads).toBe(2);
    expect(keysRead).toEqual([['a', 'x'], ['b', 'x', 'a']]);
    expect(parents.map((p) => batches.load(toOne, p, info('category')))).toEqual([foreign[0], null, null]);
    expect(batches.load(toMany, parents[0], info('tags'))).toEqual([foreign[1], foreign[0]]);
    expect(batches.load(toMany, parents[1], info('tags'))).toEqual([foreign[1]]);
    // A parent that was not prefetched still goes through a batch.
    await expect(batches.load(toOne, { category: 'b' }, info('category'))).resolves.toEqual(foreign[1]);
    expect(batches.reads).toBe(3);
  });

  it('fails each parent of a prefetch whose read failed', async () => {
    const batches = new RelationshipBatches(async () => {
      throw new Error('refused');
    });
    const parents = [{ category: 'a' }, { category: 'b' }];
    await batches.prefetch(toOne, parents);
    for (const parent of parents) expect(() => batches.load(toOne, parent, info('category'))).toThrow('refused');
  });
});
