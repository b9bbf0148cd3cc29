/**
 * Value semantics shared by the expression evaluator and the rules: field paths, BSON-aware equality with
 * App Services' array "contains" rule, and MongoDB-style ordered comparison (numbers with numbers, strings
 * with strings, ...). Pure functions over plain documents; a missing value is `undefined`.
 */

/** A document as the datastore hands it over: a plain object whose leaves may be BSON values. */
export type RuleDocument = Record<string, unknown>;

interface BsonLike {
  _bsontype: string;
}

function bsonType(value: object): string | undefined {
  const tag = (value as Partial<BsonLike>)._bsontype;
  return typeof tag === 'string' ? tag : undefined;
}

/** True for `{...}` objects (not arrays, dates or BSON values): the only objects a path walks into. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

const INDEX = /^\d+$/;

/**
 * Resolves a dotted path (already split) inside a value. Walking into an array with a non-numeric segment
 * collects the values found in its object elements (MongoDB semantics), so `tags.name` over
 * `[{name:'a'},{name:'b'}]` gives `['a','b']`. Returns `undefined` when nothing is there.
 */
export function getPath(value: unknown, segments: readonly string[], from = 0): unknown {
  // Fast path for the common `{"owner_id": ...}`: one segment into a plain document.
  if (segments.length - from === 1 && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    if (!isPlainObject(value)) return undefined;
    const key = segments[from];
    return Object.hasOwn(value, key) ? value[key] : undefined;
  }
  let current = value;
  for (let i = from; i < segments.length; i++) {
    if (current === null || current === undefined) return undefined;
    const segment = segments[i];
    if (Array.isArray(current)) {
      if (INDEX.test(segment)) {
        current = current[Number(segment)];
        continue;
      }
      const found: unknown[] = [];
      for (const element of current) {
        if (!isPlainObject(element)) continue;
        const inner = getPath(element, segments, i);
        if (inner === undefined) continue;
        if (Array.isArray(inner)) found.push(...(inner as unknown[]));
        else found.push(inner);
      }
      return found.length > 0 ? found : undefined;
    }
    if (!isPlainObject(current)) return undefined;
    current = Object.hasOwn(current, segment) ? current[segment] : undefined;
  }
  return current;
}

type Kind = 'missing' | 'null' | 'number' | 'string' | 'boolean' | 'date' | 'objectId' | 'binary' | 'array' | 'object' | 'other';

function kindOf(value: unknown): Kind {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'number':
    case 'bigint':
      return 'number';
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'object':
      break;
    case 'function':
    case 'symbol':
    case 'undefined':
      return 'other';
  }
  if (Array.isArray(value)) return 'array';
  if (value instanceof Date) return 'date';
  const tag = bsonType(value);
  switch (tag) {
    case undefined:
      return isPlainObject(value) ? 'object' : 'other';
    case 'ObjectId':
    case 'ObjectID':
      return 'objectId';
    case 'Long':
    case 'Int32':
    case 'Double':
    case 'Decimal128':
      return 'number';
    case 'Binary':
      return 'binary';
    default:
      return 'other';
  }
}

function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  const v = value as { toNumber?: () => number; valueOf: () => unknown; toString: () => string };
  if (typeof v.toNumber === 'function') return v.toNumber();
  const primitive = v.valueOf();
  if (typeof primitive === 'number') return primitive;
  return Number(v.toString());
}

function hexOf(value: unknown): string {
  return (value as { toHexString: () => string }).toHexString();
}

function bytesOf(value: unknown): Uint8Array {
  return (value as { buffer: Uint8Array }).buffer;
}

/** Deep BSON-aware equality. Numbers compare by value across BSON numeric types; object keys in any order. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka !== kb) return false;
  switch (ka) {
    case 'missing':
    case 'null':
      return true;
    case 'number':
      return toNumber(a) === toNumber(b);
    case 'string':
    case 'boolean':
      return false;
    case 'date':
      return (a as Date).getTime() === (b as Date).getTime();
    case 'objectId':
      return hexOf(a) === hexOf(b);
    case 'binary': {
      const x = bytesOf(a);
      const y = bytesOf(b);
      if (x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
      return true;
    }
    case 'array': {
      const x = a as unknown[];
      const y = b as unknown[];
      if (x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) if (!deepEqual(x[i], y[i])) return false;
      return true;
    }
    case 'object': {
      const x = a as Record<string, unknown>;
      const y = b as Record<string, unknown>;
      const keys = Object.keys(x).filter((k) => x[k] !== undefined);
      const otherKeys = Object.keys(y).filter((k) => y[k] !== undefined);
      if (keys.length !== otherKeys.length) return false;
      for (const key of keys) if (!deepEqual(x[key], y[key])) return false;
      return true;
    }
    case 'other':
      return false;
  }
}

/**
 * Equality as rule expressions mean it: plain equality, or "contains" when one side is an array and the
 * other is not (`{"collaborators": "%%user.id"}` and `{"email": "%%user.custom_data.manages"}` both hold
 * when the scalar is an element of the array). An array left side also matches an array element equal to
 * the right side, as in MongoDB. A missing value equals nothing.
 */
export function ruleEquals(left: unknown, right: unknown): boolean {
  // Missing equals nothing, not even missing: `{"team": "%%user.custom_data.team"}` must not grant a user
  // without custom data every document without a team. Test absence with `$exists: false`.
  if (left === undefined || right === undefined) return false;
  const lt = typeof left;
  if (lt !== 'object' && lt === typeof right) return left === right;
  if (deepEqual(left, right)) return true;
  if (Array.isArray(left)) {
    for (const element of left) if (deepEqual(element, right)) return true;
    return false;
  }
  if (Array.isArray(right)) {
    for (const element of right) if (deepEqual(left, element)) return true;
  }
  return false;
}

/** `$in`: the left value (or any element of an array left value) equals an element of the list. */
export function inList(left: unknown, list: unknown): boolean {
  if (!Array.isArray(list) || left === undefined) return false;
  for (const item of list) {
    if (deepEqual(left, item)) return true;
    if (Array.isArray(left)) for (const element of left) if (deepEqual(element, item)) return true;
  }
  return false;
}

/**
 * Ordered comparison within one type class, like MongoDB's query type bracketing: returns a negative,
 * zero or positive number, or `undefined` when the two values are not comparable (a string and a number).
 */
export function compareValues(a: unknown, b: unknown): number | undefined {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka !== kb) return undefined;
  switch (ka) {
    case 'number': {
      const x = toNumber(a);
      const y = toNumber(b);
      if (Number.isNaN(x) || Number.isNaN(y)) return undefined;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'string': {
      const x = a as string;
      const y = b as string;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'date':
      return (a as Date).getTime() - (b as Date).getTime();
    case 'objectId': {
      const x = hexOf(a);
      const y = hexOf(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'boolean':
      return Number(a) - Number(b);
    case 'null':
      return 0;
    case 'missing':
    case 'binary':
    case 'array':
    case 'object':
    case 'other':
      return undefined;
  }
}

/** `$gt` and friends: true when the comparison holds for the value, or for any element of an array value. */
export function compareMatches(left: unknown, right: unknown, test: (order: number) => boolean): boolean {
  const direct = compareValues(left, right);
  if (direct !== undefined && test(direct)) return true;
  if (Array.isArray(left)) {
    for (const element of left) {
      const order = compareValues(element, right);
      if (order !== undefined && test(order)) return true;
    }
  }
  return false;
}

/** A structural copy of plain objects and arrays; BSON leaves are shared (they are immutable). */
export function cloneDocument<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => cloneDocument(v)) as T;
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = cloneDocument(value[key]);
    return out as T;
  }
  return value;
}
