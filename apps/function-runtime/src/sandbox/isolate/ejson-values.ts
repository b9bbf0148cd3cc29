/**
 * How values cross the isolate boundary: as canonical EJSON text, both ways. Buffers and typed arrays travel
 * as BSON Binary, as App Services stored and returned them (EJSON would otherwise write them as objects keyed
 * by index); a RegExp leaves as the BSON regex it stands for (bson's EJSON would refuse the flags g, y and d,
 * which have no meaning in a query or a stored value), with the very pattern it arrived with. Objects without
 * byte arrays are returned as they are. Values are read relaxed (numbers as JavaScript numbers), except an
 * Int64 no double holds exactly, which stays a Long.
 */
import { bson } from './bridge';

/**
 * The pattern of each BSON regex made a RegExp here: `source` escapes it (an empty pattern reads "(?:)", a
 * slash "\/"), so a regex a function passes on unchanged would otherwise not leave as it came.
 */
const arrivedAs = new WeakMap<RegExp, string>();

const TWO_TO_63 = 2 ** 63;

/**
 * An integer-valued number beyond 2^53 as bson's EJSON should write it: it writes Number#toString's digits
 * as the `$numberLong` ("1152921504606847000" for 2^60, another Int64 than the number), and 2^63 itself, which
 * no Int64 holds, as one too. The Long holds the number's exact value; 2^63 stays a double.
 */
function exactInteger(value: number): unknown {
  if (!Number.isInteger(value) || value > TWO_TO_63 || value < -TWO_TO_63) return value;
  const BSON = bson();
  return value === TWO_TO_63 ? new BSON.Double(value) : BSON.Long.fromNumber(value);
}

function bytesToBinary(value: unknown, depth: number): unknown {
  if (typeof value === 'number') return value > Number.MAX_SAFE_INTEGER || value < Number.MIN_SAFE_INTEGER ? exactInteger(value) : value;
  if (value === null || typeof value !== 'object') return value;
  const BSON = bson();
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return new BSON.Binary(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
  if (value instanceof ArrayBuffer) return new BSON.Binary(new Uint8Array(value));
  if (value instanceof RegExp) return new BSON.BSONRegExp(arrivedAs.get(value) ?? value.source, value.flags.replace(/[^imsu]/g, ''));
  if (depth > 200) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const converted = bytesToBinary(item, depth + 1);
      if (converted !== item) {
        out ??= value.slice();
        out[i] = converted;
      }
    }
    return out || value;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const record = value as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const key of Object.keys(record)) {
    const item = record[key];
    const converted = bytesToBinary(item, depth + 1);
    if (converted !== item) {
      out ??= Object.assign({}, record);
      out[key] = converted;
    }
  }
  return out || value;
}

export function toEjsonText(value: unknown): string {
  return bson().EJSON.stringify(bytesToBinary(value === undefined ? null : value, 0), { relaxed: false });
}

// Regex values reach a function as JavaScript RegExp objects; a BSON regex JavaScript cannot hold (the
// options x or l, PCRE-only syntax) stays a BSON.BSONRegExp. Only freshly parsed values come here.
function regexesToRegExp(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > 200) return value;
  const tagged = value as { _bsontype?: unknown; pattern?: string; options?: string };
  if (tagged._bsontype === 'BSONRegExp') {
    if (/^[imsu]*$/.test(String(tagged.options))) {
      try {
        const regExp = new RegExp(String(tagged.pattern), tagged.options);
        arrivedAs.set(regExp, String(tagged.pattern));
        return regExp;
      } catch {
        return value;
      }
    }
    return value;
  }
  if (tagged._bsontype !== undefined) return value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const item = record[key];
    const converted = regexesToRegExp(item, depth + 1);
    if (converted !== item) Object.defineProperty(record, key, { value: converted, enumerable: true, writable: true, configurable: true });
  }
  return value;
}

/** Deepest level the regex conversion reaches (and the fast walk below follows). */
const MAX_DEPTH = 200;

/**
 * What `regexesToRegExp(EJSON.parse(text), 0)` gives, without bson's reviver called for every value of the
 * text (20 documents a `find` hands to a function: about half the time). A value the reviver would keep as
 * it is (a string, number, boolean, null, or an object none of whose keys starts with `$`) is kept here
 * too; the wrappers every document holds (`$oid`, `$numberInt`, `$numberDouble` alone) are read as bson
 * reads them; any other object with a `$` key, or with a key bson refuses, goes to bson whole, and so does
 * anything below MAX_DEPTH. Reading an object does not depend on where it sits, so converting it alone gives
 * what converting the whole text gives.
 */
export function fromEjsonText(text: string): unknown {
  return relaxedValues(JSON.parse(text) as unknown, 0);
}

/**
 * An Int64 as a relaxed value: a number when a double holds it exactly, else the Long itself (bson's relaxed
 * reading gives the nearest double, so `exports = (n) => n` answered 9223372036854775807 as
 * 9223372036854776000, a `$numberLong` out of the Int64 range).
 */
function relaxedLong(long: InstanceType<ReturnType<typeof bson>['Long']>): unknown {
  return long.lessThanOrEqual(Number.MAX_SAFE_INTEGER) && long.greaterThanOrEqual(Number.MIN_SAFE_INTEGER) ? long.toNumber() : long;
}

/** `json`, just parsed (changed in place), as EJSON.parse would have revived it, with its regexes made RegExps. */
function relaxedValues(json: unknown, depth: number): unknown {
  if (json === null || typeof json !== 'object') return json;
  const BSON = bson();
  if (depth > MAX_DEPTH) return BSON.EJSON.deserialize(json, { relaxed: true });
  if (Array.isArray(json)) {
    for (let i = 0; i < json.length; i++) json[i] = relaxedValues(json[i], depth + 1);
    return json;
  }
  const object = json as Record<string, unknown>;
  const keys = Object.keys(object);
  if (keys.length === 1) {
    const only = object[keys[0]];
    if (typeof only === 'string') {
      if (keys[0] === '$oid') return new BSON.ObjectId(only);
      if (keys[0] === '$numberInt') return parseInt(only, 10);
      if (keys[0] === '$numberDouble') return parseFloat(only);
      if (keys[0] === '$numberLong') return relaxedLong(BSON.EJSON.deserialize(object, { relaxed: false }) as InstanceType<typeof BSON.Long>);
    }
  }
  for (const key of keys) {
    if (key.startsWith('$') || key.includes('\0')) return regexesToRegExp(BSON.EJSON.deserialize(object, { relaxed: true }), depth);
  }
  for (const key of keys) {
    const item = object[key];
    const value = relaxedValues(item, depth + 1);
    if (value === item) continue;
    if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
    else object[key] = value;
  }
  return object;
}
