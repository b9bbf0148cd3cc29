/**
 * A flexible-sync session's view (spec 2.7): per synced type, the union of the subscriptions (one RQL text
 * per type, `(q1) OR (q2)`) intersected with the read filter of the role chosen for the session. Pure: the
 * roles come in already chosen (openSyncSession), the schema comes in read. A query the server cannot serve
 * is an RqlError, which the connection answers with QUERY_ERROR 226; it never throws anything else for input.
 */
import { parseQuery, type RqlField, type RqlFieldType, type RqlTable, RqlError, RqlErrorCode, translateQuery, type TranslatedQuery } from '@tessera/rql';
import { type SyncSession } from '@tessera/rules';
import { type PayloadType, type QuerySet, type SyncSchema } from '@tessera/sync-protocol';
import { type FlexibleSyncMode, queryableFieldsFor } from '../sessions/sync-config';

type Document = Record<string, unknown>;

/** One subscribed type: its query and the session's role on its collection. */
export interface ViewTable {
  table: string;
  query: TranslatedQuery;
  role: SyncSession;
}

export interface FlexibleView {
  tables: ReadonlyMap<string, ViewTable>;
}

const fieldTypes: Partial<Record<PayloadType, RqlFieldType>> = {
  Int: 'int',
  Bool: 'bool',
  String: 'string',
  Binary: 'binary',
  Timestamp: 'date',
  Float: 'float',
  Double: 'double',
  Decimal: 'decimal',
  Link: 'object',
  ObjectId: 'objectId',
  UUID: 'uuid',
  Null: 'mixed',
};

/** A synced type as the query translator sees it: its columns, with `_id` of the primary key's type. */
export function rqlTable(schema: SyncSchema, name: string): RqlTable | undefined {
  const table = schema.get(name);
  if (table?.spec.kind !== 'TopLevel') return undefined;
  const fields: Record<string, RqlField> = {};
  const pkType = fieldTypes[table.spec.pkType];
  if (pkType) fields[table.spec.pkField] = { type: pkType };
  for (const column of table.columns.values()) {
    const type = fieldTypes[column.valueType];
    if (!type) continue;
    const collection = column.collectionType === 'List' ? 'list' : column.collectionType === 'Set' ? 'set' : column.collectionType === 'Dictionary' ? 'dictionary' : undefined;
    fields[column.field] = collection ? { type, collection } : { type };
  }
  return { name, fields };
}

/**
 * Parses and translates every type's query of a query set. Throws RqlError for a query the server does not
 * serve (syntax, a non-queryable field, an unknown type, an asymmetric type).
 */
export function translateQuerySet(mode: FlexibleSyncMode, schema: SyncSchema, queries: QuerySet): Map<string, TranslatedQuery> {
  const translated = new Map<string, TranslatedQuery>();
  for (const [name, text] of Object.entries(queries)) {
    if (mode.asymmetricTables.includes(name)) throw new RqlError(RqlErrorCode.Unsupported, `Invalid query: cannot subscribe to asymmetric table "${name}"`);
    const table = rqlTable(schema, name);
    if (!table) throw new RqlError(RqlErrorCode.Unsupported, `Invalid query: no synced table "${name}" in the app's schema`);
    const indexed = mode.indexedQueryableField;
    translated.set(name, translateQuery(parseQuery(text), table, { queryable: queryableFieldsFor(mode, name), ...(indexed ? { indexed: [indexed] } : {}) }));
  }
  return translated;
}

/** Whether `doc` of `table` is in the view: one of the subscriptions matches and the role may read it. */
export function inView(view: FlexibleView, table: string, doc: Document | null | undefined): boolean {
  if (!doc) return false;
  const entry = view.tables.get(table);
  return entry !== undefined && entry.query.matches(doc) && entry.role.canRead(doc);
}

/** The datastore filter of a type's view (subscriptions AND the role's read filter), or undefined for none. */
export function viewFilter(entry: ViewTable): Document | undefined {
  const read = entry.role.readQuery;
  if (read === false || entry.role.denied) return undefined;
  if (read === true) return entry.query.filter;
  return { $and: [entry.query.filter, read] };
}
