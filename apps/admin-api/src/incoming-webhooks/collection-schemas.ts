// JSON schemas of sampled documents (App Services' `generate_schema`: a bsonType per field, `required` for
// the fields every sampled document has) and validation of documents against a schema (`validate_documents`),
// with App Services' error codes and `(root).a.b` field paths. Pure functions over BSON values.

import type { JsonSchema } from '@tessera/app-config';

type Doc = Record<string, unknown>;

const NUMBER_TYPES = ['int', 'long', 'double', 'decimal'];
const INT32 = 2 ** 31;

/** The bsonType App Services names a value by. */
export function bsonTypeOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (value instanceof Date) return 'date';
  if (value instanceof RegExp) return 'regex';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'long';
    case 'number':
      return Number.isInteger(value) && Math.abs(value) < INT32 ? 'int' : 'double';
    case 'function':
    case 'object':
    case 'symbol':
    case 'undefined':
      break;
  }
  const tag = (value as { _bsontype?: unknown })._bsontype;
  switch (tag) {
    case 'ObjectId':
      return 'objectId';
    case 'Long':
      return 'long';
    case 'Int32':
      return 'int';
    case 'Double':
      return 'double';
    case 'Decimal128':
      return 'decimal';
    case 'Timestamp':
      return 'timestamp';
    case 'BSONRegExp':
      return 'regex';
    case 'Binary':
      return (value as { sub_type?: number }).sub_type === 4 ? 'uuid' : 'binData';
    case 'UUID':
      return 'uuid';
    case 'Code':
      return 'javascript';
    case 'BSONSymbol':
      return 'symbol';
    case 'MinKey':
      return 'minKey';
    case 'MaxKey':
      return 'maxKey';
    default:
      return 'object';
  }
}

/** A schema describing every sampled document: a field of several types across documents is `mixed`. */
export function generateSchema(title: string, documents: readonly Doc[]): JsonSchema {
  return { title, ...schemaOfValues(documents) };
}

function schemaOfValues(values: readonly unknown[]): JsonSchema {
  const types = [...new Set(values.map(bsonTypeOf))];
  if (types.length !== 1) return { bsonType: types.length === 0 ? 'null' : 'mixed' };
  const [type] = types as [string];
  if (type === 'array') {
    const items = values.flatMap((value) => value as unknown[]);
    return items.length ? { bsonType: 'array', items: schemaOfValues(items) } : { bsonType: 'array' };
  }
  if (type !== 'object') return { bsonType: type };
  const objects = values as Doc[];
  const fields = [...new Set(objects.flatMap((object) => Object.keys(object)))];
  const properties = Object.fromEntries(fields.map((field) => [field, schemaOfValues(objects.filter((object) => field in object).map((object) => object[field]))]));
  const required = fields.filter((field) => objects.every((object) => field in object));
  return { bsonType: 'object', ...(required.length ? { required } : {}), properties };
}

export interface SchemaViolation {
  error_code: 'required' | 'invalid_type' | 'enum' | 'additional_property_not_allowed' | 'false';
  field: string;
}

/** Every violation of `schema` by `value`, each naming its field as `(root).a.0.b`. */
export function validateAgainst(schema: unknown, value: unknown, field = '(root)'): SchemaViolation[] {
  if (schema === false) return [{ error_code: 'false', field }];
  if (typeof schema !== 'object' || schema === null) return [];
  const s = schema as JsonSchema & { type?: unknown; enum?: unknown; additionalProperties?: unknown };
  if (!typeMatches(s, value)) return [{ error_code: 'invalid_type', field }];
  const out: SchemaViolation[] = [];
  if (Array.isArray(s.enum) && !s.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) out.push({ error_code: 'enum', field });
  if (bsonTypeOf(value) === 'object') {
    const object = value as Doc;
    for (const name of Array.isArray(s.required) ? s.required : []) if (!(name in object) || object[name] === undefined) out.push({ error_code: 'required', field: `${field}.${name}` });
    const properties = s.properties && typeof s.properties === 'object' ? s.properties : {};
    for (const [name, child] of Object.entries(object)) {
      if (name in properties) out.push(...validateAgainst(properties[name], child, `${field}.${name}`));
      else if (s.additionalProperties === false) out.push({ error_code: 'additional_property_not_allowed', field: `${field}.${name}` });
      else if (typeof s.additionalProperties === 'object') out.push(...validateAgainst(s.additionalProperties, child, `${field}.${name}`));
    }
  }
  if (Array.isArray(value) && s.items !== undefined) value.forEach((item, index) => out.push(...validateAgainst(s.items, item, `${field}.${index}`)));
  return out;
}

function typeMatches(schema: { bsonType?: unknown; type?: unknown }, value: unknown): boolean {
  const actual = bsonTypeOf(value);
  const listed = (wanted: unknown): string[] | undefined => (typeof wanted === 'string' ? [wanted] : Array.isArray(wanted) ? wanted.filter((t): t is string => typeof t === 'string') : undefined);
  const bsonTypes = listed(schema.bsonType);
  if (bsonTypes && !bsonTypes.some((wanted) => wanted === 'mixed' || wanted === actual || (wanted === 'float' && actual === 'double') || (wanted === 'number' && NUMBER_TYPES.includes(actual)))) return false;
  const jsonTypes = listed(schema.type);
  const jsonType = NUMBER_TYPES.includes(actual) ? 'number' : actual === 'bool' ? 'boolean' : actual;
  if (jsonTypes && !jsonTypes.some((wanted) => wanted === jsonType || (wanted === 'integer' && (actual === 'int' || actual === 'long')))) return false;
  return true;
}
