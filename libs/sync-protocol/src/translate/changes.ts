/**
 * Documents written outside sync turned into server changesets (documents -> changeset). An object is
 * written whole, or the top-level fields an update touched: CreateObject (idempotent on clients), then each
 * field set from scratch (Clear then inserts for collections), so the result does not depend on what the
 * client held before. A document that does not fit the schema yields a reason instead of instructions.
 */
import type { AddColumn, Instruction, PathElement, Payload, PrimaryKey } from '../changeset/types';
import { formatPartitionValue, type PartitionKeyType, type PartitionValue } from '../wire/partition';
import type { BsonDocument } from './documents';
import { primaryKeyTypeOf, schemaInstructions, type SyncSchema, type SyncTable } from './schema';
import { columnPayload, mixedPayload, partitionValueFromBson, primaryKeyFromBson } from './values';

export type Translation = { ok: true; instructions: Instruction[] } | { ok: false; reason: string };

class DoesNotFit extends Error {}

function isPlainDocument(value: unknown): value is BsonDocument {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) && !(value instanceof Uint8Array) && !('_bsontype' in value);
}

/** The primary key of a document's `_id` in `table`, or undefined when it does not fit. */
export function documentPrimaryKey(schema: SyncSchema, table: string, id: unknown): PrimaryKey | undefined {
  const spec = schema.get(table)?.spec;
  if (spec?.kind !== 'TopLevel') return undefined;
  return primaryKeyFromBson(id, spec.pkType, spec.pkNullable);
}

/** Writes one object's fields: the instructions of a top-level object, addressed by its table, key and field. */
class ObjectWriter {
  readonly out: Instruction[] = [];
  constructor(
    private readonly schema: SyncSchema,
    private readonly table: string,
    private readonly object: PrimaryKey,
  ) {}

  private fail(where: string, why: string): never {
    throw new DoesNotFit(`${this.table}.${where}: ${why}`);
  }

  private payload(value: unknown, column: AddColumn, where: string): Payload {
    const p = columnPayload(value, column, (t) => primaryKeyTypeOf(this.schema, t));
    if (!p) this.fail(where, `value does not fit the type ${column.valueType === 'Null' ? 'mixed' : column.valueType}`);
    return p;
  }

  private embedded(column: AddColumn): SyncTable | undefined {
    const target = column.linkTargetTable;
    const table = target === undefined ? undefined : this.schema.get(target);
    return column.valueType === 'Link' && table?.spec.kind === 'Embedded' ? table : undefined;
  }

  private set(field: string, path: PathElement[], value: Payload): void {
    this.out.push({ type: 'Update', table: this.table, object: this.object, field, path, value, isDefault: false, priorSize: 0 });
  }

  private insert(field: string, path: PathElement[], value: Payload): void {
    const index = path[path.length - 1] as number;
    this.out.push({ type: 'ArrayInsert', table: this.table, object: this.object, field, path, value, priorSize: index });
  }

  /** The fields of an embedded object (or the object itself) below `path`. */
  fields(table: SyncTable, field: string | undefined, path: PathElement[], doc: BsonDocument): void {
    for (const column of table.columns.values()) {
      const top = field ?? column.field;
      const at = field === undefined ? [] : [...path, column.field];
      this.column(column, top, at, doc[column.field]);
    }
  }

  /** A column's value at `field` + `path`: the slot is written whole. */
  column(column: AddColumn, field: string, path: PathElement[], value: unknown): void {
    const where = [field, ...path].join('.');
    switch (column.collectionType) {
      case 'Single': {
        const embedded = this.embedded(column);
        if (embedded) {
          if (value === undefined || value === null) return this.set(field, path, { type: 'Null' });
          if (!isPlainDocument(value)) this.fail(where, 'an embedded object must be a document');
          this.set(field, path, { type: 'ObjectValue' });
          return this.fields(embedded, field, path, value);
        }
        if (value === undefined) return;
        if (value === null && !column.nullable) return;
        if (column.valueType === 'Null') return this.mixed(field, path, value, 'set');
        return this.set(field, path, this.payload(value, column, where));
      }
      case 'List':
      case 'Set': {
        if (value !== undefined && value !== null && !Array.isArray(value)) this.fail(where, `a ${column.collectionType.toLowerCase()} must be an array`);
        this.out.push({ type: 'Clear', table: this.table, object: this.object, field, path, collectionType: column.collectionType });
        const items = (value ?? []) as unknown[];
        const embedded = this.embedded(column);
        items.forEach((item, i) => {
          if (column.collectionType === 'Set') {
            this.out.push({ type: 'SetInsert', table: this.table, object: this.object, field, path, value: this.payload(item, column, where) });
          } else if (embedded) {
            if (!isPlainDocument(item)) this.fail(where, 'an embedded object must be a document');
            this.insert(field, [...path, i], { type: 'ObjectValue' });
            this.fields(embedded, field, [...path, i], item);
          } else if (column.valueType === 'Null') {
            this.mixed(field, [...path, i], item, 'insert');
          } else {
            this.insert(field, [...path, i], this.payload(item, column, where));
          }
        });
        return;
      }
      case 'Dictionary': {
        if (value !== undefined && value !== null && !isPlainDocument(value)) this.fail(where, 'a dictionary must be a document');
        this.out.push({ type: 'Clear', table: this.table, object: this.object, field, path, collectionType: 'Dictionary' });
        const embedded = this.embedded(column);
        for (const [key, item] of Object.entries((value ?? {}))) {
          if (embedded && isPlainDocument(item)) {
            this.set(field, [...path, key], { type: 'ObjectValue' });
            this.fields(embedded, field, [...path, key], item);
          } else if (column.valueType === 'Null') {
            this.mixed(field, [...path, key], item, 'set');
          } else {
            this.set(field, [...path, key], this.payload(item, column, where));
          }
        }
        return;
      }
    }
  }

  /** A Mixed value: a scalar, or a nested list (array) or dictionary (document). */
  private mixed(field: string, path: PathElement[], value: unknown, how: 'set' | 'insert'): void {
    const put = (p: Payload): void => (how === 'set' ? this.set(field, path, p) : this.insert(field, path, p));
    // Creating a nested collection where one of that kind exists keeps it (realm-core makes that idempotent),
    // so it is cleared too: the slot then holds exactly the document's elements.
    const clear = (collectionType: 'List' | 'Dictionary'): void => {
      this.out.push({ type: 'Clear', table: this.table, object: this.object, field, path, collectionType });
    };
    if (Array.isArray(value)) {
      put({ type: 'List' });
      clear('List');
      value.forEach((item, i) => this.mixed(field, [...path, i], item, 'insert'));
      return;
    }
    if (isPlainDocument(value)) {
      put({ type: 'Dictionary' });
      clear('Dictionary');
      for (const [key, item] of Object.entries(value)) this.mixed(field, [...path, key], item, 'set');
      return;
    }
    const p = mixedPayload(value);
    if (!p) this.fail([field, ...path].join('.'), 'value has no mixed form');
    put(p);
  }
}

/**
 * The instructions that make a client's object equal to `doc`: CreateObject, then every column of the
 * table (or only the top-level `fields` given). The primary key column and the partition key are left out
 * unless the client's schema has the key as a column.
 */
export function objectInstructions(schema: SyncSchema, table: string, doc: BsonDocument, fields?: ReadonlySet<string>, partitionKey?: string): Translation {
  const spec = schema.get(table);
  if (!spec || spec.spec.kind !== 'TopLevel') return { ok: false, reason: `no synced top-level table ${table}` };
  const object = documentPrimaryKey(schema, table, doc['_id']);
  if (!object) return { ok: false, reason: `${table}: _id does not fit the primary key type ${spec.spec.pkType}` };
  const writer = new ObjectWriter(schema, table, object);
  writer.out.push({ type: 'CreateObject', table, object });
  try {
    for (const column of spec.columns.values()) {
      if (column.field === spec.spec.pkField || (fields && !fields.has(column.field))) continue;
      let value = doc[column.field];
      // A key value of another type puts the document in the null partition: its client sees no value.
      if (column.field === partitionKey && columnPayload(value, column, (t) => primaryKeyTypeOf(schema, t)) === undefined) value = null;
      writer.column(column, column.field, [], value);
    }
  } catch (error) {
    if (error instanceof DoesNotFit) return { ok: false, reason: error.message };
    throw error;
  }
  return { ok: true, instructions: writer.out };
}

/** How documents map to partitions: the key field, its type and whether it is required. */
export interface Partitioning {
  key: string;
  type: PartitionKeyType;
  required: boolean;
}

/**
 * The partition text (`formatPartitionValue`) a document belongs to: a missing, null or invalid key is the
 * null partition when the key is optional; with a required key such documents belong to none (undefined).
 */
export function documentPartition(doc: BsonDocument, partitioning: Partitioning): string | undefined {
  const value: PartitionValue | undefined = partitionValueFromBson(doc[partitioning.key], partitioning.type);
  if (!value || value.type === 'null') return partitioning.required ? undefined : 'null';
  return formatPartitionValue(value);
}

/** A change to one document of a synced table, as a change stream reports it. */
export interface DocumentChange {
  operationType: 'insert' | 'update' | 'replace' | 'delete';
  table: string;
  id: unknown;
  /** The document after the change (null or absent when gone or unknown). */
  after?: BsonDocument | null;
  /** The document before it, when the source keeps it. */
  before?: BsonDocument | null;
  /** The partition the document was known to be in when `before` is absent. */
  knownPartition?: string;
  /** For updates: the top-level fields the update touched. */
  updatedFields?: readonly string[];
}

export interface ChangeTranslation {
  /** Partition text -> instructions of the server changeset for that partition. */
  changesets: Map<string, Instruction[]>;
  /** Why (part of) the change was not translated. */
  skipped?: string;
}

/**
 * The server changesets a document change makes: a delete erases the object from its partition; a change
 * of the key value erases it from the old partition and writes it whole in the new one; other writes set
 * the object (only the touched fields of an update, when its partition is known to be unchanged).
 */
export function translateDocumentChange(schema: SyncSchema, partitioning: Partitioning, change: DocumentChange): ChangeTranslation {
  const changesets = new Map<string, Instruction[]>();
  const object = documentPrimaryKey(schema, change.table, change.id);
  if (!object) return { changesets, skipped: `${change.table}: _id does not fit the primary key type` };
  const oldPartition = change.before ? documentPartition(change.before, partitioning) : change.knownPartition;
  const erase = (partition: string): void => {
    changesets.set(partition, [...schemaInstructions(schema, [change.table]), { type: 'EraseObject', table: change.table, object }]);
  };
  if (change.operationType === 'delete' || !change.after) {
    if (change.operationType === 'delete' && oldPartition !== undefined) erase(oldPartition);
    return { changesets };
  }
  const newPartition = documentPartition(change.after, partitioning);
  const moved = oldPartition !== undefined && oldPartition !== newPartition;
  if (moved) erase(oldPartition);
  if (newPartition === undefined) return { changesets, skipped: moved ? undefined : `${change.table}: no valid value for the required partition key ${partitioning.key}` };
  const partial = change.operationType === 'update' && !moved && oldPartition !== undefined && change.updatedFields !== undefined;
  const written = objectInstructions(schema, change.table, change.after, partial ? new Set(change.updatedFields) : undefined, partitioning.key);
  if (!written.ok) return { changesets, skipped: written.reason };
  changesets.set(newPartition, [...schemaInstructions(schema, [change.table]), ...written.instructions]);
  return { changesets };
}
