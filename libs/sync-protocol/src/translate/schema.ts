/**
 * The sync schema of an app: its Realm tables (primary key spec or embedded) and their columns, as the
 * changeset schema instructions (AddTable, AddColumn) describe them. Clients send their schema in their
 * first changesets; this decides whether the server accepts it (development mode adds what is new; without
 * it, App Services refuses every change from clients) and writes the server's schema into server changesets.
 */
import { type AddColumn, type AddTable, type Instruction, isPathInstruction, type PayloadType, type TableSpec } from '../changeset/types';

export interface SyncTable {
  name: string;
  spec: TableSpec;
  columns: Map<string, AddColumn>;
}

export type SyncSchema = Map<string, SyncTable>;

/** An AddColumn of a required single value unless `extra` says otherwise. */
export function columnOf(table: string, field: string, valueType: PayloadType, extra: Partial<AddColumn> = {}): AddColumn {
  return { type: 'AddColumn', table, field, valueType, nullable: false, collectionType: 'Single', keyType: 'Null', ...extra };
}

export type SchemaCheck = { ok: true; schema: SyncSchema; changed: boolean } | { ok: false; message: string };

const restricted = 'schema changes from clients are restricted when developer mode is disabled';

function typeName(column: Pick<AddColumn, 'valueType' | 'collectionType' | 'linkTargetTable'>): string {
  const base = column.valueType === 'Null' ? 'mixed' : column.valueType === 'Link' ? `link<${column.linkTargetTable ?? ''}>` : column.valueType.toLowerCase();
  return column.collectionType === 'Single' ? base : `${column.collectionType.toLowerCase()}<${base}>`;
}

function sameTableSpec(a: TableSpec, b: TableSpec): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'Embedded' || b.kind === 'Embedded') return true;
  return a.pkField === b.pkField && a.pkType === b.pkType && a.pkNullable === b.pkNullable;
}

/**
 * Column types must match; nullability may differ (an optional property on one side and a required one on
 * the other stores the same values while both are set, and App Services schemas say little about it).
 */
function sameColumn(a: AddColumn, b: AddColumn): boolean {
  return a.valueType === b.valueType && a.collectionType === b.collectionType && (a.linkTargetTable ?? '') === (b.linkTargetTable ?? '') && a.keyType === b.keyType;
}

function copySchema(schema: SyncSchema): SyncSchema {
  return new Map([...schema].map(([name, table]) => [name, { name, spec: table.spec, columns: new Map(table.columns) }]));
}

/**
 * Checks a changeset's schema instructions against `schema`. Matching ones pass; a different table or
 * column type, an erased table or column is a breaking change; a new table or column is added in
 * development mode and refused otherwise. The returned schema is a new map when something was added.
 */
export function checkSchemaChanges(schema: SyncSchema, instructions: readonly Instruction[], developmentMode: boolean): SchemaCheck {
  let next = schema;
  let changed = false;
  const writable = (): SyncSchema => {
    if (!changed) {
      next = copySchema(schema);
      changed = true;
    }
    return next;
  };
  for (const instr of instructions) {
    if (isPathInstruction(instr) || instr.type === 'CreateObject' || instr.type === 'EraseObject') continue;
    switch (instr.type) {
      case 'AddTable': {
        const existing = next.get(instr.table);
        if (existing) {
          if (!sameTableSpec(existing.spec, instr.spec)) return { ok: false, message: `breaking schema change: the table "${instr.table}" has different properties (primary key or embedding)` };
          continue;
        }
        if (!developmentMode) return { ok: false, message: `non-breaking schema change: adding schema for Realm table "${instr.table}", ${restricted}` };
        writable().set(instr.table, { name: instr.table, spec: instr.spec, columns: new Map() });
        continue;
      }
      case 'AddColumn': {
        const table = next.get(instr.table);
        if (!table) return { ok: false, message: `schema change: adding field "${instr.field}" to the unknown table "${instr.table}"` };
        const existing = table.columns.get(instr.field);
        if (existing) {
          if (!sameColumn(existing, instr)) {
            return { ok: false, message: `breaking schema change: property "${instr.table}.${instr.field}" has been changed from "${typeName(existing)}" to "${typeName(instr)}"` };
          }
          continue;
        }
        if (!developmentMode) return { ok: false, message: `non-breaking schema change: adding field "${instr.field}" to table "${instr.table}", ${restricted}` };
        writable().get(instr.table)?.columns.set(instr.field, instr);
        continue;
      }
      case 'EraseTable':
        return { ok: false, message: `breaking schema change: removing the table "${instr.table}" is not allowed` };
      case 'EraseColumn':
        return { ok: false, message: `breaking schema change: removing the field "${instr.table}.${instr.field}" is not allowed` };
    }
  }
  return { ok: true, schema: next, changed };
}

/** The primary key type of a top-level table, undefined for embedded or unknown tables. */
export function primaryKeyTypeOf(schema: SyncSchema, table: string): PayloadType | undefined {
  const spec = schema.get(table)?.spec;
  return spec?.kind === 'TopLevel' ? spec.pkType : undefined;
}

/** The tables `roots` reach through embedded-object columns (and the roots), so a changeset can create them. */
export function tablesReachable(schema: SyncSchema, roots: Iterable<string>): string[] {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    const table = schema.get(name);
    if (!table) return;
    seen.add(name);
    for (const column of table.columns.values()) {
      const target = column.linkTargetTable;
      if (column.valueType === 'Link' && target !== undefined && schema.get(target)?.spec.kind === 'Embedded') visit(target);
    }
  };
  for (const root of roots) visit(root);
  return [...seen];
}

/**
 * The AddTable and AddColumn instructions of `tables` (tables first, so link columns find their targets).
 * Clients apply them idempotently when their schema matches, so every server changeset may carry them.
 */
export function schemaInstructions(schema: SyncSchema, tables: Iterable<string>): Instruction[] {
  const names = tablesReachable(schema, tables);
  const out: Instruction[] = [];
  for (const name of names) {
    const table = schema.get(name);
    if (table) out.push({ type: 'AddTable', table: name, spec: table.spec } satisfies AddTable);
  }
  for (const name of names) for (const column of schema.get(name)?.columns.values() ?? []) out.push({ ...column });
  return out;
}

/** Plain-data form of a schema (for storage), and back. */
export function schemaToPlain(schema: SyncSchema): Array<{ name: string; spec: TableSpec; columns: AddColumn[] }> {
  return [...schema.values()].map((t) => ({ name: t.name, spec: t.spec, columns: [...t.columns.values()] }));
}

export function schemaFromPlain(tables: ReadonlyArray<{ name: string; spec: TableSpec; columns: readonly AddColumn[] }>): SyncSchema {
  return new Map(tables.map((t) => [t.name, { name: t.name, spec: t.spec, columns: new Map(t.columns.map((c) => [c.field, c])) }]));
}
