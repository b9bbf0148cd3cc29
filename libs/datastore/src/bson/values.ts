/**
 * BSON value helpers shared by both engines: normalising caller values into the in-memory form the
 * embedded engine stores, deep copies, the BSON comparison order used by sorts and indexes (1, Int32(1),
 * Long(1) and Double(1) are equal, as in MongoDB), and canonical keys for `_id` lookups. No I/O here.
 *
 * Stored numbers keep their BSON type: a JS number stands for the type bson writes it back as (an int32
 * when it is an integer in int32 range, else a double), and only what a number would lose is kept as an
 * object: a Double holding an integer in int32 range, and every Long. Query and update specifications
 * are read with every number as a JS number (`normalize`); documents are stored with `normalizeStored`.
 */
import { Double, EJSON, Long, type Binary, type ObjectId, type Timestamp } from 'bson';
import { toBsonRegExp } from './regex';

export type Document = Record<string, unknown>;

/** Own-property test for the for-in loops of hot paths (faster there than Object.hasOwn or Object.keys). */
export function hasOwn(value: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(value, key);
}

interface BsonTagged {
  _bsontype: string;
}

function bsonType(value: object): string | undefined {
  const tag = (value as Partial<BsonTagged>)._bsontype;
  return typeof tag === 'string' ? tag : undefined;
}

export function isPlainObject(value: unknown): value is Document {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value) || value instanceof Date || value instanceof RegExp) return false;
  return bsonType(value) === undefined;
}

const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;

/** True when bson writes the JS number `n` as an int32 (an integer in range; -0 is written as a double). */
export function isInt32Number(n: number): boolean {
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX && !Object.is(n, -0);
}

/** A double in stored form: a JS number unless bson would write that number back as an int32. */
export function storedDouble(n: number): number | Double {
  return isInt32Number(n) ? new Double(n) : n;
}

/** This bson's Long for a Long of any bson copy (a sandbox's or a driver's). */
function ownLong(value: object): Long {
  if (value instanceof Long) return value;
  const { low, high, unsigned } = value as { low: number; high: number; unsigned?: boolean };
  return Long.fromBits(low, high, unsigned);
}

/**
 * Deep copy of a specification (a filter, a pipeline, an update's arguments) with every number as a JS
 * number (a Long beyond 2^53 stays a Long). `undefined` fields are dropped (as BSON does).
 */
export function normalize(value: unknown): unknown {
  return copyValue(value, false);
}

/**
 * Deep copy of an aggregation pipeline (or expressions) as normalize makes it, each copied container
 * remembering the caller's number types (originalOf): a literal NumberLong(1) in `{$add: ['$n', ...]}` then
 * adds as a long. A promoted copy (a pipeline the wire server decoded, or normalized before) is read by its
 * original, at any depth.
 */
export function normalizeSpec(value: unknown): unknown {
  return promoteNumbers(copyValue(storedOf(value), true));
}

/** Deep copy of a caller's document (or value to store) into stored form: numbers keep their BSON type. */
export function normalizeStored(value: unknown): unknown {
  return copyValue(value, true);
}

function copyValue(value: unknown, keepTypes: boolean): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint') return keepTypes ? Long.fromBigInt(value) : normalizeLong(Long.fromBigInt(value));
    return value;
  }
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const v = value[i] as unknown;
      out[i] = v === undefined ? null : copyValue(v, keepTypes);
    }
    return out;
  }
  if (value instanceof Date) return new Date(value.getTime());
  // One stored form for regex values, the BSON one: it keeps PCRE options (x, s) a RegExp cannot hold.
  if (value instanceof RegExp) return toBsonRegExp(value);
  const tag = bsonType(value);
  if (tag !== undefined) {
    switch (tag) {
      case 'Int32':
        return (value as unknown as { value: number }).value;
      case 'Double': {
        const n = (value as unknown as { value: number }).value;
        return keepTypes ? storedDouble(n) : n;
      }
      case 'Long':
        return keepTypes ? ownLong(value) : normalizeLong(value as Long);
      default:
        return value;
    }
  }
  const out: Document = {};
  // for-in over own keys visits Object.keys' order without allocating the key array (a hot path).
  for (const key in value) {
    if (!hasOwn(value, key)) continue;
    const v = (value as Document)[key];
    if (v !== undefined) setOwn(out, key, copyValue(v, keepTypes));
  }
  return out;
}

/**
 * A document bson read with `promoteValues: false` (a fresh object nobody else holds) put in stored form in
 * place: Int32s become numbers, Doubles numbers unless they hold an integer in int32 range, Longs stay.
 */
export function toStoredForm<T extends Document | unknown[]>(value: T): T {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = storedFormOf(value[i]);
    return value;
  }
  const doc: Document = value;
  for (const key in doc) if (hasOwn(doc, key)) setOwn(doc, key, storedFormOf(doc[key]));
  return value;
}

function storedFormOf(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value) || isPlainObject(value)) return toStoredForm(value as Document);
  const tag = bsonType(value);
  if (tag === 'Int32') return (value as unknown as { value: number }).value;
  if (tag === 'Double') {
    const n = (value as unknown as { value: number }).value;
    return isInt32Number(n) ? value : n;
  }
  return value;
}

/** The stored value a promoted copy (see promoteNumbers) was made from. */
const ORIGINAL = Symbol('original');

/**
 * `value` with every Double, Int32 and safe Long as a JS number, for code that computes with numbers
 * (mingo's operators): the same object when it holds none, else a copy of the parts that do, each copied
 * object remembering its original (originalOf), so that a BSON-type test can still see the stored types.
 */
export function promoteNumbers(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = value[i] as unknown;
      const p = promoteNumbers(v);
      if (p !== v) {
        out ??= value.slice();
        out[i] = p;
      }
    }
    if (!out) return value;
    Object.defineProperty(out, ORIGINAL, { value });
    return out;
  }
  const tag = bsonType(value);
  if (tag !== undefined) {
    if (tag === 'Double' || tag === 'Int32') return (value as unknown as { value: number }).value;
    if (tag === 'Long') return normalizeLong(value as Long);
    return value;
  }
  if (value instanceof Date || value instanceof RegExp) return value;
  let out: Document | undefined;
  for (const key in value) {
    if (!hasOwn(value, key)) continue;
    const v = (value as Document)[key];
    const p = promoteNumbers(v);
    if (p !== v) {
      out ??= { ...(value as Document) };
      setOwn(out, key, p);
    }
  }
  if (!out) return value;
  Object.defineProperty(out, ORIGINAL, { value });
  return out;
}

/**
 * Makes `promoted` the promoted copy of `original` (see promoteNumbers), for code that built both forms of
 * one value side by side instead of promoting the stored one again. `promoted` must hold what
 * promoteNumbers(original) would.
 */
export function asPromotedCopy<T extends object>(promoted: T, original: unknown): T {
  if (promoted !== original) Object.defineProperty(promoted, ORIGINAL, { value: original });
  return promoted;
}

/** The stored value `value` was promoted from, or `value` itself. */
export function originalOf<T>(value: T): T {
  return value !== null && typeof value === 'object' ? ((value as { [ORIGINAL]?: T })[ORIGINAL] ?? value) : value;
}

/** The stored form of a value holding promoted copies (a value mingo computed): each copy becomes its original, at any depth. */
export function storedOf(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const original = originalOf(value);
  if (original !== value) return original;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i] as unknown;
      const stored = storedOf(item);
      if (stored !== item) (out ??= value.slice())[i] = stored;
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  let out: Document | undefined;
  for (const key in value) {
    if (!hasOwn(value, key)) continue;
    const stored = storedOf(value[key]);
    if (stored !== value[key]) (out ??= { ...value })[key] = stored;
  }
  return out ?? value;
}

/**
 * `computed` (a pipeline's output) with the stored types of `original` put back where it holds the same
 * number at the same place: a field a pipeline passed through or copied keeps its Double or Long.
 */
export function restoreNumberTypes(computed: unknown, original: unknown): unknown {
  if (computed === original) return computed;
  if (typeof computed === 'number') {
    if (original !== null && typeof original === 'object') {
      const tag = bsonType(original);
      if ((tag === 'Double' || tag === 'Long') && toNumber(original) === computed) return original;
    }
    return computed;
  }
  if (computed === null || typeof computed !== 'object' || original === null || typeof original !== 'object') return computed;
  const source = originalOf(original);
  // Copies where something changes: `computed` may hold stored objects (a $lookup's matches).
  if (Array.isArray(computed)) {
    if (!Array.isArray(source)) return computed;
    let out: unknown[] | undefined;
    for (let i = 0; i < computed.length && i < source.length; i++) {
      const r = restoreNumberTypes(computed[i], source[i]);
      if (r !== computed[i]) (out ??= computed.slice())[i] = r;
    }
    return out ?? computed;
  }
  if (!isPlainObject(computed) || !isPlainObject(source)) return computed;
  let out: Document | undefined;
  for (const key in computed) {
    if (!hasOwn(computed, key) || !hasOwn(source, key)) continue;
    const r = restoreNumberTypes(computed[key], source[key]);
    if (r !== computed[key]) setOwn((out ??= { ...computed }), key, r);
  }
  return out ?? computed;
}

/**
 * Assigns a field as an own property. A plain assignment of `__proto__` (a field name JSON and EJSON
 * input may carry) would replace the object's prototype instead of storing the field.
 */
function setOwn(target: Document, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function normalizeLong(value: Long): number | Long {
  const n = value.toNumber();
  return Number.isSafeInteger(n) ? n : value;
}

/** Deep copy of a stored value, so callers never hold references into the store. */
export function cloneValue<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v: unknown) => cloneValue(v)) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (bsonType(value) !== undefined || value instanceof RegExp) return value;
  const out: Document = {};
  for (const key in value) if (hasOwn(value, key)) setOwn(out, key, cloneValue((value as Document)[key]));
  return out as T;
}

/** MongoDB's order of BSON types for comparisons and sorts. */
export function typeRank(value: unknown): number {
  if (value === undefined || value === null) return 1;
  switch (typeof value) {
    case 'number':
    case 'bigint':
      return 2;
    case 'string':
      return 3;
    case 'boolean':
      return 8;
    case 'object':
      break;
    case 'undefined':
    case 'function':
    case 'symbol':
      return 4;
  }
  if (Array.isArray(value)) return 5;
  if (value instanceof Date) return 9;
  if (value instanceof RegExp) return 11;
  const tag = bsonType(value);
  switch (tag) {
    case undefined:
      return 4;
    case 'MinKey':
      return 0;
    case 'Int32':
    case 'Double':
    case 'Long':
    case 'Decimal128':
      return 2;
    case 'BSONSymbol':
      return 3;
    case 'Binary':
      return 6;
    case 'ObjectId':
      return 7;
    case 'Timestamp':
      return 10;
    case 'BSONRegExp':
      return 11;
    case 'MaxKey':
      return 12;
    default:
      return 4;
  }
}

function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  const tag = bsonType(value as object);
  switch (tag) {
    case 'Long':
      return (value as Long).toNumber();
    case 'Int32':
    case 'Double':
      return (value as { value: number }).value;
    case 'Decimal128':
      return Number.parseFloat((value as { toString(): string }).toString());
    case undefined:
    default:
      return Number.NaN;
  }
}

function compareNumbers(a: unknown, b: unknown): number {
  if (a instanceof Long && b instanceof Long) return a.compare(b);
  const x = toNumber(a);
  const y = toNumber(b);
  if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : -1; // NaN sorts before every other number
  if (Number.isNaN(y)) return 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length - b.length;
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

/**
 * The string comparison of the operation the engine is running (a collation's), or undefined for binary
 * order. Set only around synchronous engine work (see withCollation in engine/collation.ts).
 */
let stringComparison: ((a: string, b: string) => number) | undefined;

/** Runs `fn` with strings compared by `comparison` (undefined: by code point), restoring the previous one. */
export function withStringComparison<T>(comparison: ((a: string, b: string) => number) | undefined, fn: () => T): T {
  const previous = stringComparison;
  stringComparison = comparison;
  try {
    return fn();
  } finally {
    stringComparison = previous;
  }
}

/** True while a non-simple collation is in effect. */
export function collationActive(): boolean {
  return stringComparison !== undefined;
}

/** The string comparison in effect (undefined: binary). */
export function activeStringComparison(): ((a: string, b: string) => number) | undefined {
  return stringComparison;
}

/** compareValues with strings compared by `comparison` whatever is in effect (an index orders keys by its own collation). */
export function compareValuesUnder(comparison: ((a: string, b: string) => number) | undefined, a: unknown, b: unknown): number {
  if (stringComparison === comparison) return compareValues(a, b);
  const previous = stringComparison;
  stringComparison = comparison;
  try {
    return compareValues(a, b);
  } finally {
    stringComparison = previous;
  }
}

/** True when `value` holds a string at any depth: only then can a collation change a comparison with it. */
export function holdsString(value: unknown): boolean {
  if (typeof value === 'string') return true;
  if (Array.isArray(value)) return value.some(holdsString);
  if (isPlainObject(value)) return Object.values(value).some(holdsString);
  return false;
}

/** Compares two values in MongoDB's BSON order: -1, 0 or 1. Missing compares as null. */
export function compareValues(a: unknown, b: unknown): number {
  // Two numbers or two strings are most keys of every index: compared before the general type dispatch.
  if (typeof a === 'number' && typeof b === 'number') {
    if (a < b) return -1;
    if (a > b) return 1;
    if (a === b) return 0;
    return compareNumbers(a, b); // a NaN
  }
  if (typeof a === 'string' && typeof b === 'string') {
    if (stringComparison) return sign(stringComparison(a, b));
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
    case 1:
    case 12:
      return 0;
    case 2:
      return compareNumbers(a, b);
    case 3: {
      const x = String(a);
      const y = String(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 4:
      return compareObjects(a as Document, b as Document);
    case 5: {
      const x = a as unknown[];
      const y = b as unknown[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return sign(x.length - y.length);
    }
    case 6: {
      const x = a as Binary;
      const y = b as Binary;
      if (x.position !== y.position) return x.position < y.position ? -1 : 1;
      if (x.sub_type !== y.sub_type) return x.sub_type < y.sub_type ? -1 : 1;
      return sign(compareBytes(x.buffer.subarray(0, x.position), y.buffer.subarray(0, y.position)));
    }
    case 7:
      return sign(compareBytes((a as ObjectId).id, (b as ObjectId).id));
    case 8:
      return a === b ? 0 : a ? 1 : -1;
    case 9:
      return sign((a as Date).getTime() - (b as Date).getTime());
    case 10:
      return (a as Timestamp).compare(b as Timestamp);
    case 11: {
      // By pattern, then options (MongoDB's order for regex values).
      const x = toBsonRegExp(a as RegExp);
      const y = toBsonRegExp(b as RegExp);
      if (x.pattern !== y.pattern) return x.pattern < y.pattern ? -1 : 1;
      return x.options < y.options ? -1 : x.options > y.options ? 1 : 0;
    }
    default:
      return 0;
  }
}

function compareObjects(a: Document, b: Document): number {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const va = a[ka[i]];
    const vb = b[kb[i]];
    const r = typeRank(va) - typeRank(vb);
    if (r !== 0) return sign(r);
    if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
    const c = compareValues(va, vb);
    if (c !== 0) return c;
  }
  return sign(ka.length - kb.length);
}

/**
 * True when two stored values are the same BSON: same types (an int 1 and a double 1 differ, as do 0 and
 * -0), same field order, same values. What an update must leave alone to count as no modification, since
 * MongoDB compares the documents' bytes.
 */
export function identicalValues(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' || typeof b === 'number') return typeof a === 'number' && typeof b === 'number' && (Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b)));
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!identicalValues(a[i], b[i])) return false;
    return true;
  }
  const tagA = bsonType(a);
  if (tagA !== bsonType(b)) return false;
  if (tagA === 'Double') return Object.is((a as Double).value, (b as Double).value);
  if (tagA === 'Long') return (a as Long).equals(b as Long);
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || !identicalValues(a[ka[i]], b[kb[i]])) return false;
    return true;
  }
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  return withStringComparison(undefined, () => compareValues(a, b) === 0);
}

export function valuesEqual(a: unknown, b: unknown): boolean {
  return compareValues(a, b) === 0 && typeRank(a) === typeRank(b);
}

/** valuesEqual with strings compared by code point whatever collation is active (an `_id` that changes case changes). */
export function valuesIdentical(a: unknown, b: unknown): boolean {
  return stringComparison === undefined ? valuesEqual(a, b) : withStringComparison(undefined, () => valuesEqual(a, b));
}

/** A string that is equal for two `_id` values exactly when MongoDB considers them the same key. */
export function idKey(value: unknown): string {
  if (value === undefined || value === null) return 'z';
  switch (typeof value) {
    case 'number':
      return Object.is(value, -0) ? 'n0' : `n${value}`;
    case 'string':
      return `s${value}`;
    case 'boolean':
      return value ? 'bt' : 'bf';
    case 'bigint':
    case 'function':
    case 'object':
    case 'symbol':
    case 'undefined':
      break;
  }
  if (value instanceof Date) return `d${value.getTime()}`;
  const tag = bsonType(value);
  if (tag === 'ObjectId') return `o${(value as ObjectId).toHexString()}`;
  if (tag === 'Binary') {
    const bin = value as Binary;
    return `b${bin.sub_type}:${Buffer.from(bin.buffer.subarray(0, bin.position)).toString('hex')}`;
  }
  if (typeRank(value) === 2) {
    const n = toNumber(value);
    return Number.isSafeInteger(n) || !(value instanceof Long) ? `n${n}` : `l${String(value)}`;
  }
  return `x${EJSON.stringify(numbersAsDoubles(value), { relaxed: false })}`;
}

function numbersAsDoubles(value: unknown): unknown {
  if (typeRank(value) === 2) return { $n: String(toNumber(value)) };
  if (Array.isArray(value)) return value.map(numbersAsDoubles);
  if (isPlainObject(value)) {
    const out: Document = {};
    for (const k of Object.keys(value)) out[k] = numbersAsDoubles(value[k]);
    return out;
  }
  return value;
}

/** The shell-like rendering MongoDB uses in error messages, e.g. `{ _id: 1 }` or `ObjectId('...')`. */
/** A value's type as MongoDB's messages name it (int, double, object, array, string...). */
export function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return isInt32Number(value) ? 'int' : 'double';
  if (typeof value === 'object') {
    if (isPlainObject(value)) return 'object';
    const tag = bsonType(value);
    if (tag === 'Double' || tag === 'Long' || tag === 'Decimal128') return tag === 'Decimal128' ? 'decimal' : tag.toLowerCase();
    return value.constructor.name;
  }
  return typeof value;
}

export function formatValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value !== 'object') return typeof value;
  if (Array.isArray(value)) return `[ ${value.map(formatValue).join(', ')} ]`;
  if (value instanceof Date) return `new Date(${value.getTime()})`;
  const tag = bsonType(value);
  if (tag === 'ObjectId') return `ObjectId('${(value as ObjectId).toHexString()}')`;
  if (tag !== undefined) return (value as { toString(): string }).toString();
  const entries = Object.entries(value as Document).map(([k, v]) => `${k}: ${formatValue(v)}`);
  return entries.length ? `{ ${entries.join(', ')} }` : '{}';
}

/** Reads a dotted path without descending into arrays (positional numbers address array elements). */
export function getPath(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (Array.isArray(cur)) {
      const idx = Number(part);
      if (!Number.isInteger(idx)) return undefined;
      cur = cur[idx];
    } else {
      cur = (cur as Document)[part];
    }
  }
  return cur;
}

/**
 * Every value a dotted path reaches, descending into arrays as MongoDB queries and indexes do.
 * An empty result means the path is missing.
 */
export function collectPathValues(doc: unknown, parts: readonly string[], from = 0, out: unknown[] = []): unknown[] {
  if (from === parts.length) {
    out.push(doc);
    return out;
  }
  if (doc === null || typeof doc !== 'object') return out;
  if (Array.isArray(doc)) {
    const idx = Number(parts[from]);
    if (Number.isInteger(idx) && idx >= 0) {
      if (idx < doc.length) collectPathValues(doc[idx], parts, from + 1, out);
      return out;
    }
    for (const item of doc) if (item !== null && typeof item === 'object') collectPathValues(item, parts, from, out);
    return out;
  }
  if (!isPlainObject(doc)) return out;
  const next = doc[parts[from]];
  if (next === undefined) return out;
  return collectPathValues(next, parts, from + 1, out);
}
