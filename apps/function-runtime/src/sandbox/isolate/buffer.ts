/** The common part of Node's Buffer, for functions that use it (require('buffer') or the global). */
import { bson } from './bridge';
import { B64, B64URL, base64Decode, base64Encode, utf8Decode, utf8Encode } from './codec';

type Encoding = 'utf8' | 'hex' | 'base64' | 'base64url' | 'latin1' | 'ascii' | 'utf16le';

function normalizeEncoding(encoding: unknown): Encoding {
  const e = encoding === undefined || encoding === null ? 'utf8' : String(encoding).toLowerCase();
  switch (e) {
    case 'utf8':
    case 'utf-8':
      return 'utf8';
    case 'hex':
      return 'hex';
    case 'base64':
      return 'base64';
    case 'base64url':
      return 'base64url';
    case 'latin1':
    case 'binary':
      return 'latin1';
    case 'ascii':
      return 'ascii';
    case 'ucs2':
    case 'ucs-2':
    case 'utf16le':
    case 'utf-16le':
      return 'utf16le';
    default:
      throw new TypeError('Unknown encoding: ' + String(encoding));
  }
}

function bytesFromString(s: string, encoding: unknown): Uint8Array {
  switch (normalizeEncoding(encoding)) {
    case 'utf8':
      return utf8Encode(s);
    case 'hex': {
      const out = new Uint8Array(s.length >> 1);
      let n = 0;
      for (; n < out.length; n++) {
        const byte = parseInt(s.substr(n * 2, 2), 16);
        if (Number.isNaN(byte) || !/^[0-9a-fA-F]{2}$/.test(s.substr(n * 2, 2))) break;
        out[n] = byte;
      }
      return out.slice(0, n);
    }
    case 'base64':
    case 'base64url':
      return base64Decode(s);
    case 'latin1':
    case 'ascii': {
      const out = new Uint8Array(s.length);
      for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 255;
      return out;
    }
    case 'utf16le': {
      const out = new Uint8Array(s.length * 2);
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        out[i * 2] = c & 255;
        out[i * 2 + 1] = c >> 8;
      }
      return out;
    }
  }
}

function stringFromBytes(bytes: Uint8Array, encoding: unknown): string {
  const normalized = normalizeEncoding(encoding);
  switch (normalized) {
    case 'utf8':
      return utf8Decode(bytes, false);
    case 'hex': {
      let out = '';
      for (let i = 0; i < bytes.length; i++) out += (bytes[i] < 16 ? '0' : '') + bytes[i].toString(16);
      return out;
    }
    case 'base64':
      return base64Encode(bytes, B64, true);
    case 'base64url':
      return base64Encode(bytes, B64URL, false);
    case 'latin1':
    case 'ascii': {
      const mask = normalized === 'ascii' ? 127 : 255;
      let out = '';
      for (let i = 0; i < bytes.length; i += 8192) {
        out += String.fromCharCode(...Array.from(bytes.subarray(i, i + 8192), (b) => b & mask));
      }
      return out;
    }
    case 'utf16le': {
      let out = '';
      for (let i = 0; i + 1 < bytes.length; i += 2) out += String.fromCharCode(bytes[i] | (bytes[i + 1] << 8));
      return out;
    }
  }
}

export class Buffer extends Uint8Array {
  static override from(value: unknown, encodingOrOffset?: unknown, length?: unknown): Buffer {
    if (typeof value === 'string') {
      const bytes = bytesFromString(value, encodingOrOffset);
      const out = new Buffer(bytes.length);
      out.set(bytes);
      return out;
    }
    if (value instanceof ArrayBuffer) {
      const offset = encodingOrOffset === undefined ? 0 : Number(encodingOrOffset);
      return new Buffer(value, offset, length === undefined ? value.byteLength - offset : Number(length));
    }
    if (ArrayBuffer.isView(value)) {
      const out = new Buffer(value.byteLength);
      out.set(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      return out;
    }
    if (value instanceof bson().Binary) return Buffer.from(value.buffer);
    const like = value as { type?: unknown; data?: unknown; length?: unknown } | null | undefined;
    if (like && like.type === 'Buffer' && Array.isArray(like.data)) return Buffer.from(like.data);
    if (like && typeof like === 'object' && typeof like.length === 'number') {
      const items = like as ArrayLike<unknown>;
      const out = new Buffer(items.length);
      for (let i = 0; i < out.length; i++) out[i] = Number(items[i]) & 255;
      return out;
    }
    throw new TypeError('The first argument must be of type string, Buffer, ArrayBuffer, Array or an array-like object');
  }
  static alloc(size: number, fill?: number | string, encoding?: string): Buffer {
    const out = new Buffer(size);
    if (fill !== undefined && fill !== 0) out.fill(fill, 0, out.length, encoding);
    return out;
  }
  static allocUnsafe(size: number): Buffer {
    return new Buffer(size);
  }
  static isBuffer(value: unknown): boolean {
    return value instanceof Buffer;
  }
  static isEncoding(encoding: unknown): boolean {
    try {
      normalizeEncoding(encoding);
      return typeof encoding === 'string';
    } catch {
      return false;
    }
  }
  static byteLength(value: string | ArrayBufferView | ArrayBuffer, encoding?: string): number {
    if (typeof value === 'string') return bytesFromString(value, encoding).length;
    return value.byteLength;
  }
  static concat(list: readonly Uint8Array[], totalLength?: number): Buffer {
    const total = totalLength === undefined ? list.reduce((n, b) => n + b.length, 0) : totalLength;
    const out = Buffer.alloc(total);
    let offset = 0;
    for (const item of list) {
      if (offset >= total) break;
      const bytes = item.length > total - offset ? item.subarray(0, total - offset) : item;
      out.set(bytes, offset);
      offset += bytes.length;
    }
    return out;
  }
  static compare(a: Uint8Array, b: Uint8Array): number {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  override fill(value: number | string, start?: number | string, end?: number, encoding?: string): this {
    if (typeof start === 'string') {
      encoding = start;
      start = 0;
      end = this.length;
    }
    if (typeof value === 'string') {
      const bytes = bytesFromString(value, encoding);
      const from = start === undefined ? 0 : start;
      const to = end === undefined ? this.length : end;
      if (bytes.length === 0) return super.fill(0, from, to);
      for (let i = from, k = 0; i < to; i++, k = (k + 1) % bytes.length) this[i] = bytes[k];
      return this;
    }
    return super.fill(value, start, end);
  }
  override toString(encoding?: string, start?: number, end?: number): string {
    const view = start === undefined && end === undefined ? this : this.subarray(start || 0, end === undefined ? this.length : end);
    return stringFromBytes(view, encoding);
  }
  toJSON(): { type: 'Buffer'; data: number[] } {
    return { type: 'Buffer', data: Array.from(this) };
  }
  equals(other: Uint8Array): boolean {
    return Buffer.compare(this, other) === 0;
  }
  compare(other: Uint8Array): number {
    return Buffer.compare(this, other);
  }
  // Node's Buffer#slice shares memory, unlike Uint8Array#slice.
  override slice(start?: number, end?: number): Uint8Array<ArrayBuffer> {
    return this.subarray(start, end);
  }
  write(string: unknown, offset?: number | string, length?: number | string, encoding?: string): number {
    if (typeof offset === 'string') {
      encoding = offset;
      offset = 0;
      length = undefined;
    } else if (typeof length === 'string') {
      encoding = length;
      length = undefined;
    }
    const at = offset || 0;
    const bytes = bytesFromString(String(string), encoding);
    const n = Math.min(bytes.length, this.length - at, length === undefined ? Infinity : length);
    this.set(bytes.subarray(0, n), at);
    return n;
  }
  readUInt8(offset?: number): number {
    return this[offset || 0];
  }
  readUInt16BE(offset?: number): number {
    const o = offset || 0;
    return (this[o] << 8) | this[o + 1];
  }
  readUInt32BE(offset?: number): number {
    const o = offset || 0;
    return ((this[o] << 24) >>> 0) + ((this[o + 1] << 16) | (this[o + 2] << 8) | this[o + 3]);
  }
  readUInt32LE(offset?: number): number {
    const o = offset || 0;
    return ((this[o + 3] << 24) >>> 0) + ((this[o + 2] << 16) | (this[o + 1] << 8) | this[o]);
  }
}

/** Bytes of a string (in `encoding`), a BSON Binary, an ArrayBuffer or a view, as a Buffer. */
export function toBuffer(data: unknown, encoding?: string): Buffer {
  if (typeof data === 'string') return Buffer.from(data, encoding);
  if (data instanceof bson().Binary) return Buffer.from(data.buffer);
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return Buffer.from(data);
  throw new TypeError('The "data" argument must be a string, Buffer, TypedArray or DataView');
}
