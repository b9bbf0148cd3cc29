import { columnOf, type SyncSchema, type SyncTable } from '@tessera/sync-protocol';
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
        properties: { _id: { type: 'objectId' }, title: { type: 'string' }, tags: { type: 'list', items: { type: 'string' } }, task: { type: 'object', object_type: 'Task', optional: true } },
      },
    ]);
    const grown: SyncSchema = new Map([['Task', table('Task', [columnOf('Task', 'name', 'String', { nullable: true }), columnOf('Task', 'done', 'Bool')], 'String')]]);
    expect(declaredTypes(before, grown).map((type) => Object.keys(type.properties))).toEqual([['_id', 'name', 'done']]);
  });

  it('links to a type as an object and declares the embedded types it reaches, so links and embedded objects survive the round trip', () => {
    const after: SyncSchema = new Map<string, SyncTable>([
      [
        'A',
        table('A', [
          columnOf('A', 'b', 'Link', { linkTargetTable: 'B', nullable: true }),
          columnOf('A', 'any', 'Null', { nullable: true }),
          columnOf('A', 'place', 'Link', { linkTargetTable: 'E', nullable: true }),
          columnOf('A', 'names', 'String', { collectionType: 'List', nullable: true }),
        ]),
      ],
      ['B', table('B', [])],
      ['E', { name: 'E', spec: { kind: 'Embedded' }, columns: new Map([['street', columnOf('E', 'street', 'String')]]) }],
      ['Unused', { name: 'Unused', spec: { kind: 'Embedded' }, columns: new Map() }],
    ]);
    const types = declaredTypes(new Map(), after);
    expect(types.map((type) => type.name)).toEqual(['A', 'B', 'E']);
    expect(types[0]?.properties).toMatchObject({ b: { type: 'object', object_type: 'B', optional: true }, any: { type: 'mixed', optional: true }, place: { type: 'object', object_type: 'E', optional: true }, names: { type: 'list', items: { type: 'string', optional: true } } });
    expect(types[2]).toEqual({ name: 'E', embedded: true, properties: { street: { type: 'string' } } });
    // A link to a type declared before still names it; a new field of an embedded type re-declares its owner.
    expect(declaredTypes(new Map([['B', after.get('B')!]]), new Map<string, SyncTable>([['B', after.get('B')!], ['C', table('C', [columnOf('C', 'b', 'Link', { linkTargetTable: 'B', nullable: true })])]]))[0]?.properties['b']).toEqual({ type: 'object', object_type: 'B', optional: true });
    const grownEmbedded = new Map(after);
    grownEmbedded.set('E', { name: 'E', spec: { kind: 'Embedded' }, columns: new Map([['street', columnOf('E', 'street', 'String')], ['zip', columnOf('E', 'zip', 'Int', { nullable: true })]]) });
    expect(declaredTypes(after, grownEmbedded).map((type) => type.name)).toEqual(['A', 'E']);
  });
});
