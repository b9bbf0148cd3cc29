import { columnOf, type SyncSchema } from '@tessera/sync-protocol';
import { describe, expect, it } from 'vitest';
import { declaredTypes } from './development-types';

const table = (name: string, columns: ReturnType<typeof columnOf>[], pkType: 'ObjectId' | 'String' = 'ObjectId') => ({
  name,
  spec: { kind: 'TopLevel' as const, asymmetric: false, pkField: '_id', pkType, pkNullable: false },
  columns: new Map(columns.map((column) => [column.field, column])),
});

describe('declaredTypes (development mode)', () => {
  const before: SyncSchema = new Map([['Task', table('Task', [columnOf('Task', 'name', 'String', { nullable: true })], 'String')]]);

  it('declares new types and types with new fields, not unchanged ones', () => {
    const after: SyncSchema = new Map([
      ['Task', table('Task', [columnOf('Task', 'name', 'String', { nullable: true })], 'String')],
      ['Note', table('Note', [columnOf('Note', 'title', 'String'), columnOf('Note', 'tags', 'String', { collectionType: 'List' }), columnOf('Note', 'task', 'Link', { linkTargetTable: 'Task', nullable: true })])],
    ]);
    expect(declaredTypes(before, after)).toEqual([
      {
        name: 'Note',
        primary_key: '_id',
        properties: { _id: { type: 'objectId' }, title: { type: 'string' }, tags: { type: 'list', items: { type: 'string' } }, task: { type: 'string', optional: true } },
      },
    ]);
    const grown: SyncSchema = new Map([['Task', table('Task', [columnOf('Task', 'name', 'String', { nullable: true }), columnOf('Task', 'done', 'Bool')], 'String')]]);
    expect(declaredTypes(before, grown).map((type) => Object.keys(type.properties))).toEqual([['_id', 'name', 'done']]);
  });

  it('links to a type declared with it as an object, and leaves embedded types out', () => {
    const after: SyncSchema = new Map([
      ['A', table('A', [columnOf('A', 'b', 'Link', { linkTargetTable: 'B', nullable: true }), columnOf('A', 'any', 'Null', { nullable: true })])],
      ['B', table('B', [])],
      ['E', { name: 'E', spec: { kind: 'Embedded' }, columns: new Map() } as never],
    ]);
    const types = declaredTypes(new Map(), after);
    expect(types.map((type) => type.name)).toEqual(['A', 'B']);
    expect(types[0]?.properties).toMatchObject({ b: { type: 'object', object_type: 'B', optional: true }, any: { type: 'mixed', optional: true } });
  });
});
