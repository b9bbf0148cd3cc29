import { z } from 'zod';
import { ZodEjsonValue } from '../schemas/ejson.schema';

/**
 * A small zod (v3) to JSON Schema (draft-07) converter covering exactly the zod types the contracts use.
 * Anything else throws, so a contract that starts using a new zod type fails the schema drift spec instead of
 * being dumped wrongly. Recursive schemas (z.lazy) must be registered by name and become `$ref`s.
 */
export type JsonSchema = { [keyword: string]: unknown };

export interface ConvertOptions {
  /** Schemas emitted as `{ $ref: '#/definitions/<name>' }` wherever they occur. */
  named: ReadonlyMap<z.ZodTypeAny, string>;
}

export function zodToJsonSchema(schema: z.ZodTypeAny, options: ConvertOptions, expandNamed = false): JsonSchema {
  const name = options.named.get(schema);
  if (name !== undefined && !expandNamed) return { $ref: `#/definitions/${name}` };
  const converted = convert(schema, options);
  return schema.description === undefined ? converted : { description: schema.description, ...converted };
}

function convert(schema: z.ZodTypeAny, options: ConvertOptions): JsonSchema {
  const recurse = (inner: z.ZodTypeAny): JsonSchema => zodToJsonSchema(inner, options);
  if (schema instanceof z.ZodString) return stringSchema(schema);
  if (schema instanceof z.ZodNumber) return numberSchema(schema);
  if (schema instanceof z.ZodBoolean) return { type: 'boolean' };
  if (schema instanceof z.ZodNull) return { type: 'null' };
  if (schema instanceof z.ZodUnknown || schema instanceof z.ZodAny) return {};
  if (schema instanceof z.ZodLiteral) return { const: schema.value as unknown };
  if (schema instanceof z.ZodEnum) return { type: 'string', enum: [...(schema.options as string[])] };
  if (schema instanceof z.ZodArray) {
    const out: JsonSchema = { type: 'array', items: recurse(schema.element as z.ZodTypeAny) };
    const def = schema._def as z.ZodArrayDef;
    if (def.minLength) out['minItems'] = def.minLength.value;
    if (def.maxLength) out['maxItems'] = def.maxLength.value;
    return out;
  }
  if (schema instanceof z.ZodObject) {
    const def = schema._def as z.ZodObjectDef;
    return objectSchema(def.shape(), def.unknownKeys, recurse);
  }
  if (schema instanceof z.ZodRecord) return { type: 'object', additionalProperties: recurse(schema.valueSchema as z.ZodTypeAny) };
  if (schema instanceof z.ZodOptional) return recurse(schema.unwrap() as z.ZodTypeAny);
  if (schema instanceof z.ZodNullable) return { anyOf: [recurse(schema.unwrap() as z.ZodTypeAny), { type: 'null' }] };
  if (schema instanceof z.ZodDefault) return { ...recurse(schema.removeDefault() as z.ZodTypeAny), default: (schema._def as z.ZodDefaultDef).defaultValue() as unknown };
  if (schema instanceof z.ZodDiscriminatedUnion) return { oneOf: (schema.options as z.ZodTypeAny[]).map(recurse) };
  if (schema instanceof z.ZodUnion) return { anyOf: (schema.options as z.ZodTypeAny[]).map(recurse) };
  if (schema instanceof z.ZodEffects) return recurse(schema.innerType() as z.ZodTypeAny);
  if (schema instanceof z.ZodLazy) return recurse(schema.schema as z.ZodTypeAny);
  if (schema instanceof ZodEjsonValue) return convert(schema.structure, options);
  throw new Error(`zodToJsonSchema: unsupported zod type ${schema.constructor.name}; extend the converter`);
}

function stringSchema(schema: z.ZodString): JsonSchema {
  const out: JsonSchema = { type: 'string' };
  const formats: Partial<Record<z.ZodStringCheck['kind'], string>> = { datetime: 'date-time', uuid: 'uuid', email: 'email', url: 'uri' };
  for (const check of schema._def.checks) {
    if (check.kind === 'min') out['minLength'] = check.value;
    else if (check.kind === 'max') out['maxLength'] = check.value;
    else if (check.kind === 'length') Object.assign(out, { minLength: check.value, maxLength: check.value });
    else if (check.kind === 'regex') out['pattern'] = check.regex.source;
    else if (formats[check.kind] !== undefined) out['format'] = formats[check.kind];
    else throw new Error(`zodToJsonSchema: unsupported string check ${check.kind}; extend the converter`);
  }
  return out;
}

function numberSchema(schema: z.ZodNumber): JsonSchema {
  const out: JsonSchema = { type: 'number' };
  for (const check of schema._def.checks) {
    switch (check.kind) {
      case 'int':
        out['type'] = 'integer';
        break;
      case 'min':
        out[check.inclusive ? 'minimum' : 'exclusiveMinimum'] = check.value;
        break;
      case 'max':
        out[check.inclusive ? 'maximum' : 'exclusiveMaximum'] = check.value;
        break;
      case 'multipleOf':
        out['multipleOf'] = check.value;
        break;
      case 'finite':
        // JSON numbers are always finite.
        break;
    }
  }
  return out;
}

function objectSchema(shape: z.ZodRawShape, unknownKeys: z.UnknownKeysParam, recurse: (inner: z.ZodTypeAny) => JsonSchema): JsonSchema {
  const properties: JsonSchema = {};
  const required: string[] = [];
  for (const [key, value] of Object.entries(shape)) {
    properties[key] = recurse(value);
    if (!value.isOptional()) required.push(key);
  }
  const out: JsonSchema = { type: 'object', properties };
  if (required.length > 0) out['required'] = required;
  // zod strips unknown keys by default (accepts them); only `.strict()` rejects them.
  if (unknownKeys === 'strict') out['additionalProperties'] = false;
  return out;
}
