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

export function fromEjsonText(text: string): unknown {
  return regexesToRegExp(bson().EJSON.parse(text), 0);
}
