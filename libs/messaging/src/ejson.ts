import { type JsonValue } from '@tessera/contracts';
import { TesseraError } from '@tessera/domain';
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

/** Extended JSON that bson would silently coerce into some other value (bad base64, bad subtype). */
export class MalformedEjsonError extends TesseraError {
  readonly errorCode = 'BadRequest';
  readonly httpStatus = 400;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const SUBTYPE = /^[0-9a-fA-F]{1,2}$/;

/**
 * Refuses Extended JSON that bson reads leniently: a `$binary` whose base64 is not base64 (bson decodes
 * what it can and drops the rest) or whose subtype is not one or two hex digits (bson reads it as 0). Call it
 * on a value before deserializing it wherever Extended JSON comes from outside.
 */
export function assertWellFormedEjson(value: unknown): void {
  const pending: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value: current, path } = next;
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, path: `${path}[${index}]` }));
      continue;
    }
    const object = current as Record<string, unknown>;
    if ('$binary' in object) checkBinary(object, path || '(root)');
    for (const [key, item] of Object.entries(object)) pending.push({ value: item, path: path ? `${path}.${key}` : key });
  }
}

function checkBinary(object: Record<string, unknown>, path: string): void {
  const binary = object['$binary'];
  // Canonical `{ $binary: { base64, subType } }` or legacy `{ $binary: <base64>, $type: <hex> }`.
  const [base64, subType] = typeof binary === 'object' && binary !== null ? [(binary as Record<string, unknown>)['base64'], (binary as Record<string, unknown>)['subType']] : [binary, object['$type']];
  if (typeof base64 !== 'string' || !BASE64.test(base64)) throw new MalformedEjsonError(`invalid $binary at ${path}: base64 must be a base64 string`);
  if (typeof subType !== 'string' || !SUBTYPE.test(subType)) throw new MalformedEjsonError(`invalid $binary at ${path}: subType must be one or two hexadecimal digits`);
}
