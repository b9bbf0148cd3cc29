/**
 * The partition value a PBS client binds to: BIND carries it as Extended JSON text. realm-js writes relaxed
 * EJSON (`"p1"`, `42`, `{"$oid":…}`, `{"$binary":{"base64":…,"subType":"04"}}`, `null`); other SDKs write
 * canonical EJSON (`{"$numberInt":"42"}`, `{"$numberLong":"42"}`). Both are accepted, plus `$uuid`.
 */
import { SyncProtocolError } from '../errors';

export type PartitionValue =
  | { type: 'string'; value: string }
  | { type: 'int'; value: bigint }
  /** 24 lower-case hex digits. */
  | { type: 'objectId'; value: string }
  /** 32 lower-case hex digits. */
  | { type: 'uuid'; value: string }
  | { type: 'null' };

/** The partition key types an app can configure. */
export type PartitionKeyType = 'string' | 'long' | 'objectId' | 'uuid';

function bad(message: string): never {
  throw new SyncProtocolError('bad_partition', message);
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

function int64(text: string): bigint {
  if (!/^-?(0|[1-9][0-9]*)$/.test(text)) bad(`'${text.slice(0, 40)}' is not an integer`);
  const v = BigInt(text);
  if (v < INT64_MIN || v > INT64_MAX) bad('integer partition value out of range');
  return v;
}

function uuidFromBase64(b64: string): string {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) bad('bad base64 in partition value');
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length !== 16) bad('a UUID partition value must have 16 bytes');
  return bytes.toString('hex');
}

/** Parses the BIND path. Throws SyncProtocolError('bad_partition') for anything that is not a partition value. */
export function parsePartitionValue(path: string): PartitionValue {
  const text = path.trim();
  if (/^-?[0-9]/.test(text)) return { type: 'int', value: int64(text) };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return bad(`serialized partition '${path.slice(0, 60)}' is invalid`);
  }
  if (v === null) return { type: 'null' };
  if (typeof v === 'string') return { type: 'string', value: v };
  if (typeof v !== 'object' || Array.isArray(v)) return bad(`serialized partition '${path.slice(0, 60)}' is invalid`);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  const only = (...allowed: string[]): void => {
    if (keys.length !== allowed.length || !keys.every((k) => allowed.includes(k))) bad(`unexpected fields in partition value`);
  };
  if ('$numberInt' in o || '$numberLong' in o) {
    only(keys[0] ?? '');
    const raw = o['$numberInt'] ?? o['$numberLong'];
    if (typeof raw !== 'string') bad('$numberInt/$numberLong must hold a string');
    const value = int64(raw);
    if ('$numberInt' in o && (value < -(1n << 31n) || value >= 1n << 31n)) bad('$numberInt out of range');
    return { type: 'int', value };
  }
  if ('$oid' in o) {
    only('$oid');
    const hex = o['$oid'];
    if (typeof hex !== 'string' || !/^[0-9a-fA-F]{24}$/.test(hex)) bad('$oid must be 24 hex digits');
    return { type: 'objectId', value: hex.toLowerCase() };
  }
  if ('$uuid' in o) {
    only('$uuid');
    const u = o['$uuid'];
    if (typeof u !== 'string' || !/^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(u)) bad('bad $uuid');
    return { type: 'uuid', value: u.replace(/-/g, '').toLowerCase() };
  }
  if ('$binary' in o) {
    const bin = o['$binary'];
    if (typeof bin === 'object' && bin !== null) {
      only('$binary');
      const { base64, subType } = bin as Record<string, unknown>;
      if (typeof base64 !== 'string' || (subType !== '04' && subType !== '4')) bad('only UUID binaries (subtype 04) are partition values');
      return { type: 'uuid', value: uuidFromBase64(base64) };
    }
    // Legacy form: {"$binary": "<base64>", "$type": "04"}.
    only('$binary', '$type');
    if (typeof bin !== 'string' || (o['$type'] !== '04' && o['$type'] !== '4')) bad('only UUID binaries (subtype 04) are partition values');
    return { type: 'uuid', value: uuidFromBase64(bin) };
  }
  return bad(`serialized partition '${path.slice(0, 60)}' is invalid`);
}

/** True when `value` may be bound for a partition key of `keyType` (null only for an optional key). */
export function partitionMatchesKeyType(value: PartitionValue, keyType: PartitionKeyType, required = false): boolean {
  switch (value.type) {
    case 'null':
      return !required;
    case 'string':
      return keyType === 'string';
    case 'int':
      return keyType === 'long';
    case 'objectId':
      return keyType === 'objectId';
    case 'uuid':
      return keyType === 'uuid';
  }
}

/** The BIND path realm-js sends for a value (relaxed EJSON, bson 4.7.2). */
export function formatPartitionValue(value: PartitionValue): string {
  switch (value.type) {
    case 'null':
      return 'null';
    case 'string':
      return JSON.stringify(value.value);
    case 'int':
      return value.value.toString();
    case 'objectId':
      return JSON.stringify({ $oid: value.value });
    case 'uuid':
      return JSON.stringify({ $binary: { base64: Buffer.from(value.value, 'hex').toString('base64'), subType: '04' } });
  }
}
