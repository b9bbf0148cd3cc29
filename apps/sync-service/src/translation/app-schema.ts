/**
 * Where each synced type lives and what it looks like, from the app's configuration (pure): the data-source
 * service sync uses, the collection of each type (a collection rule whose schema's `title` names the type, or
 * `database_name.<type>` in development mode) and the type's table spec, from the JSON schema App Services
 * keeps per collection (bsonType, properties, items, required, relationships for links).
 */
import { type AppConfig, type CollectionRule, effectiveSyncConfig, type JsonSchema, isDataSourceType, isFederatedType } from '@tessera/app-config';
import { type AddColumn, type CollectionType, columnOf, type PayloadType, type SyncSchema, type SyncTable } from '@tessera/sync-protocol';

export interface CollectionRef {
  db: string;
  coll: string;
}

export interface AppSyncLayout {
  /** The data-source service sync writes to (its name, as `DataSources.forService` takes it). */
  service: string;
  developmentMode: boolean;
  /** `database_name`: where development mode puts a collection per type. */
  database?: string;
  /** Types described by the app's schemas. */
  schema: SyncSchema;
  /** Type -> collection, for the types of `schema`. */
  collections: Map<string, CollectionRef>;
}

const scalarTypes: Record<string, PayloadType> = {
  objectId: 'ObjectId',
  string: 'String',
  int: 'Int',
  long: 'Int',
  bool: 'Bool',
  double: 'Double',
  float: 'Float',
  decimal: 'Decimal',
  date: 'Timestamp',
  binData: 'Binary',
  uuid: 'UUID',
  mixed: 'Null',
};

function bsonTypeOf(schema: JsonSchema | undefined): string | undefined {
  const t = schema?.bsonType;
  if (Array.isArray(t)) return t.find((x) => x !== 'null');
  return t;
}

/** The data-source service of the app's sync: `service_name`, the cluster service that embeds sync, or the one cluster. */
export function syncServiceName(config: AppConfig): string | undefined {
  const clusters = config.services.filter((s) => isDataSourceType(s.config.type) && !isFederatedType(s.config.type));
  const named = effectiveSyncConfig(config)?.service_name;
  if (named) return named;
  const embedding = clusters.find((s) => s.config.config?.sync !== undefined);
  return (embedding ?? clusters[0])?.config.name;
}

class SchemaReader {
  readonly schema: SyncSchema = new Map();
  readonly collections = new Map<string, CollectionRef>();
  /** "<db>/<coll>" -> type, to resolve relationship refs. */
  private readonly byCollection = new Map<string, string>();

  constructor(private readonly service: string) {}

  read(rules: readonly CollectionRule[]): void {
    const typed = rules.filter((rule) => rule.schema && bsonTypeOf(rule.schema) === 'object');
    for (const rule of typed) this.byCollection.set(`${rule.database}/${rule.collection}`, rule.schema?.title ?? rule.collection);
    for (const rule of typed) {
      const name = rule.schema?.title ?? rule.collection;
      const idType = scalarTypes[bsonTypeOf(rule.schema?.properties?.['_id']) ?? 'objectId'] ?? 'ObjectId';
      const table: SyncTable = { name, spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: idType, pkNullable: false }, columns: new Map() };
      this.schema.set(name, table);
      this.collections.set(name, { db: rule.database, coll: rule.collection });
      this.fill(table, rule.schema ?? {}, rule);
    }
  }

  /**
   * The type a field links to, from its collection's relationships. `path` is the field's path from the top:
   * `pet.favoriteToyBrand` in an embedded object, `pets.[].favoriteToyBrand` in embedded objects of a list,
   * set or dictionary (App Services' relationship keys).
   */
  private linkTarget(rule: CollectionRule | undefined, path: string): string | undefined {
    const relationship = rule?.relationships?.[path];
    // A link holds the target's primary key: a relationship on another foreign field (the validator warns)
    // syncs as the field's own value.
    if (relationship?.foreign_key !== undefined && relationship.foreign_key !== '_id') return undefined;
    const ref = relationship?.ref;
    // "#/relationship/<service>/<db>/<coll>"
    const parts = typeof ref === 'string' ? ref.split('/') : [];
    if (parts.length < 5 || (parts[2] !== this.service && parts[2] !== 'mongodb-atlas')) return undefined;
    return this.byCollection.get(`${parts[3]}/${parts[4]}`);
  }

  /** The columns of `table` from `schema`; `prefix` is the path of an embedded table's fields from the top. */
  private fill(table: SyncTable, schema: JsonSchema, rule: CollectionRule | undefined, prefix = ''): void {
    const required = new Set(schema.required ?? []);
    for (const [field, property] of Object.entries(schema.properties ?? {})) {
      if (field === '_id' && table.spec.kind === 'TopLevel') continue;
      const column = this.column(table.name, field, property, rule, required.has(field), `${prefix}${field}`);
      if (column) table.columns.set(field, column);
    }
  }

  private column(tableName: string, field: string, property: JsonSchema, rule: CollectionRule | undefined, required: boolean, path: string): AddColumn | undefined {
    const type = bsonTypeOf(property);
    let collectionType: CollectionType = 'Single';
    let element = property;
    if (type === 'array') {
      collectionType = property['uniqueItems'] === true ? 'Set' : 'List';
      element = property.items ?? {};
    } else if (type === 'object' && !property.properties && typeof property['additionalProperties'] === 'object') {
      collectionType = 'Dictionary';
      element = property['additionalProperties'] as JsonSchema;
    }
    const shape = { collectionType, keyType: (collectionType === 'Dictionary' ? 'String' : 'Null') as PayloadType };
    // Realm makes a single link and a dictionary's links nullable, never a list's or a set's.
    const linkNullable = collectionType === 'Single' || collectionType === 'Dictionary';
    const linked = this.linkTarget(rule, path);
    if (linked) return columnOf(tableName, field, 'Link', { ...shape, nullable: linkNullable, linkTargetTable: linked });
    const elementType = bsonTypeOf(element);
    if (elementType === 'object') {
      const embeddedName = element.title ?? `${tableName}_${field}`;
      const embedded: SyncTable = { name: embeddedName, spec: { kind: 'Embedded' }, columns: new Map() };
      this.schema.set(embeddedName, embedded);
      // Links inside embedded objects are the top-level collection's relationships, keyed by their path.
      this.fill(embedded, element, rule, collectionType === 'Single' ? `${path}.` : `${path}.[].`);
      return columnOf(tableName, field, 'Link', { ...shape, nullable: linkNullable, linkTargetTable: embeddedName });
    }
    const valueType = elementType === undefined ? undefined : scalarTypes[elementType];
    if (valueType === undefined) return undefined;
    // An element of a collection is optional when its bsonType admits null (["string", "null"]).
    const nullable = collectionType === 'Single' ? !required : Array.isArray(element.bsonType) && element.bsonType.includes('null');
    return columnOf(tableName, field, valueType, { ...shape, nullable: valueType === 'Null' || nullable });
  }
}

/** The sync layout of a partition-sync app, or undefined when sync has no data source to write to. */
export function appSyncLayout(config: AppConfig): AppSyncLayout | undefined {
  const service = syncServiceName(config);
  const linked = config.services.find((s) => s.config.name === service);
  if (!service || !linked) return undefined;
  const reader = new SchemaReader(service);
  reader.read(linked.collectionRules);
  const sync = effectiveSyncConfig(config);
  const database = sync?.database_name;
  return {
    service,
    developmentMode: sync?.development_mode_enabled === true,
    ...(database ? { database } : {}),
    schema: reader.schema,
    collections: reader.collections,
  };
}
