/**
 * The value semantics the evaluator needs, as MongoDB queries define them (so a document matches here exactly
 * when the translated filter matches it in the datastore): numbers of every BSON width compare by value with
 * NaN below every number, other types only within their own type, and missing fields equal null.
 */
import { type Binary, type ObjectId } from 'bson';

type Bracket = 'null' | 'number' | 'string' | 'object' | 'array' | 'binary' | 'objectId' | 'bool' | 'date' | 'other';

function bsonTag(value: object): string | undefined {
  const tag = (value as { _bsontype?: unknown })._bsontype;
  return typeof tag === 'string' ? tag : undefined;
}

export function bracketOf(value: unknown): Bracket {
  if (value === undefined || value === null) return 'null';
  switch (typeof value) {
    case 'number':
    case 'bigint':
      return 'number';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'object':
      break;
    case 'undefined':
    case 'function':
    case 'symbol':
      return 'other';
  }
  if (Array.isArray(value)) return 'array';
  if (value instanceof Date) return 'date';
  switch (bsonTag(value)) {
    case 'Int32':
    case 'Double':
    case 'Long':
    case 'Decimal128':
      return 'number';
    case 'Binary':
      return 'binary';
    case 'ObjectId':
      return 'objectId';
    case undefined:
      return 'object';
    default:
      return 'other';
  }
}

export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  const tag = bsonTag(value as object);
  if (tag === 'Decimal128') return Number((value as { toString(): string }).toString());
  return Number((value as { valueOf(): unknown }).valueOf());
}

function binaryBytes(value: Binary): Uint8Array {
  return value.buffer.subarray(0, value.position);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return Math.sign(a.length - b.length);
}

/**
 * Compares two values of the same bracket: -1, 0, 1. Undefined when they are in different brackets (a query
 * operator never matches across brackets).
 */
export function compareSameType(a: unknown, b: unknown): number | undefined {
  const bracket = bracketOf(a);
  if (bracket !== bracketOf(b)) return undefined;
  switch (bracket) {
    case 'null':
      return 0;
    case 'number': {
      const x = toNumber(a);
      const y = toNumber(b);
      if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : -1;
      if (Number.isNaN(y)) return 1;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'string':
      return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
    case 'bool':
      return a === b ? 0 : a ? 1 : -1;
    case 'date':
      return Math.sign((a as Date).getTime() - (b as Date).getTime());
    case 'objectId':
      return compareBytes((a as ObjectId).id, (b as ObjectId).id);
    case 'binary': {
      const x = a as Binary;
      const y = b as Binary;
      if (x.position !== y.position) return x.position < y.position ? -1 : 1;
      if (x.sub_type !== y.sub_type) return x.sub_type < y.sub_type ? -1 : 1;
      return compareBytes(binaryBytes(x), binaryBytes(y));
    }
    case 'array':
    case 'object':
    case 'other':
      return undefined;
  }
}

export function valuesEqual(a: unknown, b: unknown): boolean {
  return compareSameType(a, b) === 0;
}

/**
 * A key that two values share whenever a query's equality holds between them (it may also be shared by a
 * few unequal values: the index only narrows, the evaluator decides).
 */
export function equalityKey(value: unknown): string {
  switch (bracketOf(value)) {
    case 'null':
      return 'null';
    case 'number':
      return `n:${toNumber(value)}`;
    case 'string':
      return `s:${value as string}`;
    case 'bool':
      return `b:${String(value)}`;
    case 'date':
      return `d:${(value as Date).getTime()}`;
    case 'objectId':
      return `o:${(value as ObjectId).toHexString()}`;
    case 'binary':
      return `x:${(value as Binary).sub_type}:${Buffer.from(binaryBytes(value as Binary)).toString('base64')}`;
    case 'array':
    case 'object':
    case 'other':
      return 'other';
  }
}

export function isPlainDocument(value: unknown): value is Record<string, unknown> {
  return bracketOf(value) === 'object';
}
