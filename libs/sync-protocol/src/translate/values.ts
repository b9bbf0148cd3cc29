/**
 * Values between changesets and BSON documents, as App Services stores synced objects: Realm ints as longs,
 * floats and doubles as doubles, dates as BSON dates (millisecond precision), UUIDs as binary subtype 4,
 * links as the target's primary key, partition values as the BSON value of the key. A BSON value that has
 * no changeset form for a column yields `undefined` (the document does not fit the schema).
 */
import { Binary, Decimal128, Double, Int32, Long, ObjectId, UUID } from 'bson';
import type { AddColumn, Decimal128Parts, Payload, PayloadType, PrimaryKey } from '../changeset/types';
import { normalizeInt64 } from '../changeset/varint';
import type { PartitionKeyType, PartitionValue } from '../wire/partition';

const MASK64 = (1n << 64n) - 1n;
const DECIMAL_EXPONENT_BIAS = 6176;

export function decimalToBson(parts: Decimal128Parts): Decimal128 {
  const high = ((parts.negative ? 1n : 0n) << 63n) | (BigInt(parts.exponent + DECIMAL_EXPONENT_BIAS) << 49n) | (parts.coefficient >> 64n);
  const bytes = Buffer.alloc(16);
  bytes.writeBigUInt64LE(parts.coefficient & MASK64, 0);
  bytes.writeBigUInt64LE(high & MASK64, 8);
  return new Decimal128(bytes);
}

export function decimalFromBson(value: Decimal128): Decimal128Parts {
  const bytes = Buffer.from(value.bytes);
  const low = bytes.readBigUInt64LE(0);
  const high = bytes.readBigUInt64LE(8);
  const negative = high >> 63n === 1n;
  // The second BID form (combination bits 11) only encodes non-canonical coefficients, NaN and infinities.
  if (((high >> 61n) & 3n) === 3n) return { coefficient: 0n, exponent: 0, negative };
  const exponent = Number((high >> 49n) & 0x3fffn) - DECIMAL_EXPONENT_BIAS;
  const coefficient = ((high & ((1n << 49n) - 1n)) << 64n) | low;
  return { coefficient, exponent, negative };
}

function int64Of(value: unknown): bigint | undefined {
  if (value instanceof Long) return value.toBigInt();
  if (value instanceof Int32) return BigInt(value.value);
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (value instanceof Double && Number.isInteger(value.value)) return BigInt(value.value);
  if (typeof value === 'bigint') return value;
  return undefined;
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (value instanceof Double || value instanceof Int32) return value.value;
  if (value instanceof Long) return value.toNumber();
  return undefined;
}

function uuidHexOf(value: unknown): string | undefined {
  if (value instanceof Binary && value.sub_type === Binary.SUBTYPE_UUID && value.length() === 16) return Buffer.from(value.buffer).toString('hex');
  return undefined;
}

/** The BSON value of a primary key. */
export function primaryKeyToBson(pk: PrimaryKey): unknown {
  // Tables without a primary key have no synced collection; the text only keeps such keys apart.
  if (pk.type === 'GlobalKey') return `${String(pk.hi)}:${String(pk.lo)}`;
  return payloadToBson(pk);
}

/** The primary key a BSON `_id` stands for under a table's primary key type, or undefined when it does not fit. */
export function primaryKeyFromBson(value: unknown, pkType: PayloadType, nullable: boolean): PrimaryKey | undefined {
  if (value === null || value === undefined) return nullable ? { type: 'Null' } : undefined;
  if (pkType !== 'Int' && pkType !== 'String' && pkType !== 'ObjectId' && pkType !== 'UUID') return undefined;
  // These four payloads have the shape of the primary key of the same type.
  return scalarPayload(value, pkType) as PrimaryKey | undefined;
}

/** The BSON value of a scalar payload (links become the target's primary key). Collections and markers have none. */
export function payloadToBson(p: Payload): unknown {
  switch (p.type) {
    case 'Null':
      return null;
    case 'Int':
      return Long.fromBigInt(BigInt(p.value));
    case 'Bool':
      return p.value;
    case 'String':
      return p.value;
    case 'Binary':
      return new Binary(p.value);
    case 'Timestamp':
      return new Date(Number(p.seconds) * 1000 + Math.floor(p.nanoseconds / 1_000_000));
    case 'Float':
    case 'Double':
      return new Double(p.value);
    case 'Decimal':
      return decimalToBson(p);
    case 'Link':
      return primaryKeyToBson(p.key);
    case 'ObjectId':
      return new ObjectId(p.value);
    case 'UUID':
      return new UUID(p.value);
    case 'ObjectValue':
    case 'Dictionary':
    case 'Erased':
    case 'List':
    case 'Set':
      return undefined;
  }
}

function timestampOf(date: Date): Payload {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { type: 'Timestamp', seconds, nanoseconds: (ms - seconds * 1000) * 1_000_000 };
}

/** The payload of a BSON scalar for a typed column (`valueType`; `linkTarget` and its pk type for links). */
export function scalarPayload(value: unknown, valueType: PayloadType, link?: { table: string; pkType: PayloadType }): Payload | undefined {
  if (value === null || value === undefined) return { type: 'Null' };
  switch (valueType) {
    case 'Null':
      return mixedPayload(value);
    case 'Int': {
      const v = int64Of(value);
      return v === undefined ? undefined : { type: 'Int', value: normalizeInt64(v) };
    }
    case 'Bool':
      return typeof value === 'boolean' ? { type: 'Bool', value } : undefined;
    case 'String':
      return typeof value === 'string' ? { type: 'String', value } : undefined;
    case 'Binary':
      return value instanceof Binary ? { type: 'Binary', value: new Uint8Array(value.buffer) } : undefined;
    case 'Timestamp':
      return value instanceof Date ? timestampOf(value) : undefined;
    case 'Float':
    case 'Double': {
      const v = numberOf(value);
      return v === undefined ? undefined : { type: valueType, value: v };
    }
    case 'Decimal':
      return value instanceof Decimal128 ? { type: 'Decimal', ...decimalFromBson(value) } : undefined;
    case 'ObjectId':
      return value instanceof ObjectId ? { type: 'ObjectId', value: value.toHexString() } : undefined;
    case 'UUID': {
      const hex = uuidHexOf(value);
      return hex === undefined ? undefined : { type: 'UUID', value: hex };
    }
    case 'Link': {
      if (!link) return undefined;
      const key = primaryKeyFromBson(value, link.pkType, false);
      return key ? { type: 'Link', table: link.table, key } : undefined;
    }
    case 'GlobalKey':
    case 'ObjectValue':
    case 'Dictionary':
    case 'Erased':
    case 'List':
    case 'Set':
      return undefined;
  }
}

/** The payload of a scalar BSON value in a Mixed slot, by its own type; undefined for documents and arrays. */
export function mixedPayload(value: unknown): Payload | undefined {
  if (value === null || value === undefined) return { type: 'Null' };
  if (typeof value === 'string') return { type: 'String', value };
  if (typeof value === 'boolean') return { type: 'Bool', value };
  if (typeof value === 'number') return Number.isInteger(value) ? { type: 'Int', value } : { type: 'Double', value };
  if (value instanceof Int32 || value instanceof Long) return scalarPayload(value, 'Int');
  if (value instanceof Double) return { type: 'Double', value: value.value };
  if (value instanceof Date) return timestampOf(value);
  if (value instanceof Decimal128) return { type: 'Decimal', ...decimalFromBson(value) };
  if (value instanceof ObjectId) return { type: 'ObjectId', value: value.toHexString() };
  if (value instanceof Binary) return uuidHexOf(value) !== undefined ? scalarPayload(value, 'UUID') : scalarPayload(value, 'Binary');
  return undefined;
}

/** The payload a column's element of this BSON value becomes (the column's type, or the value's own for Mixed). */
export function columnPayload(value: unknown, column: AddColumn, pkTypeOf: (table: string) => PayloadType | undefined): Payload | undefined {
  if (column.valueType === 'Link') {
    const table = column.linkTargetTable;
    const pkType = table === undefined ? undefined : pkTypeOf(table);
    return table === undefined || pkType === undefined ? undefined : scalarPayload(value, 'Link', { table, pkType });
  }
  return scalarPayload(value, column.valueType);
}

/** The BSON value of a partition value, as the key field holds it in documents. */
export function partitionValueToBson(value: PartitionValue): unknown {
  switch (value.type) {
    case 'null':
      return null;
    case 'string':
      return value.value;
    case 'int':
      return Long.fromBigInt(value.value);
    case 'objectId':
      return new ObjectId(value.value);
    case 'uuid':
      return new UUID(value.value);
  }
}

/**
 * The partition a document's key value puts it in, for a key of `keyType`: a missing or null value is the
 * null partition; a value of another type is no valid value (undefined).
 */
export function partitionValueFromBson(value: unknown, keyType: PartitionKeyType): PartitionValue | undefined {
  if (value === null || value === undefined) return { type: 'null' };
  switch (keyType) {
    case 'string':
      return typeof value === 'string' ? { type: 'string', value } : undefined;
    case 'long': {
      const v = int64Of(value);
      return v === undefined ? undefined : { type: 'int', value: v };
    }
    case 'objectId':
      return value instanceof ObjectId ? { type: 'objectId', value: value.toHexString() } : undefined;
    case 'uuid': {
      const hex = uuidHexOf(value);
      return hex === undefined ? undefined : { type: 'uuid', value: hex };
    }
  }
}

/** The configured partition.type (String, ObjectID, Long, UUID, any case) as a key type. */
export function partitionKeyTypeOf(configured: string): PartitionKeyType | undefined {
  const names: Record<string, PartitionKeyType> = { string: 'string', objectid: 'objectId', long: 'long', int: 'long', int64: 'long', uuid: 'uuid' };
  return names[configured.toLowerCase()];
}

/**
 * A text of a BSON value that does not depend on field order or on the width a store returns numbers in (a
 * driver may hand back a long written by sync as an int or a double): equal content, equal text. What
 * compares `_id`s and values read back from a store with those sync made from changesets.
 */
export function canonicalBson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number') return `n${value}`;
  if (typeof value === 'bigint') return `n${value.toString()}`;
  if (value instanceof Long) return `n${value.toString()}`;
  if (value instanceof Int32 || value instanceof Double) return `n${value.value}`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof Date) return `d${value.getTime()}`;
  if (value instanceof ObjectId) return `o${value.toHexString()}`;
  if (value instanceof Decimal128) return `m${value.toString()}`;
  if (value instanceof Binary) return `b${value.sub_type}:${Buffer.from(value.buffer).toString('base64')}`;
  if (Array.isArray(value)) return `[${value.map(canonicalBson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalBson(v)}`).join(',')}}`;
  }
  return JSON.stringify(typeof value);
}
