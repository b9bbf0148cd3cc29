/**
 * The GraphQL model of an app: which collections are exposed, under which type and field names, with
 * which field kinds and relationships (reference PART A.2-A.5). Plain data computed from the AppConfig;
 * both the SDL printer and the executor read it, so names are decided in one place only.
 */
import type { AppConfig, CollectionRule, JsonSchema, Relationship } from '@tessera/app-config';
import { lowerFirst, pluralize, singularize, upperFirst } from './inflection';

export type ScalarName = 'ObjectId' | 'String' | 'Int' | 'Long' | 'Float' | 'Decimal' | 'DateTime' | 'Boolean';

export interface RelationshipModel {
  /** Type name of the foreign collection. */
  target: string;
  foreignKey: string;
  /** GraphQL scalar of the foreign key (the `link` type). */
  foreignScalar: ScalarName;
  isList: boolean;
}

export interface FieldModel {
  /** The GraphQL field name. */
  name: string;
  /** The stored document key. */
  key: string;
  required: boolean;
  /** How many array levels wrap the value (0: not an array). */
  listDepth: number;
  kind: 'scalar' | 'object' | 'relationship';
  /** The scalar (for relationships: the source key's scalar). */
  scalar?: ScalarName;
  /** The stored bsonType of a scalar (`int`, `double`, ...), which decides `_inc`. */
  bsonType?: string;
  object?: ObjectModel;
  relationship?: RelationshipModel;
}

export interface ObjectModel {
  name: string;
  fields: FieldModel[];
}

export interface CollectionModel extends ObjectModel {
  /** Query names: `item` and `items`. */
  singular: string;
  plural: string;
  service: string;
  database: string;
  collection: string;
}

export type ResolverFormat = 'scalar' | 'scalar-list' | 'generated' | 'generated-list' | 'custom' | '';

export interface CustomResolverModel {
  onType: string;
  fieldName: string;
  functionName: string;
  input?: { format: ResolverFormat; type: string | JsonSchema };
  payload?: { format: ResolverFormat; type: string | JsonSchema };
}

export interface GraphqlModel {
  collections: CollectionModel[];
  customResolvers: CustomResolverModel[];
  naturalPluralization: boolean;
  introspection: boolean;
  /** Non-fatal findings (duplicate titles, unsupported relationships), as App Services warned. */
  warnings: string[];
}

const scalarOfBsonType: Record<string, ScalarName> = {
  objectId: 'ObjectId',
  string: 'String',
  int: 'Int',
  long: 'Long',
  double: 'Float',
  float: 'Float',
  number: 'Float',
  decimal: 'Decimal',
  date: 'DateTime',
  timestamp: 'DateTime',
  bool: 'Boolean',
  boolean: 'Boolean',
};

/** `bsonType` of a schema, ignoring a `null` alternative (`["string","null"]`). */
export function bsonTypeOf(schema: JsonSchema): string | undefined {
  const type = schema.bsonType ?? (schema['type'] as string | string[] | undefined);
  if (Array.isArray(type)) return type.find((t) => t !== 'null');
  return type;
}

export function scalarOf(bsonType: string | undefined): ScalarName | undefined {
  return bsonType === undefined ? undefined : scalarOfBsonType[bsonType];
}

/** Type name from a title or collection name: singular, first letter upper-cased, the rest as written. */
export function typeNameOf(title: string): string {
  return upperFirst(singularize(sanitizeName(title)));
}

/**
 * A valid name stays as written; otherwise unsupported characters split words, each word gets an
 * upper-case first letter and leading digits go ("Assigned reviewer of QA step" -> AssignedReviewerOfQAStep).
 */
export function fieldNameOf(key: string): string | undefined {
  if (key.startsWith('__')) return undefined;
  if (/^[_A-Za-z][_0-9A-Za-z]*$/.test(key)) return key;
  const name = sanitizeName(key);
  return name.length > 0 ? name : undefined;
}

function sanitizeName(raw: string): string {
  if (/^[_A-Za-z][_0-9A-Za-z]*$/.test(raw)) return raw;
  const words = raw.split(/[^_0-9A-Za-z]+/).filter((w) => w.length > 0);
  return words.map(upperFirst).join('').replace(/^[0-9]+/, '');
}

export function graphqlOptions(config: AppConfig): { naturalPluralization: boolean; introspection: boolean } {
  const options = config.graphql?.config ?? {};
  return {
    naturalPluralization: options['use_natural_pluralization'] !== false,
    introspection: options['disable_schema_introspection'] !== true,
  };
}

function pluralNameOf(typeName: string, natural: boolean): string {
  const singular = lowerFirst(typeName);
  if (!natural) return `${singular}s`;
  const plural = lowerFirst(pluralize(typeName));
  return plural === singular ? `${singular}s` : plural;
}

interface ExposedCollection {
  service: string;
  rule: CollectionRule & { schema: JsonSchema };
  typeName: string;
}

/** Builds the model. Collections are taken in namespace order so duplicate names resolve the same way each time. */
export function buildGraphqlModel(config: AppConfig): GraphqlModel {
  const { naturalPluralization, introspection } = graphqlOptions(config);
  const warnings: string[] = [];
  const exposed: ExposedCollection[] = [];
  const taken = new Set<string>();
  const candidates = config.services
    .flatMap((service) => service.collectionRules.map((rule) => ({ service: service.config.name, rule })))
    .filter((c): c is { service: string; rule: CollectionRule & { schema: JsonSchema } } => c.rule.schema !== undefined && isObjectSchema(c.rule.schema))
    .sort((a, b) => `${a.service}/${a.rule.database}/${a.rule.collection}`.localeCompare(`${b.service}/${b.rule.database}/${b.rule.collection}`));
  for (const candidate of candidates) {
    const typeName = typeNameOf(candidate.rule.schema.title ?? candidate.rule.collection);
    if (!/^[_A-Za-z][_0-9A-Za-z]*$/.test(typeName)) {
      warnings.push(`${candidate.rule.database}.${candidate.rule.collection}: title '${typeName}' is not a GraphQL name; collection not exposed`);
      continue;
    }
    if (taken.has(typeName)) {
      warnings.push(`${candidate.rule.database}.${candidate.rule.collection}: duplicate schema title '${typeName}'; collection not exposed`);
      continue;
    }
    taken.add(typeName);
    exposed.push({ ...candidate, typeName });
  }

  const byNamespace = new Map(exposed.map((e) => [`${e.service}/${e.rule.database}/${e.rule.collection}`, e]));
  const collections: CollectionModel[] = exposed.map((e) => {
    const singular = lowerFirst(e.typeName);
    return {
      name: e.typeName,
      singular,
      plural: pluralNameOf(e.typeName, naturalPluralization),
      service: e.service,
      database: e.rule.database,
      collection: e.rule.collection,
      fields: [],
    };
  });
  const embeddedNames = new Set<string>();
  exposed.forEach((e, i) => {
    const relationships = e.rule.relationships ?? {};
    collections[i].fields = objectFields(e.typeName, e.rule.schema, embeddedNames, warnings, (key) => {
      const relationship = relationships[key] as Relationship | undefined;
      if (!relationship) return undefined;
      if (key === '_id') {
        // App Services' docs rule it out, its deployments still wrote one: _id stays the document's id.
        warnings.push(`${e.rule.database}.${e.rule.collection}: relationship '_id' is not followed (the source field of a relationship cannot be _id)`);
        return undefined;
      }
      const target = byNamespace.get(relationship.ref.replace(/^#\/relationship\//, ''));
      if (!target) {
        warnings.push(`${e.rule.database}.${e.rule.collection}: relationship '${key}' points at ${relationship.ref}, which is not exposed`);
        return undefined;
      }
      const foreign = target.rule.schema.properties?.[relationship.foreign_key];
      return {
        target: target.typeName,
        foreignKey: relationship.foreign_key,
        foreignScalar: (foreign && scalarOf(bsonTypeOf(foreign))) ?? 'String',
        isList: relationship.is_list === true,
      };
    });
  });

  const customResolvers: CustomResolverModel[] = (config.graphql?.customResolvers ?? [])
    .map((r) => ({
      onType: r.on_type,
      fieldName: r.field_name,
      functionName: r.function_name,
      ...resolverPart('input', r),
      ...resolverPart('payload', r),
    }))
    .sort((a, b) => `${a.onType}.${a.fieldName}`.localeCompare(`${b.onType}.${b.fieldName}`));
  return { collections, customResolvers, naturalPluralization, introspection, warnings };
}

function resolverPart(part: 'input' | 'payload', raw: Record<string, unknown>): Partial<Pick<CustomResolverModel, 'input' | 'payload'>> {
  const type = raw[`${part}_type`];
  const format = (raw[`${part}_type_format`] ?? '') as ResolverFormat;
  if (type === undefined || type === null || type === '' || (part === 'input' && format === '')) return {};
  return { [part]: { format: format === '' ? (typeof type === 'string' ? 'scalar' : 'custom') : format, type: type as string | JsonSchema } };
}

function isObjectSchema(schema: JsonSchema): boolean {
  const type = bsonTypeOf(schema);
  return type === undefined ? schema.properties !== undefined : type === 'object';
}

function objectFields(
  typeName: string,
  schema: JsonSchema,
  embeddedNames: Set<string>,
  warnings: string[],
  relationshipOf?: (key: string) => RelationshipModel | undefined,
): FieldModel[] {
  const required = new Set(schema.required ?? []);
  const fields: FieldModel[] = [];
  const seen = new Set<string>();
  for (const key of Object.keys(schema.properties ?? {}).sort()) {
    const name = fieldNameOf(key);
    if (name === undefined || seen.has(name)) continue;
    const property = (schema.properties ?? {})[key];
    const relationship = relationshipOf?.(key);
    let element = property;
    let listDepth = 0;
    while (bsonTypeOf(element) === 'array' && element.items) {
      element = element.items;
      listDepth += 1;
    }
    if (bsonTypeOf(element) === 'array') continue;
    const base = { name, key, required: required.has(key), listDepth };
    if (relationship) {
      const scalar = scalarOf(bsonTypeOf(element));
      if (scalar === undefined) continue;
      seen.add(name);
      fields.push({ ...base, kind: 'relationship', scalar, relationship: { ...relationship, isList: relationship.isList || listDepth > 0 } });
      continue;
    }
    if (isObjectSchema(element) && element.properties !== undefined) {
      const objectName = element.title !== undefined ? typeNameOf(element.title) : typeName + upperFirst(singularize(name));
      const nested = objectFields(objectName, element, embeddedNames, warnings);
      // A GraphQL object type needs a field: one object with none made the whole schema invalid, and every
      // request of the app failed. Left out, with a warning, as the fields GraphQL cannot type are.
      if (nested.length === 0) {
        warnings.push(`${typeName}.${name}: embedded object '${objectName}' has no field GraphQL can type; it is left out`);
        continue;
      }
      if (embeddedNames.has(objectName)) warnings.push(`duplicate embedded object type name '${objectName}'`);
      embeddedNames.add(objectName);
      seen.add(name);
      fields.push({ ...base, kind: 'object', object: { name: objectName, fields: nested } });
      continue;
    }
    const bsonType = bsonTypeOf(element);
    const scalar = scalarOf(bsonType);
    if (scalar === undefined) continue;
    seen.add(name);
    fields.push({ ...base, kind: 'scalar', scalar, ...(bsonType ? { bsonType } : {}) });
  }
  return fields;
}
