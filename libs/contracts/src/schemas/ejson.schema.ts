import { z } from 'zod';

/**
 * A JSON value. Payload fields that carry application data (function arguments and results, documents,
 * resume tokens) carry it as canonical Extended JSON (`{"$oid": ...}`, `{"$numberLong": ...}`), which is plain
 * JSON, so every transport moves it unchanged and no type is lost on the way.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export const EjsonValueSchema: z.ZodType<JsonValue> = z
  .lazy(() => z.union([z.string(), z.number().finite(), z.boolean(), z.null(), z.array(EjsonValueSchema), z.record(EjsonValueSchema)]))
  .describe('A value in canonical Extended JSON (plain JSON: objects, arrays, strings, finite numbers, booleans, null).');

/** A document (an object) in canonical Extended JSON. */
export const EjsonDocumentSchema = z.record(EjsonValueSchema).describe('A document in canonical Extended JSON.');
