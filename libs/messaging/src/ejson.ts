import { type JsonValue } from '@tessera/contracts';
import { TesseraError } from '@tessera/domain';
import { Decimal128, Double, EJSON, Int32, Long, ObjectId, Timestamp } from 'bson';
import { storedDouble, withTypedNumbers } from './data-source-numbers';

/** A BSON-typed value (ObjectId, Long, Date, Decimal128, ...) in canonical Extended JSON, as contracts carry it. */
export function encodeEjson(value: unknown): JsonValue {
  // bson's EJSON.serialize converts, then stringifies and parses the result again (a third of a change
  // event's cost). The common forms are converted directly, to the same values; the rest goes to bson.
  try {
    return canonical(value, []);
  } catch (error) {
    if (error === NOT_DIRECT) return EJSON.serialize(value, { relaxed: false });
    throw error;
  }
}

/** Thrown (not an Error: never escapes encodeEjson) where bson must convert the whole value: cycles, functions at the top. */
const NOT_DIRECT = Symbol('not direct');
const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;
const INT64_LIMIT = 2 ** 63;

/** What EJSON.serialize(value, { relaxed: false }) returns, for plain data and the usual BSON values. */
function canonical(value: unknown, ancestors: object[]): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return canonicalNumber(value);
    case 'bigint':
      return { $numberLong: BigInt.asIntN(64, value).toString() };
    case 'undefined':
      return null;
    case 'object':
      break;
    case 'function':
    case 'symbol':
      // JSON has no such value: at the top, only bson's own error is the right answer.
      throw NOT_DIRECT;
  }
  if (value === null) return null;
  if (ancestors.includes(value)) throw NOT_DIRECT;
  if (Array.isArray(value)) {
    ancestors.push(value);
    const out: JsonValue[] = new Array<JsonValue>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      // JSON writes a function or symbol in an array as null.
      out[i] = typeof item === 'function' || typeof item === 'symbol' ? null : canonical(item, ancestors);
    }
    ancestors.pop();
    return out;
  }
  // By exact type: a Timestamp is a Long too, with its own form.
  if (value instanceof ObjectId) return { $oid: value.toHexString() };
  if (value instanceof Timestamp) return { $timestamp: { t: value.t, i: value.i } };
  if (value instanceof Long) return { $numberLong: value.toString() };
  if (value instanceof Int32) return { $numberInt: value.value.toString() };
  if (value instanceof Decimal128) return { $numberDecimal: value.toString() };
  if (value instanceof Date) return { $date: { $numberLong: value.getTime().toString() } };
  const prototype: unknown = Object.getPrototypeOf(value);
  if ((prototype !== Object.prototype && prototype !== null) || '_bsontype' in value) return EJSON.serialize(value, { relaxed: false });
  ancestors.push(value);
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    // JSON leaves out a key whose value is a function or symbol.
    if (typeof item === 'function' || typeof item === 'symbol') continue;
    const encoded = canonical(item, ancestors);
    if (key === '__proto__') Object.defineProperty(out, key, { value: encoded, enumerable: true, writable: true, configurable: true });
    else out[key] = encoded;
  }
  ancestors.pop();
  return out;
}

/**
 * As bson writes a number, but for two of its slips: an integer beyond 2^53 gets its exact digits (bson
 * writes Number#toString's, "1152921504606847000" for 2^60: another Int64), and 2^63, which no Int64 holds,
 * stays a double (bson writes it as `$numberLong` "9223372036854775808", which every reader refuses).
 */
function canonicalNumber(value: number): JsonValue {
  if (Number.isInteger(value) && !Object.is(value, -0)) {
    if (value >= INT32_MIN && value <= INT32_MAX) return { $numberInt: value.toString() };
    if (value >= -INT64_LIMIT && value < INT64_LIMIT) return { $numberLong: Number.isSafeInteger(value) ? value.toString() : BigInt(value).toString() };
  }
  return { $numberDouble: Object.is(value, -0) ? '-0.0' : value.toString() };
}

/**
 * The value of canonical Extended JSON received in a payload, lossless by default (Int32, Double and Long
 * stay BSON wrappers). `{ relaxed: true }` gives JS numbers instead, except for an Int64 no double holds
 * exactly, which stays a Long (bson's relaxed reading rounds it).
 */
export function decodeEjson(value: JsonValue, options: { relaxed?: boolean } = {}): unknown {
  const json = keepRegexOperators(value);
  const relaxed = options.relaxed ?? false;
  try {
    return bsonValues(json, relaxed ? 'relaxed' : 'canonical', true);
  } catch (error) {
    if (error === NOT_DIRECT) return EJSON.deserialize(json as Parameters<typeof EJSON.deserialize>[0], { relaxed });
    throw error;
  }
}

/**
 * EJSON text parsed into BSON values, with the query operators beside a `$regex` kept (see keepRegexOperators).
 * `stored` reads numbers as the datastore stores them: an int or a double as a JS number, but a double
 * holding an integer in int32 range as a Double (a number would be written back as an int), a long as a Long.
 */
export function parseEjson(text: string, options: { relaxed?: boolean; stored?: boolean } = {}): unknown {
  const mode: NumberMode = options.stored ? 'stored' : (options.relaxed ?? true) ? 'relaxed' : 'canonical';
  return bsonValues(keepRegexOperators(JSON.parse(text) as unknown), mode, false);
}

/** How numbers are read: bson's canonical wrappers, bson's relaxed JS numbers, or the datastore's stored form. */
type NumberMode = 'canonical' | 'relaxed' | 'stored';

/**
 * What EJSON.deserialize(json, { relaxed }) returns (but for a relaxed Int64 beyond 2^53, see relaxedLong),
 * without its stringify-and-parse round trip over the whole value (10,000 documents handed to insertMany,
 * 20 returned by a function): plain objects and arrays are walked here, and only an object with a `$` key
 * (a type wrapper bson reads, or a query operator) or a key bson refuses goes to bson. Reading an object
 * does not depend on where it sits, so converting it alone gives what converting the whole value gives. `copy` leaves `json` as it is and reads it as its JSON text
 * would read (-0 as 0, NaN as null); without it, `json` was just parsed and is changed in place.
 */
function bsonValues(json: unknown, mode: NumberMode, copy: boolean): unknown {
  switch (typeof json) {
    case 'string':
    case 'boolean':
      return json;
    case 'number': {
      const number = copy ? jsonNumber(json) : json;
      return mode !== 'canonical' || number === null ? number : numberValue(number);
    }
    case 'object':
      break;
    case 'undefined':
    case 'bigint':
    case 'function':
    case 'symbol':
      // Not JSON: what its JSON text would be is bson's business.
      throw NOT_DIRECT;
  }
  if (json === null) return null;
  if (Array.isArray(json)) {
    const out = copy ? new Array<unknown>(json.length) : json;
    for (let i = 0; i < json.length; i++) out[i] = bsonValues(json[i], mode, copy);
    return out;
  }
  const prototype: unknown = Object.getPrototypeOf(json);
  if (prototype !== Object.prototype && prototype !== null) throw NOT_DIRECT;
  const object = json as Record<string, unknown>;
  const keys = Object.keys(object);
  if (keys.length === 1) {
    // The wrappers of every number and id, read as bson's codecs read them.
    const only = object[keys[0]];
    if (typeof only === 'string') {
      if (keys[0] === '$numberInt') return mode === 'canonical' ? new Int32(only) : parseInt(only, 10);
      if (keys[0] === '$numberDouble') return mode === 'canonical' ? new Double(parseFloat(only)) : mode === 'relaxed' ? parseFloat(only) : storedDouble(parseFloat(only));
      if (keys[0] === '$oid') return new ObjectId(only);
      if (keys[0] === '$numberLong' && mode === 'relaxed') return relaxedLong(EJSON.deserialize(object, { relaxed: false }) as Long);
    }
  }
  for (const key of keys) {
    if (key.startsWith('$') || key.includes('\0')) {
      if (mode === 'stored') return withTypedNumbers(EJSON.deserialize(object, { relaxed: false }));
      return EJSON.deserialize(object, { relaxed: mode === 'relaxed' });
    }
  }
  const out: Record<string, unknown> = copy ? {} : object;
  for (const key of keys) {
    const item = object[key];
    const value = bsonValues(item, mode, copy);
    if (value === item && !copy) continue;
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

/**
 * An Int64 as a relaxed value: a number when a double holds it exactly, else the Long itself. bson's relaxed
 * reading gives the nearest double, and a Long a function sent to be stored (9223372036854775807) was
 * stored as another value (9223372036854775808, a double).
 */
function relaxedLong(long: Long): number | Long {
  return long.lessThanOrEqual(Number.MAX_SAFE_INTEGER) && long.greaterThanOrEqual(Number.MIN_SAFE_INTEGER) ? long.toNumber() : long;
}

/** A number as JSON text carries it. */
function jsonNumber(value: number): number | null {
  if (!Number.isFinite(value)) return null;
  return Object.is(value, -0) ? 0 : value;
}

/** A JSON number in canonical mode, as bson reads it: Int32, Long or Double. */
function numberValue(value: number): unknown {
  if (Number.isInteger(value) && !Object.is(value, -0)) {
    if (value >= INT32_MIN && value <= INT32_MAX) return new Int32(value);
    if (value >= -INT64_LIMIT && value <= INT64_LIMIT) return Long.fromNumber(value);
  }
  return new Double(value);
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

/** Extended JSON that bson would silently coerce into some other value (bad base64, bad subtype). */
export class MalformedEjsonError extends TesseraError {
  readonly errorCode = 'BadRequest';
  readonly httpStatus = 400;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const SUBTYPE = /^[0-9a-fA-F]{1,2}$/;

/** Deepest nesting accepted from outside: mongod's default maxBSONDepth (deeper values are refused before any recursive walk). */
export const MAX_EJSON_DEPTH = 200;

const INT64_MAX = 2n ** 63n - 1n;
const MAX_DATE_MS = 8.64e15;
const INTEGER = /^-?\d+$/;
const DOUBLE = /^(?:-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|-?Infinity|NaN)$/;

/**
 * Refuses Extended JSON that bson reads leniently: a `$binary` whose base64 is not base64 (bson decodes
 * what it can and drops the rest) or whose subtype is not one or two hex digits (bson reads it as 0); a
 * `$numberInt` or `$numberLong` that is no integer or overflows (bson reads "abc" as 0 and wraps 2^63 to
 * -2^63); a `$numberDouble` that is no number; a `$date` that is no date (bson makes an Invalid Date, which
 * no later hop can carry). A type wrapper of any other shape than the Extended JSON spec gives it is refused
 * too: bson reads `{ $oid, unrelated }` as the id alone (dropping a key), `{ $numberInt: 42 }` as if it were
 * text, `{ $minKey: 0 }` as MinKey and `{ $code: 42 }` as the code "42", where the Extended JSON spec
 * makes each a parse error. Values nested deeper than MAX_EJSON_DEPTH are refused. Call it on a value before
 * deserializing it wherever Extended JSON comes from outside.
 */
export function assertWellFormedEjson(value: unknown): void {
  // Paths are only spelled for an error: a well-formed body (every function call's arguments, every
  // insertMany's documents) costs a walk, not a string per value.
  const pending: Visit[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const visit = next;
    const current = visit.value;
    if (typeof current !== 'object' || current === null) continue;
    if (visit.depth >= MAX_EJSON_DEPTH) throw new MalformedEjsonError(`nested deeper than ${MAX_EJSON_DEPTH} levels`);
    if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, depth: visit.depth + 1, parent: visit, key: index }));
      continue;
    }
    const object = current as Record<string, unknown>;
    checkWrapper(object, () => pathOf(visit));
    for (const [key, item] of Object.entries(object)) pending.push({ value: item, depth: visit.depth + 1, parent: visit, key });
  }
}

/** One value met by assertWellFormedEjson, with how it was reached. */
interface Visit {
  value: unknown;
  depth: number;
  parent?: Visit;
  key?: string | number;
}

/** Where a visited value sits, spelled as before (`a.b[2].c`), or `(root)` for the value itself. */
function pathOf(visit: Visit): string {
  const keys: Array<string | number> = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) keys.push(at.key);
  let path = '';
  for (const key of keys.reverse()) path = typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
  return path || '(root)';
}

/**
 * The keys that make an object a type wrapper, each with the check of its shape. `$regex` (also a query
 * operator, see keepRegexOperators), `$type` (likewise) and a DBRef's `$ref`/`$id`/`$db` (a DBRef may have
 * other fields) are not among them.
 */
const WRAPPERS: ReadonlyMap<string, (object: Record<string, unknown>, keys: string[], where: () => string) => void> = new Map([
  ['$oid', stringAlone],
  ['$symbol', stringAlone],
  ['$uuid', stringAlone],
  ['$numberDecimal', stringAlone],
  ['$numberInt', checkNumberText],
  ['$numberLong', checkNumberText],
  ['$numberDouble', checkNumberText],
  ['$date', checkDate],
  ['$binary', checkBinary],
  ['$code', checkCode],
  ['$timestamp', checkTimestamp],
  ['$regularExpression', checkRegularExpression],
  ['$minKey', checkKeyBound],
  ['$maxKey', checkKeyBound],
  ['$undefined', checkUndefined],
  ['$dbPointer', checkDbPointer],
]);

function checkWrapper(object: Record<string, unknown>, where: () => string): void {
  const keys = Object.keys(object);
  for (const key of keys) {
    // Most objects have no `$` key at all: one character compared per key.
    if (key.charCodeAt(0) !== 36) continue;
    const check = WRAPPERS.get(key);
    if (check) return check(object, keys, () => `${key} at ${where()}`);
  }
}

function malformed(where: () => string, must: string): never {
  throw new MalformedEjsonError(`invalid ${where()}: ${must}`);
}

function alone(keys: string[], where: () => string): void {
  if (keys.length !== 1) malformed(where, 'a type wrapper may have no other key beside it');
}

/** An object with exactly these keys. */
function hasExactly(value: unknown, names: readonly string[]): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === names.length && names.every((name) => Object.prototype.hasOwnProperty.call(value, name));
}

function stringAlone(object: Record<string, unknown>, keys: string[], where: () => string): void {
  alone(keys, where);
  if (typeof object[keys[0]] !== 'string') malformed(where, 'must be a string');
}

function checkNumberText(object: Record<string, unknown>, keys: string[], where: () => string): void {
  stringAlone(object, keys, where);
  const key = keys[0];
  const value = object[key] as string;
  if (key === '$numberInt' && !(INTEGER.test(value) && Number(value) >= INT32_MIN && Number(value) <= INT32_MAX)) malformed(where, 'must be a 32-bit integer');
  if (key === '$numberLong' && !isInt64(value)) malformed(where, 'must be a 64-bit integer');
  if (key === '$numberDouble' && !DOUBLE.test(value)) malformed(where, 'must be a number, Infinity, -Infinity or NaN');
}

function isInt64(text: string): boolean {
  if (!INTEGER.test(text) || text.length > 21) return false;
  const value = BigInt(text);
  return value <= INT64_MAX && value >= -INT64_MAX - 1n;
}

function checkDate(object: Record<string, unknown>, keys: string[], where: () => string): void {
  alone(keys, where);
  const value = object['$date'];
  let ms: number;
  if (typeof value === 'string') ms = Date.parse(value);
  else if (hasExactly(value, ['$numberLong']) && typeof value['$numberLong'] === 'string') {
    const text = value['$numberLong'];
    ms = INTEGER.test(text) && text.length <= 21 ? Number(text) : Number.NaN;
  } else return malformed(where, 'must be an ISO-8601 string or { "$numberLong": "<milliseconds>" }');
  if (!(Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS)) malformed(where, 'must be a date between -271821-04-20 and 275760-09-13');
}

function checkBinary(object: Record<string, unknown>, keys: string[], where: () => string): void {
  const binary = object['$binary'];
  let base64: unknown;
  let subType: unknown;
  if (typeof binary === 'string') {
    // Legacy `{ $binary: <base64>, $type: <hex> }`.
    if (!hasExactly(object, ['$binary', '$type'])) malformed(where, 'the legacy form has exactly the keys $binary and $type');
    [base64, subType] = [binary, object['$type']];
  } else {
    alone(keys, where);
    if (!hasExactly(binary, ['base64', 'subType'])) malformed(where, 'must be { "base64": <string>, "subType": <hex string> }');
    [base64, subType] = [binary['base64'], binary['subType']];
  }
  if (typeof base64 !== 'string' || !BASE64.test(base64)) malformed(where, 'base64 must be a base64 string');
  if (typeof subType !== 'string' || !SUBTYPE.test(subType)) malformed(where, 'subType must be one or two hexadecimal digits');
}

function checkCode(object: Record<string, unknown>, keys: string[], where: () => string): void {
  if (!(keys.length === 1 || hasExactly(object, ['$code', '$scope']))) malformed(where, 'may only have $scope beside it');
  if (typeof object['$code'] !== 'string') malformed(where, 'must be a string');
  const scope = object['$scope'];
  if (keys.length === 2 && (typeof scope !== 'object' || scope === null || Array.isArray(scope))) malformed(where, '$scope must be a document');
}

const UINT32 = (value: unknown): boolean => typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffffffff;

function checkTimestamp(object: Record<string, unknown>, keys: string[], where: () => string): void {
  alone(keys, where);
  const value = object['$timestamp'];
  if (!(hasExactly(value, ['t', 'i']) && UINT32(value['t']) && UINT32(value['i']))) malformed(where, 'must be { "t": <uint32>, "i": <uint32> }');
}

function checkRegularExpression(object: Record<string, unknown>, keys: string[], where: () => string): void {
  alone(keys, where);
  const value = object['$regularExpression'];
  if (!(hasExactly(value, ['pattern', 'options']) && typeof value['pattern'] === 'string' && typeof value['options'] === 'string')) malformed(where, 'must be { "pattern": <string>, "options": <string> }');
}

function checkKeyBound(object: Record<string, unknown>, keys: string[], where: () => string): void {
  alone(keys, where);
  if (object[keys[0]] !== 1) malformed(where, 'must be 1');
}

function checkUndefined(object: Record<string, unknown>, keys: string[], where: () => string): void {
  alone(keys, where);
  if (object['$undefined'] !== true) malformed(where, 'must be true');
}

function checkDbPointer(object: Record<string, unknown>, keys: string[], where: () => string): void {
  alone(keys, where);
  const value = object['$dbPointer'];
  if (!(hasExactly(value, ['$ref', '$id']) && typeof value['$ref'] === 'string' && hasExactly(value['$id'], ['$oid']))) malformed(where, 'must be { "$ref": <string>, "$id": { "$oid": <hex> } }');
}
