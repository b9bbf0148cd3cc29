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
  return EJSON.deserialize(value as Parameters<typeof EJSON.deserialize>[0], { relaxed: options.relaxed ?? false });
}
