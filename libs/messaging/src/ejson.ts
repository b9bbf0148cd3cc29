import { type JsonValue } from '@tessera/contracts';
import { EJSON } from 'bson';

/** A BSON-typed value (ObjectId, Long, Date, Decimal128, ...) in canonical Extended JSON, as contracts carry it. */
export function encodeEjson(value: unknown): JsonValue {
  return EJSON.serialize(value, { relaxed: false });
}

/**
 * The value of canonical Extended JSON received in a payload, lossless by default (Int32, Double and Long
 * stay BSON wrappers). `{ relaxed: true }` gives JS numbers instead, and then a Long above 2^53 loses
 * precision.
 */
export function decodeEjson(value: JsonValue, options: { relaxed?: boolean } = {}): unknown {
  return EJSON.deserialize(keepRegexOperators(value) as Parameters<typeof EJSON.deserialize>[0], { relaxed: options.relaxed ?? false });
}

/** EJSON text parsed into BSON values, with the query operators beside a `$regex` kept (see keepRegexOperators). */
export function parseEjson(text: string, options: { relaxed?: boolean } = {}): unknown {
  return EJSON.deserialize(keepRegexOperators(JSON.parse(text) as unknown) as Parameters<typeof EJSON.deserialize>[0], { relaxed: options.relaxed ?? true });
}

/**
 * bson's EJSON reads every object holding a `$regex` key as a legacy regex value and drops its other keys,
 * so the query condition `{ $regex: 'a', $nin: ['abc'] }` would arrive as the regex alone (a filter
 * silently widened). In such an object the `$regex` (with its `$options`) is rewritten to one canonical
 * `$regularExpression` value first, and the other operators stay. `{ $regex, $options }` alone is left to
 * EJSON, which reads it as the regex value it is. Returns the same value when there is nothing to rewrite.
 */
export function keepRegexOperators(json: unknown, depth = 0): unknown {
  if (json === null || typeof json !== 'object' || depth > 200) return json;
  if (Array.isArray(json)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < json.length; i++) {
      const item = keepRegexOperators(json[i], depth + 1);
      if (item !== json[i]) (out ??= json.slice())[i] = item;
    }
    return out ?? json;
  }
  const object = json as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(object)) {
    const item = keepRegexOperators(object[key], depth + 1);
    if (item !== object[key]) {
      out ??= { ...object };
      Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    }
  }
  const source = out ?? object;
  const pattern = source['$regex'];
  if (typeof pattern !== 'string') return source;
  const options = source['$options'];
  if (options !== undefined && typeof options !== 'string') return source;
  // Options bson refuses stay beside the pattern, for the query engine to answer with MongoDB's error.
  const keepOptions = options !== undefined && !/^[imxlsu]*$/.test(options);
  if (!keepOptions && !Object.keys(source).some((key) => key !== '$regex' && key !== '$options')) return source;
  const rewritten: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    if (key === '$options' && !keepOptions) continue;
    const value = key === '$regex' ? { $regularExpression: { pattern, options: keepOptions ? '' : (options ?? '') } } : source[key];
    Object.defineProperty(rewritten, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return rewritten;
}
