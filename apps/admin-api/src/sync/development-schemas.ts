// Development mode (spec 2.6): when development_mode_enabled is on, each synced object type gets a schema
// and maps to a collection of the same name in database_name. This turns the types a client declared
// into collection schemas, additively: new types and new fields are added, nothing is removed, and a
// field whose type would change is refused (that is a breaking change, as it is for the real service).

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
  properties: Record<string, SyncedProperty>;
}

const scalarBsonTypes: Record<string, string> = {
  string: 'string',
  int: 'long',
  bool: 'bool',
  float: 'double',
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
  const names = new Set(types.map((type) => type.name));
  const violations: ConfigViolation[] = [];
  const result: GeneratedSchemas = { created: [], extended: [] };

  for (const type of types) {
    if (typeof type.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(type.name)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `invalid object type name ${JSON.stringify(type.name)}`);
    const generated = schemaOf(type, names);
    if (typeof partition?.key === 'string' && partitionBsonType && !generated.properties?.[partition.key]) {
      generated.properties = { ...generated.properties, [partition.key]: { bsonType: partitionBsonType } };
    }
    const file = `services/${service.config.name}/rules/${database}.${type.name}.json`;
    let rule = service.collectionRules.find((candidate) => candidate.database === database && candidate.collection === type.name);
    if (!rule) {
      rule = { database, collection: type.name, roles: [], filters: [] };
      service.collectionRules.push(rule);
    }
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

function schemaOf(type: SyncedObjectType, names: Set<string>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [field, property] of Object.entries(type.properties ?? {})) {
    properties[field] = propertySchema(property, names, `${type.name}.${field}`);
    if (property.optional !== true && !['list', 'set', 'dictionary', 'object', 'mixed'].includes(property.type)) required.push(field);
  }
  if (type.primary_key && !properties[type.primary_key]) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `primary key "${type.primary_key}" of ${type.name} is not one of its properties`);
  return { title: type.name, bsonType: 'object', properties, ...(required.length ? { required: required.sort() } : {}) };
}

function propertySchema(property: SyncedProperty, names: Set<string>, where: string): JsonSchema {
  switch (property.type) {
    case 'list':
    case 'set':
      if (!property.items) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${where}: a ${property.type} needs items`);
      return { bsonType: 'array', items: propertySchema(property.items, names, `${where}[]`), ...(property.type === 'set' ? { uniqueItems: true } : {}) };
    case 'dictionary':
      if (!property.items) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${where}: a dictionary needs items`);
      return { bsonType: 'object', additionalProperties: propertySchema(property.items, names, `${where}{}`) };
    case 'object':
      // A link to another synced type is stored as that object's primary key (an ObjectId by convention).
      if (!property.object_type || !names.has(property.object_type)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${where}: links to unknown type ${JSON.stringify(property.object_type)}`);
      return { bsonType: 'objectId' };
    default: {
      const bsonType = scalarBsonTypes[property.type];
      if (!bsonType) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${where}: unknown property type ${JSON.stringify(property.type)}`);
      return { bsonType };
    }
  }
}
