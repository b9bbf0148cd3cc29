/**
 * Development mode: the object types a client's schema instructions declare, in the shape the admin API
 * makes into collection schemas (`apps.development-schema.apply`). Pure; only top-level types become
 * collections, and a link to a type not declared with them is stored as that type's primary key.
 */
import { type AppsDevelopmentSchemaApplyRequest } from '@tessera/contracts';
import { type AddColumn, type PayloadType, type SyncSchema, type SyncTable } from '@tessera/sync-protocol';

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

/** The top-level types of `after` that are new or have new fields compared with `before`. */
export function declaredTypes(before: SyncSchema, after: SyncSchema): DeclaredType[] {
  const changed = [...after.values()].filter((table) => table.spec.kind === 'TopLevel' && differs(before.get(table.name), table));
  const names = new Set(changed.map((table) => table.name));
  return changed.map((table) => {
    const properties: Record<string, DeclaredProperty> = {};
    if (table.spec.kind === 'TopLevel') properties[table.spec.pkField] = { type: scalarTypes[table.spec.pkType] ?? 'mixed', ...(table.spec.pkNullable ? { optional: true } : {}) };
    for (const column of table.columns.values()) properties[column.field] = property(after, column, names);
    return { name: table.name, ...(table.spec.kind === 'TopLevel' ? { primary_key: table.spec.pkField } : {}), properties };
  });
}

function differs(before: SyncTable | undefined, after: SyncTable): boolean {
  return !before || [...after.columns.keys()].some((field) => !before.columns.has(field));
}

function property(schema: SyncSchema, column: AddColumn, names: ReadonlySet<string>): DeclaredProperty {
  const element = elementOf(schema, column, names);
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

function elementOf(schema: SyncSchema, column: AddColumn, names: ReadonlySet<string>): Omit<DeclaredProperty, 'items'> {
  if (column.valueType !== 'Link') return { type: scalarTypes[column.valueType] ?? 'mixed', ...(column.nullable && column.collectionType !== 'Single' ? { optional: true } : {}) };
  const target = column.linkTargetTable;
  if (target && names.has(target)) return { type: 'object', object_type: target };
  const spec = target ? schema.get(target)?.spec : undefined;
  return { type: spec?.kind === 'TopLevel' ? (scalarTypes[spec.pkType] ?? 'mixed') : 'mixed' };
}
