import { z } from 'zod';

/**
 * A JSON value. Payload fields that carry application data (function arguments and results, documents,
 * resume tokens) carry it as canonical Extended JSON (`{"$oid": ...}`, `{"$numberLong": ...}`), which is plain
 * JSON, so every transport moves it unchanged and no type is lost on the way.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Deeper than this a value is refused rather than walked (a cycle or a hostile nesting). */
const MAX_DEPTH = 512;

interface Problem {
  path: (string | number)[];
  message: string;
}

/**
 * The first place where `value` is not plain JSON, or undefined. One walk that allocates nothing while the
 * value is valid: a zod union of six alternatives, lazily nested, built schema objects and issue entries for
 * every value it visited and was most of the CPU of a function call and of every change event.
 */
function findProblem(value: unknown, depth: number): Problem | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : { path: [], message: `expected a finite number, received ${value}` };
    case 'object': {
      if (value === null) return undefined;
      if (depth >= MAX_DEPTH) return { path: [], message: `nested deeper than ${MAX_DEPTH} levels` };
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const problem = findProblem(value[i], depth + 1);
          if (problem) return { path: [i, ...problem.path], message: problem.message };
        }
        return undefined;
      }
      const prototype = Object.getPrototypeOf(value) as unknown;
      if (prototype !== Object.prototype && prototype !== null) return { path: [], message: `expected a plain object, received ${Object.prototype.toString.call(value)}` };
      for (const key in value) {
        const problem = findProblem((value as Record<string, unknown>)[key], depth + 1);
        if (problem) return { path: [key, ...problem.path], message: problem.message };
      }
      return undefined;
    }
    case 'undefined':
    case 'bigint':
    case 'function':
    case 'symbol':
      return { path: [], message: `expected a JSON value, received ${typeof value}` };
  }
}

interface EjsonValueDef extends z.ZodTypeDef {
  /** The same set of values written as zod types, for the JSON Schema dump only. */
  structure: () => z.ZodTypeAny;
}

/** Whether `value` is plain JSON (what EjsonValueSchema accepts, and hands back unchanged). */
export function isJsonValue(value: unknown): boolean {
  return findProblem(value, 0) === undefined;
}

/** A zod type for a JSON value that checks with `findProblem` and passes the value through unchanged. */
export class ZodEjsonValue extends z.ZodType<JsonValue, EjsonValueDef> {
  _parse(input: z.ParseInput): z.ParseReturnType<JsonValue> {
    const problem = findProblem(input.data, 0);
    if (problem === undefined) return z.OK(input.data as JsonValue);
    const context = this._getOrReturnCtx(input);
    z.addIssueToContext(context, { code: z.ZodIssueCode.custom, message: problem.message, path: problem.path });
    return z.INVALID;
  }

  get structure(): z.ZodTypeAny {
    return this._def.structure();
  }
}

export const EjsonValueSchema: z.ZodType<JsonValue> = new ZodEjsonValue({
  structure: () => z.union([z.string(), z.number().finite(), z.boolean(), z.null(), z.array(EjsonValueSchema), z.record(EjsonValueSchema)]),
}).describe('A value in canonical Extended JSON (plain JSON: objects, arrays, strings, finite numbers, booleans, null).');

/** A document (an object) in canonical Extended JSON. */
export const EjsonDocumentSchema = z.record(EjsonValueSchema).describe('A document in canonical Extended JSON.');
