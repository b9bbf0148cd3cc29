/**
 * The numbers of a data-source call's arguments (remote data access, the Data API, a function's
 * collection methods) in the forms the datastore reads: what the call stores (`document`, `documents`,
 * `update`, `replacement`) keeps each number's BSON type as the datastore stores it, the rest (filters,
 * options, pipelines) has JS numbers, as the drivers hand them to MongoDB (rules and pipelines compare
 * them with stored values).
 */
import { Double, Int32, Long } from 'bson';

/** The arguments whose values are stored. */
const STORED_ARGUMENTS: ReadonlySet<string> = new Set(['document', 'documents', 'update', 'replacement']);

/**
 * A copy of a call's arguments object with its numbers in the datastore's forms (see above). `stored`:
 * the arguments were read in stored form already (parseEjson's `stored`), so what is stored is kept as is.
 */
export function dataSourceArgumentNumbers(args: Record<string, unknown>, options: { stored?: boolean } = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (STORED_ARGUMENTS.has(key)) setField(out, key, options.stored ? value : withTypedNumbers(value));
    else if (key === 'operations' && Array.isArray(value)) setField(out, key, value.map((operation: unknown) => bulkOperationNumbers(operation, options)));
    else setField(out, key, withJsNumbers(value));
  }
  return out;
}

/** One operation of a bulk write (`{insertOne: {document}}`, `{replaceOne: {filter, replacement}}`, ...). */
function bulkOperationNumbers(operation: unknown, options: { stored?: boolean }): unknown {
  if (!isPlainRecord(operation)) return withJsNumbers(operation);
  const out: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(operation)) setField(out, name, isPlainRecord(inner) ? dataSourceArgumentNumbers(inner, options) : withJsNumbers(inner));
  return out;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) && !isTagged(value);
}

/** Sets a field as an own property (a `__proto__` key would otherwise replace the object's prototype). */
function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isTagged(value: object): boolean {
  return typeof (value as { _bsontype?: unknown })._bsontype === 'string';
}

/** A double in the datastore's stored form: a JS number unless bson would write that number back as an int32. */
export function storedDouble(n: number): number | Double {
  return Number.isInteger(n) && n >= -0x8000_0000 && n <= 0x7fff_ffff && !Object.is(n, -0) ? new Double(n) : n;
}

/**
 * A copy of `value` in the datastore's stored form: Int32 as a JS number, a Double as a JS number unless
 * it holds an integer in int32 range (a number would be written back as an int), every Int64 as a Long.
 */
export function withTypedNumbers(value: unknown): unknown {
  if (value instanceof Int32) return value.value;
  if (value instanceof Double) return storedDouble(value.value);
  if (value instanceof Long) return value;
  if (Array.isArray(value)) return value.map(withTypedNumbers);
  if (typeof value !== 'object' || value === null || value instanceof Date || isTagged(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) setField(out, key, withTypedNumbers(item));
  return out;
}

/**
 * A copy of `value` with Int32 and Double as JS numbers, and Int64 too when it fits a double exactly (a
 * larger one stays a Long: a relaxed EJSON round trip would round it). Other BSON values are kept.
 */
export function withJsNumbers(value: unknown): unknown {
  if (value instanceof Int32 || value instanceof Double) return value.valueOf();
  if (value instanceof Long) return value.lessThanOrEqual(Number.MAX_SAFE_INTEGER) && value.greaterThanOrEqual(Number.MIN_SAFE_INTEGER) ? value.toNumber() : value;
  if (Array.isArray(value)) return value.map(withJsNumbers);
  if (typeof value !== 'object' || value === null || value instanceof Date || isTagged(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) setField(out, key, withJsNumbers(item));
  return out;
}
