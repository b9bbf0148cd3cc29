/**
 * How values cross the isolate boundary: as canonical EJSON text, both ways. Buffers and typed arrays travel
 * as BSON Binary, as App Services stored and returned them (EJSON would otherwise write them as objects keyed
 * by index); a RegExp leaves as the BSON regex it stands for (bson's EJSON would refuse the flags g, y and d,
 * which have no meaning in a query or a stored value). Objects without byte arrays are returned as they are.
 */
import { bson } from './bridge';

function bytesToBinary(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  const BSON = bson();
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return new BSON.Binary(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
  if (value instanceof ArrayBuffer) return new BSON.Binary(new Uint8Array(value));
  if (value instanceof RegExp) return new BSON.BSONRegExp(value.source, value.flags.replace(/[^imsu]/g, ''));
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
        return new RegExp(String(tagged.pattern), tagged.options);
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
