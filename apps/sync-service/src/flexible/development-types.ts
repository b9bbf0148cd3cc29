/**
 * Development mode: the object types a client's schema instructions declare, in the shape the admin API
 * makes into collection schemas (`apps.development-schema.apply`). Pure; only top-level types become
 * collections: the embedded types they reach are declared with them (as `embedded`), to become sub-document
 * schemas, and a link names its target type, which the admin API resolves to a relationship.
 */
import { type AppsDevelopmentSchemaApplyRequest } from '@tessera/contracts';
import { type AddColumn, type PayloadType, type SyncSchema, type SyncTable, tablesReachable } from '@tessera/sync-protocol';

type DeclaredType = AppsDevelopmentSchemaApplyRequest['types'][number];
type DeclaredProperty = DeclaredType['properties'][string];

const scalarTypes: Partial<Record<PayloadType, string>> = {
  Int: 'int',
  Bool: 'bool',
  String: 'string',
  Binary: 'data',
  Timestamp: 'date',
  Float: 'float',
  Double: 'double',
  Decimal: 'decimal128',
  ObjectId: 'objectId',
  UUID: 'uuid',
  Null: 'mixed',
};

/**
 * The top-level types of `after` that are new or have new fields (their own or their embedded objects')
 * compared with `before`, followed by the embedded types they reach.
 */
export function declaredTypes(before: SyncSchema, after: SyncSchema): DeclaredType[] {
  const changed = [...after.values()].filter((table) => table.spec.kind === 'TopLevel' && tablesReachable(after, [table.name]).some((name) => differs(before.get(name), after.get(name))));
  const embedded = tablesReachable(after, changed.map((table) => table.name)).filter((name) => after.get(name)?.spec.kind === 'Embedded');
  return [...changed, ...embedded.map((name) => after.get(name)!)].map((table) => {
    const properties: Record<string, DeclaredProperty> = {};
    if (table.spec.kind === 'TopLevel') properties[table.spec.pkField] = { type: scalarTypes[table.spec.pkType] ?? 'mixed', ...(table.spec.pkNullable ? { optional: true } : {}) };
    for (const column of table.columns.values()) properties[column.field] = property(after, column);
    return { name: table.name, ...(table.spec.kind === 'TopLevel' ? { primary_key: table.spec.pkField } : { embedded: true }), properties };
  });
}

function differs(before: SyncTable | undefined, after: SyncTable | undefined): boolean {
  return !before || [...(after?.columns.keys() ?? [])].some((field) => !before.columns.has(field));
}

function property(schema: SyncSchema, column: AddColumn): DeclaredProperty {
  const element = elementOf(schema, column);
  switch (column.collectionType) {
    case 'List':
      return { type: 'list', items: element };
    case 'Set':
      return { type: 'set', items: element };
    case 'Dictionary':
      return { type: 'dictionary', items: element };
    case 'Single':
      return column.nullable ? { ...element, optional: true } : element;
  }
}

function elementOf(schema: SyncSchema, column: AddColumn): Omit<DeclaredProperty, 'items'> {
  if (column.valueType !== 'Link') return { type: scalarTypes[column.valueType] ?? 'mixed', ...(column.nullable && column.collectionType !== 'Single' ? { optional: true } : {}) };
  const target = column.linkTargetTable;
  return target && schema.has(target) ? { type: 'object', object_type: target } : { type: 'mixed' };
}
