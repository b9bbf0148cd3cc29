// Development mode (spec 2.6): when development_mode_enabled is on, each synced object type gets a schema
// and maps to a collection of the same name in database_name. This turns the types a client declared
// into collection schemas, additively: new types and new fields are added, nothing is removed, and a
// field whose type would change is refused (that is a breaking change, as it is for the real service).
// The schemas say what App Services' did, so that the sync schema read back from them is the client's own:
// a float is bsonType float, an optional element of a collection is [type, "null"], an embedded object is a
// sub-document schema with its type as title, and a link holds the target's primary key type with a
// relationship to the target's collection.

import { PARTITION_KEY_TYPES, type AppConfig, type ConfigViolation, type JsonSchema } from '@tessera/app-config';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { isSyncEnabled, locateSync } from '../deploy/sync-transition';

/** A property of a synced object type, as a client SDK declares it. */
export interface SyncedProperty {
  /** string, int, bool, float, double, decimal128, date, objectId, uuid, data, mixed, object, list, set, dictionary. */
  type: string;
  optional?: boolean;
  /** For object links and collections of objects: the linked type's name. */
  object_type?: string;
  /** For list, set and dictionary: the element type. */
  items?: SyncedProperty;
}

export interface SyncedObjectType {
  name: string;
  primary_key?: string;
  /** An embedded type: no collection of its own, the sub-document schema of the properties holding it. */
  embedded?: boolean;
  properties: Record<string, SyncedProperty>;
}

const scalarBsonTypes: Record<string, string> = {
  string: 'string',
  int: 'long',
  bool: 'bool',
  float: 'float',
  double: 'double',
  decimal128: 'decimal',
  decimal: 'decimal',
  date: 'date',
  objectId: 'objectId',
  objectid: 'objectId',
  uuid: 'uuid',
  data: 'binData',
  mixed: 'mixed',
};

export interface GeneratedSchemas {
  /** Collections that got a schema for the first time. */
  created: string[];
  /** Collections whose schema gained fields. */
  extended: string[];
}

/** Adds the schemas of `types` to the synced service's collection rules in database_name; mutates `app`. */
export function applyDevelopmentSchemas(app: AppConfig, types: readonly SyncedObjectType[]): GeneratedSchemas {
  const located = locateSync(app);
  if (!located || !isSyncEnabled(located.sync) || located.sync.development_mode_enabled !== true) {
    throw new AdminApiError(AdminApiErrorCode.BadRequest, 'development mode is off: enable sync with development_mode_enabled true and a database_name first');
  }
  const database = located.sync.database_name;
  const service = app.services.find((candidate) => candidate.config.name === located.serviceName);
  if (typeof database !== 'string' || database === '' || !service) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'development mode needs database_name and a synced cluster service');
  const partition = located.sync.partition;
  const partitionBsonType = typeof partition?.type === 'string' ? PARTITION_KEY_TYPES[partition.type.toLowerCase()]?.bsonTypes[0] : undefined;
  const context: SchemaContext = { types: new Map(types.map((type) => [type.name, type])), ruleOf: (name) => service.collectionRules.find((rule) => rule.database === database && (rule.schema?.title ?? rule.collection) === name), relationships: {}, depth: 0, prefix: '' };
  const violations: ConfigViolation[] = [];
  const result: GeneratedSchemas = { created: [], extended: [] };

  for (const type of types) {
    if (typeof type.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(type.name)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `invalid object type name ${JSON.stringify(type.name)}`);
    if (type.embedded === true) continue;
    context.relationships = {};
    const generated = schemaOf(type, context);
    const relationships = Object.fromEntries(Object.entries(context.relationships).map(([field, target]) => [field, { ref: `#/relationship/${service.config.name}/${database}/${target.collection}`, source_key: field, foreign_key: '_id', is_list: target.many }]));
    if (typeof partition?.key === 'string' && partitionBsonType && !generated.properties?.[partition.key]) {
      generated.properties = { ...generated.properties, [partition.key]: { bsonType: partitionBsonType } };
    }
    const file = `services/${service.config.name}/rules/${database}.${type.name}.json`;
    let rule = service.collectionRules.find((candidate) => candidate.database === database && candidate.collection === type.name);
    if (!rule) {
      rule = { database, collection: type.name, roles: [], filters: [] };
      service.collectionRules.push(rule);
    }
    // A relationship the rule lacks is added; one it has is the operator's and stays.
    if (Object.keys(relationships).length > 0) rule.relationships = { ...relationships, ...rule.relationships };
    if (!rule.schema) {
      rule.schema = generated;
      result.created.push(type.name);
      continue;
    }
    const existing = rule.schema.properties ?? {};
    let added = false;
    for (const [field, property] of Object.entries(generated.properties ?? {})) {
      const current = existing[field];
      if (!current) {
        existing[field] = property;
        added = true;
      } else if (JSON.stringify(current.bsonType) !== JSON.stringify(property.bsonType)) {
        violations.push({ file, path: `schema.properties.${field}.bsonType`, rule: 'sync.development.breaking', message: `field "${field}" of ${type.name} is ${JSON.stringify(current.bsonType)} in the schema but ${JSON.stringify(property.bsonType)} in the client: a breaking change that development mode does not make` });
      }
    }
    rule.schema.properties = existing;
    if (added) result.extended.push(type.name);
  }
  if (violations.length) throw new AdminApiError(AdminApiErrorCode.InvalidConfiguration, 'the synced types change existing fields', violations);
  return result;
}

/** What the types of one request resolve against, and the relationships the type being made needs. */
interface SchemaContext {
  types: ReadonlyMap<string, SyncedObjectType>;
  /** The collection rule of a top-level type already in the app (its schema's title or its collection). */
  ruleOf: (name: string) => { collection: string; schema?: JsonSchema } | undefined;
  /**
   * Field path -> the collection it links to, for the type being made: `owner` at the top, `pet.owner` in an
   * embedded object, `pets.[].owner` in embedded objects of a list, set or dictionary (App Services' keys).
   */
  relationships: Record<string, { collection: string; many: boolean }>;
  /** How deep in embedded objects the property being made is. */
  depth: number;
  /** The path of the embedded object whose fields are being made, with its trailing `.` (or `.[].`); '' at the top. */
  prefix: string;
}

function schemaOf(type: SyncedObjectType, context: SchemaContext): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [field, property] of Object.entries(type.properties ?? {})) {
    properties[field] = propertySchema(property, context, `${type.name}.${field}`, field);
    if (property.optional !== true && !['list', 'set', 'dictionary', 'object', 'mixed'].includes(property.type)) required.push(field);
  }
  if (type.primary_key && !properties[type.primary_key]) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `primary key "${type.primary_key}" of ${type.name} is not one of its properties`);
  return { title: type.name, bsonType: 'object', properties, ...(required.length ? { required: required.sort() } : {}) };
}

/** The schema of a property at `field` (a field of the type, or of the embedded object at `context.prefix`). */
function propertySchema(property: SyncedProperty, context: SchemaContext, where: string, field: string, element = false): JsonSchema {
  switch (property.type) {
    case 'list':
    case 'set':
      if (!property.items) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${where}: a ${property.type} needs items`);
      return { bsonType: 'array', items: propertySchema(property.items, context, `${where}[]`, field, true), ...(property.type === 'set' ? { uniqueItems: true } : {}) };
    case 'dictionary':
      if (!property.items) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${where}: a dictionary needs items`);
      return { bsonType: 'object', additionalProperties: propertySchema(property.items, context, `${where}{}`, field, true) };
    case 'object': {
      const target = property.object_type === undefined ? undefined : context.types.get(property.object_type);
      if (target?.embedded === true) {
        // Realm embedded types cannot hold themselves; the bound only guards against a malformed request.
        if (context.depth >= 32) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${where}: embedded objects nest too deep`);
        return schemaOf(target, { ...context, depth: context.depth + 1, prefix: `${context.prefix}${field}${element ? '.[].' : '.'}` });
      }
      // A link is stored as the target's primary key, with a relationship to the target's collection.
      const pkType = target ? target.properties[target.primary_key ?? '_id']?.type : undefined;
      const existing = property.object_type === undefined || target ? undefined : context.ruleOf(property.object_type);
      if (!property.object_type || (!target && !existing)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${where}: links to unknown type ${JSON.stringify(property.object_type)}`);
      context.relationships[`${context.prefix}${field}`] = { collection: existing?.collection ?? property.object_type, many: element };
      const existingId = existing?.schema?.properties?.['_id']?.bsonType;
      return { bsonType: (pkType ? scalarBsonTypes[pkType] : typeof existingId === 'string' ? existingId : undefined) ?? 'objectId' };
    }
    default: {
      const bsonType = scalarBsonTypes[property.type];
      if (!bsonType) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${where}: unknown property type ${JSON.stringify(property.type)}`);
      // An optional element of a collection may be null (a mixed one always may).
      return { bsonType: element && property.optional === true && bsonType !== 'mixed' ? [bsonType, 'null'] : bsonType };
    }
  }
}
