import { z } from 'zod';
import { isJsonValue, ZodEjsonValue } from './schemas/ejson.schema';

/**
 * A fast path in front of zod's `safeParse` for payloads that already have exactly a contract's shape, which
 * is every payload this project's own code builds. zod (v3) walks a value through parse contexts and builds a
 * copy of it, and on a function call that was the largest single cost left on the hot path. The predicate a
 * schema compiles to here answers true only when zod would accept the value AND hand back a value equal to it:
 * no unknown key it would strip, no default it would fill, no transform it would run. Anything else, and every
 * schema part it does not know, answers false, and the caller parses with zod as before (which also gives the
 * errors). A payload it accepts is passed on as it is, not copied.
 */
export type ShapeCheck = (value: unknown) => boolean;

const compiled = new WeakMap<z.ZodTypeAny, ShapeCheck>();
const unsure: ShapeCheck = () => false;

/** The predicate for `schema`, compiled once. */
export function exactShapeCheck(schema: z.ZodTypeAny): ShapeCheck {
  let check = compiled.get(schema);
  if (!check) {
    check = compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

function compile(schema: z.ZodTypeAny): ShapeCheck {
  if ((schema._def as { coerce?: boolean }).coerce === true) return unsure;
  if (schema instanceof ZodEjsonValue) return isJsonValue;
  if (schema instanceof z.ZodString) return stringCheck(schema);
  if (schema instanceof z.ZodNumber) return numberCheck(schema);
  if (schema instanceof z.ZodBoolean) return (value) => typeof value === 'boolean';
  if (schema instanceof z.ZodNull) return (value) => value === null;
  if (schema instanceof z.ZodUnknown || schema instanceof z.ZodAny) return () => true;
  if (schema instanceof z.ZodLiteral) {
    const literal = schema.value as unknown;
    return (value) => value === literal;
  }
  if (schema instanceof z.ZodEnum) {
    const options = new Set<unknown>(schema.options as string[]);
    return (value) => typeof value === 'string' && options.has(value);
  }
  if (schema instanceof z.ZodArray) return arrayCheck(schema._def as z.ZodArrayDef);
  if (schema instanceof z.ZodObject) return objectCheck(schema._def as z.ZodObjectDef);
  if (schema instanceof z.ZodRecord) return recordCheck(schema._def as z.ZodRecordDef);
  if (schema instanceof z.ZodOptional) {
    const inner = exactShapeCheck(schema.unwrap() as z.ZodTypeAny);
    return (value) => value === undefined || inner(value);
  }
  if (schema instanceof z.ZodNullable) {
    const inner = exactShapeCheck(schema.unwrap() as z.ZodTypeAny);
    return (value) => value === null || inner(value);
  }
  if (schema instanceof z.ZodDefault) {
    // An absent value gets the default; a present one is the inner type's.
    const inner = exactShapeCheck(schema.removeDefault() as z.ZodTypeAny);
    return (value) => value !== undefined && inner(value);
  }
  if (schema instanceof z.ZodDiscriminatedUnion) return discriminatedCheck(schema as z.ZodDiscriminatedUnion<string, z.ZodDiscriminatedUnionOption<string>[]>);
  if (schema instanceof z.ZodLazy) {
    let inner: ShapeCheck | undefined;
    return (value) => (inner ??= exactShapeCheck(schema.schema as z.ZodTypeAny))(value);
  }
  // Unions (zod answers the first option that accepts, perhaps after stripping), effects (refinements and
  // transforms) and every other type: zod decides.
  return unsure;
}

function stringCheck(schema: z.ZodString): ShapeCheck {
  let min = 0;
  let max = Infinity;
  const patterns: RegExp[] = [];
  for (const check of schema._def.checks) {
    if (check.kind === 'min') min = Math.max(min, check.value);
    else if (check.kind === 'max') max = Math.min(max, check.value);
    else if (check.kind === 'length') {
      min = Math.max(min, check.value);
      max = Math.min(max, check.value);
    } else if (check.kind === 'regex') patterns.push(check.regex);
    else return unsure;
  }
  return (value) => {
    if (typeof value !== 'string' || value.length < min || value.length > max) return false;
    for (const pattern of patterns) {
      pattern.lastIndex = 0;
      if (!pattern.test(value)) return false;
    }
    return true;
  };
}

function numberCheck(schema: z.ZodNumber): ShapeCheck {
  let integer = false;
  let finite = false;
  const bounds: Array<(n: number) => boolean> = [];
  for (const check of schema._def.checks) {
    switch (check.kind) {
      case 'int':
        integer = true;
        break;
      case 'finite':
        finite = true;
        break;
      case 'min': {
        const { value: bound, inclusive } = check;
        bounds.push(inclusive ? (n) => n >= bound : (n) => n > bound);
        break;
      }
      case 'max': {
        const { value: bound, inclusive } = check;
        bounds.push(inclusive ? (n) => n <= bound : (n) => n < bound);
        break;
      }
      case 'multipleOf':
        return unsure;
    }
  }
  return (value) => {
    if (typeof value !== 'number' || Number.isNaN(value)) return false;
    if (integer && !Number.isInteger(value)) return false;
    if (finite && !Number.isFinite(value)) return false;
    for (const bound of bounds) if (!bound(value)) return false;
    return true;
  };
}

function arrayCheck(def: z.ZodArrayDef): ShapeCheck {
  const element = exactShapeCheck(def.type);
  const min = Math.max(def.minLength?.value ?? 0, def.exactLength?.value ?? 0);
  const max = Math.min(def.maxLength?.value ?? Infinity, def.exactLength?.value ?? Infinity);
  return (value) => {
    if (!Array.isArray(value) || value.length < min || value.length > max) return false;
    for (let i = 0; i < value.length; i++) if (!element(value[i])) return false;
    return true;
  };
}

/** A plain object (what zod reads as an object and copies key by key) with no own `__proto__` key, which zod drops. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && !Object.prototype.hasOwnProperty.call(value, '__proto__');
}

function objectCheck(def: z.ZodObjectDef): ShapeCheck {
  if (!(def.catchall instanceof z.ZodNever)) return unsure;
  const passthrough = def.unknownKeys === 'passthrough';
  let fields: Array<[string, ShapeCheck]> | undefined;
  let known: Set<string> | undefined;
  return (value) => {
    if (!isPlainObject(value)) return false;
    // The shape is read on first use: a lazy shape may name schemas declared after this one.
    fields ??= Object.entries(def.shape()).map(([key, field]) => [key, exactShapeCheck(field)]);
    known ??= new Set(fields.map(([key]) => key));
    for (const [key, check] of fields) if (!check(value[key])) return false;
    // An unknown key is stripped (or refused, when strict): zod's answer differs from the value.
    if (!passthrough) for (const key in value) if (!known.has(key)) return false;
    return true;
  };
}

function recordCheck(def: z.ZodRecordDef): ShapeCheck {
  const keyType = def.keyType as z.ZodTypeAny;
  if (!(keyType instanceof z.ZodString)) return unsure;
  const key = exactShapeCheck(keyType);
  const item = exactShapeCheck(def.valueType);
  return (value) => {
    if (!isPlainObject(value)) return false;
    for (const name in value) if (!key(name) || !item(value[name])) return false;
    return true;
  };
}

function discriminatedCheck(schema: z.ZodDiscriminatedUnion<string, z.ZodDiscriminatedUnionOption<string>[]>): ShapeCheck {
  const { discriminator } = schema;
  const byValue = new Map<unknown, ShapeCheck>();
  for (const [tag, option] of schema.optionsMap) byValue.set(tag, exactShapeCheck(option as z.ZodTypeAny));
  return (value) => {
    if (!isPlainObject(value)) return false;
    const option = byValue.get(value[discriminator]);
    return option !== undefined && option(value);
  };
}
