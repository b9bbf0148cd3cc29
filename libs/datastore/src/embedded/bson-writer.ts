/**
 * A BSON encoder for the write-ahead log's hot path: it writes the documents the embedded engine stores
 * (strings, numbers, Doubles, Longs, booleans, null, dates, ObjectIds, arrays and plain objects) straight
 * into the log's buffer, producing the same bytes as `BSON.serialize` from the bson package. It exists
 * because the general serializer was the largest single cost of a bulk insert (decision 0030): it
 * serializes into its own buffer and copies out, checks every key with a regular expression and tracks
 * visited objects in a Set per call. Any other value (Int32, Decimal128, Binary, RegExp, Timestamp, a Map, an object with
 * toBSON ...) makes it report failure, and the caller serializes that document with the bson package
 * instead, so the file format is plain BSON either way and is read back by the bson package alone.
 */
import { Double, Long, ObjectId } from 'bson';
import { type Document, hasOwn, isPlainObject } from '../bson/values';

const TYPE_DOUBLE = 0x01;
const TYPE_STRING = 0x02;
const TYPE_OBJECT = 0x03;
const TYPE_ARRAY = 0x04;
const TYPE_OID = 0x07;
const TYPE_BOOLEAN = 0x08;
const TYPE_DATE = 0x09;
const TYPE_NULL = 0x0a;
const TYPE_INT32 = 0x10;
const TYPE_INT64 = 0x12;
const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;
const TWO_32 = 0x1_0000_0000;
/** Nesting beyond this goes to the bson package, which reports cycles properly. */
const MAX_DEPTH = 100;

/** Array element keys, made once. */
const INDEX_KEYS = Array.from({ length: 1024 }, (_, i) => String(i));

/** Thrown inside the writer when a value is not one it handles; never escapes encodeDocument. */
const UNSUPPORTED = new Error('unsupported value');

/** Capacity management of the buffer written into (the log's RecordBuffer). */
export interface ByteTarget {
  bytes: Buffer;
  /** Makes room for `extra` more bytes after `used`; may replace `bytes`. */
  ensure(used: number, extra: number): void;
}

class Writer {
  buf: Buffer;
  pos: number;

  constructor(
    private readonly target: ByteTarget,
    start: number,
  ) {
    this.buf = target.bytes;
    this.pos = start;
  }

  private room(extra: number): void {
    if (this.pos + extra > this.buf.length) {
      this.target.ensure(this.pos, extra);
      this.buf = this.target.bytes;
    }
  }

  private int32(value: number): void {
    this.room(4);
    const buf = this.buf;
    const pos = this.pos;
    buf[pos] = value;
    buf[pos + 1] = value >>> 8;
    buf[pos + 2] = value >>> 16;
    buf[pos + 3] = value >>> 24;
    this.pos = pos + 4;
  }

  /** A key as a C string (type byte already written): ASCII by hand, anything else by Buffer. */
  private key(key: string): void {
    const n = key.length;
    this.room(n * 3 + 1);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      const c = key.charCodeAt(i);
      if (c === 0) throw UNSUPPORTED; // bson rejects it, with its own message
      if (c >= 0x80) {
        if (key.includes('\0')) throw UNSUPPORTED;
        this.pos += buf.write(key, this.pos, 'utf8');
        buf[this.pos++] = 0;
        return;
      }
      buf[pos++] = c;
    }
    buf[pos++] = 0;
    this.pos = pos;
  }

  private string(value: string): void {
    const n = value.length;
    this.room(n * 3 + 5);
    const buf = this.buf;
    const start = this.pos + 4;
    let size: number;
    if (n <= 24) {
      let pos = start;
      for (let i = 0; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) {
          pos = -1;
          break;
        }
        buf[pos++] = c;
      }
      size = pos < 0 ? buf.write(value, start, 'utf8') : n;
    } else {
      size = buf.write(value, start, 'utf8');
    }
    this.int32(size + 1);
    buf[start + size] = 0;
    this.pos = start + size + 1;
  }

  private element(key: string, value: unknown, depth: number): void {
    switch (typeof value) {
      case 'string':
        this.room(1);
        this.buf[this.pos++] = TYPE_STRING;
        this.key(key);
        this.string(value);
        return;
      case 'number':
        this.room(1);
        if (Number.isSafeInteger(value) && value >= INT32_MIN && value <= INT32_MAX && !Object.is(value, -0)) {
          this.buf[this.pos++] = TYPE_INT32;
          this.key(key);
          this.int32(value);
        } else {
          this.buf[this.pos++] = TYPE_DOUBLE;
          this.key(key);
          this.room(8);
          this.buf.writeDoubleLE(value, this.pos);
          this.pos += 8;
        }
        return;
      case 'boolean':
        this.room(1);
        this.buf[this.pos++] = TYPE_BOOLEAN;
        this.key(key);
        this.room(1);
        this.buf[this.pos++] = value ? 1 : 0;
        return;
      case 'object':
        break;
      case 'undefined':
        // Skipped in documents (ignoreUndefined); arrays never reach here with undefined (see document).
        return;
      case 'bigint':
      case 'function':
      case 'symbol':
        throw UNSUPPORTED;
    }
    if (value === null) {
      this.room(1);
      this.buf[this.pos++] = TYPE_NULL;
      this.key(key);
      return;
    }
    const tag = (value as { _bsontype?: unknown })._bsontype;
    if (tag === undefined || tag === null) {
      if (value instanceof Date) {
        const ms = value.getTime();
        // bson goes through Long for dates; negative and invalid ones are left to it.
        if (!(ms >= 0)) throw UNSUPPORTED;
        this.room(1);
        this.buf[this.pos++] = TYPE_DATE;
        this.key(key);
        this.room(8);
        this.int32(ms % TWO_32 | 0);
        this.int32((ms / TWO_32) | 0);
        return;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      const isArray = Array.isArray(value);
      if (!isArray && proto !== Object.prototype && proto !== null) throw UNSUPPORTED;
      if (typeof (value as { toBSON?: unknown }).toBSON === 'function') throw UNSUPPORTED;
      this.room(1);
      this.buf[this.pos++] = isArray ? TYPE_ARRAY : TYPE_OBJECT;
      this.key(key);
      this.document(value as Document, depth + 1);
      return;
    }
    if (value instanceof Double) {
      // A stored Double holds an integer in int32 range (other doubles are JS numbers).
      this.room(1);
      this.buf[this.pos++] = TYPE_DOUBLE;
      this.key(key);
      this.room(8);
      this.buf.writeDoubleLE(value.value, this.pos);
      this.pos += 8;
      return;
    }
    if (value instanceof Long) {
      this.room(1);
      this.buf[this.pos++] = TYPE_INT64;
      this.key(key);
      this.room(8);
      this.int32(value.low);
      this.int32(value.high);
      return;
    }
    if (value instanceof ObjectId) {
      const id = value.id;
      if (id.length !== 12) throw UNSUPPORTED;
      this.room(1);
      this.buf[this.pos++] = TYPE_OID;
      this.key(key);
      this.room(12);
      this.buf.set(id, this.pos);
      this.pos += 12;
      return;
    }
    throw UNSUPPORTED;
  }

  /** A document or array: [size i32][elements][0]. */
  document(doc: Document | unknown[], depth: number): void {
    if (depth > MAX_DEPTH) throw UNSUPPORTED;
    this.room(4);
    const start = this.pos;
    this.pos += 4;
    if (Array.isArray(doc)) {
      for (let i = 0; i < doc.length; i++) {
        const item: unknown = doc[i];
        if (item === undefined) {
          // bson writes a missing array element as null whatever ignoreUndefined says.
          this.room(1);
          this.buf[this.pos++] = TYPE_NULL;
          this.key(i < INDEX_KEYS.length ? INDEX_KEYS[i] : String(i));
        } else {
          this.element(i < INDEX_KEYS.length ? INDEX_KEYS[i] : String(i), item, depth);
        }
      }
    } else {
      // for-in over own keys is Object.keys' order without allocating the key array.
      for (const key in doc) if (hasOwn(doc, key)) this.element(key, doc[key], depth);
    }
    this.room(1);
    this.buf[this.pos++] = 0;
    const end = this.pos;
    this.pos = start;
    this.int32(end - start);
    this.pos = end;
  }
}

/**
 * Writes `doc` as BSON at `start` of the target's buffer. Returns the end offset, or -1 when the
 * document holds a value this writer leaves to the bson package (the bytes after `start` are then
 * garbage, to be overwritten).
 */
export function encodeDocument(target: ByteTarget, start: number, doc: Document): number {
  if (!isPlainObject(doc) || typeof doc.toBSON === 'function') return -1;
  const writer = new Writer(target, start);
  try {
    writer.document(doc, 0);
  } catch (error) {
    if (error === UNSUPPORTED) return -1;
    throw error;
  }
  return writer.pos;
}
