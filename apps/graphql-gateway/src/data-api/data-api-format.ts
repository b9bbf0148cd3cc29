/**
 * The Data API's wire formats. Input: a JSON body (`application/json`) or an Extended JSON body
 * (`application/ejson`), both read as Extended JSON, relaxed or canonical (a number written `1.0` is a double). Output by `Accept`:
 * `application/ejson` is canonical Extended JSON (every BSON type kept), `application/json` plain JSON
 * (ObjectIds as hex strings, dates as ISO strings, numbers as numbers), else the configured `return_type`.
 */
import { Binary, BSONRegExp, Decimal128, Double, EJSON, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp } from 'bson';
import { fromEjson } from '../client-api/ejson-body';
import { DataApiError, DataApiErrorCode } from './data-api.error';
import { parseJsonKeepingDoubles } from './json-numbers';

export type DataApiFormat = 'JSON' | 'EJSON';

const mediaTypes: Record<DataApiFormat, string> = { JSON: 'application/json', EJSON: 'application/ejson' };

export function mediaTypeOf(format: DataApiFormat): string {
  return mediaTypes[format];
}

/** The response format: what `Accept` asks for, else the configured return type. */
export function responseFormat(accept: string | undefined, returnType: DataApiFormat): DataApiFormat {
  const types = (accept ?? '').split(',').map((part) => part.split(';')[0]?.trim().toLowerCase());
  if (types.includes('application/ejson')) return 'EJSON';
  if (types.includes('application/json')) return 'JSON';
  return returnType;
}

/** The request body as BSON values; the body must be one JSON object. */
export function parseRequestBody(contentType: string | undefined, raw: Buffer): Record<string, unknown> {
  const type = (contentType ?? 'application/json').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json' && type !== 'application/ejson') {
    throw new DataApiError(DataApiErrorCode.UnsupportedMediaType, `unsupported Content-Type '${type ?? ''}': send application/json or application/ejson`);
  }
  const text = raw.toString('utf8');
  if (text.trim() === '') throw new DataApiError(DataApiErrorCode.InvalidParameter, 'the request body must be a JSON object');
  let json: unknown;
  try {
    // As MongoDB reads relaxed Extended JSON: `1.0` is a double, `1` an int.
    json = parseJsonKeepingDoubles(text);
  } catch {
    throw new DataApiError(DataApiErrorCode.InvalidParameter, 'invalid JSON in request body');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new DataApiError(DataApiErrorCode.InvalidParameter, 'the request body must be a JSON object');
  let value: unknown;
  try {
    value = fromEjson(json);
  } catch (error) {
    throw new DataApiError(DataApiErrorCode.InvalidParameter, error instanceof Error ? error.message : 'invalid Extended JSON in request body');
  }
  return value as Record<string, unknown>;
}

export function serializeResponse(body: unknown, format: DataApiFormat): string {
  return format === 'EJSON' ? EJSON.stringify(body, { relaxed: false }) : JSON.stringify(toPlainJson(body));
}

/**
 * BSON values as the plain JSON App Services' `application/json` answers gave (type information is lost):
 * ObjectId as its hex, dates as ISO strings, numbers as numbers, Decimal128 as a string, and (as its data
 * formats page shows) Binary as `{ Subtype, Data }` (base64), a regex as `{ Pattern, Options }`, a
 * Timestamp as `{ T, I }`, MinKey and MaxKey as `{}`.
 */
export function toPlainJson(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object') return typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
  if (Array.isArray(value)) return value.map(toPlainJson);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof ObjectId) return value.toHexString();
  if (value instanceof Int32 || value instanceof Double) return value.valueOf();
  // A Timestamp is a Long too: its own form first.
  if (value instanceof Timestamp) return { T: value.high, I: value.low };
  if (value instanceof Long) return value.toNumber();
  if (value instanceof Decimal128) return value.toString();
  // The forms App Services' data formats page gives for the types JSON has no equivalent of.
  if (value instanceof Binary) return { Subtype: value.sub_type, Data: value.toString('base64') };
  if (value instanceof BSONRegExp) return { Pattern: value.pattern, Options: value.options };
  if (value instanceof RegExp) return { Pattern: value.source, Options: value.flags };
  if (value instanceof MinKey || value instanceof MaxKey) return {};
  if ('_bsontype' in value) return EJSON.serialize(value, { relaxed: true });
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = toPlainJson(item);
  return out;
}
