/**
 * realm-core's changeset integer encoding: little-endian 7-bit groups with 0x80 as the continuation bit;
 * the last byte holds 6 value bits and 0x40 as the sign, and a negative v is stored as the magnitude
 * -(v+1). The reader is strict: it rejects overlong (non-canonical) encodings, out-of-range values and
 * premature ends, so that whatever it accepts re-encodes to the same bytes.
 */
import { SyncProtocolError } from '../errors';
import { utf8 } from '../bytes';
import type { Int64 } from './types';

const TWO_63 = 1n << 63n;

export function normalizeInt64(v: bigint): Int64 {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/** Integer kinds and their realm-core limits (bytes = ceil((1 + value bits) / 7)). */
export type IntKind = 'int64' | 'uint64' | 'uint32' | 'int32' | 'uint8';
const maxBytes: Record<IntKind, number> = { int64: 10, uint64: 10, uint32: 5, int32: 5, uint8: 2 };

function bad(message: string): never {
  throw new SyncProtocolError('bad_changeset', message);
}

export class Reader {
  pos = 0;
  constructor(readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  /** Reads an integer and returns it as a bigint-or-number (Int64). */
  int(kind: IntKind): Int64 {
    const bytes = this.bytes;
    const limit = maxBytes[kind];
    const start = this.pos;
    let n = 0;
    let prevGroup = 0;
    let final = -1;
    for (; n < limit; n++) {
      const b = bytes[start + n];
      if (b === undefined) bad('bad changeset - integer runs past the end');
      if ((b & 0x80) === 0) {
        final = b;
        n++;
        break;
      }
      prevGroup = b & 0x7f;
    }
    if (final < 0) bad('bad changeset - integer has too many bytes');
    if (n > 1 && (final & 0x3f) === 0 && prevGroup < 0x40) bad('bad changeset - overlong integer encoding');
    const negative = (final & 0x40) !== 0;
    let magnitude: number | bigint;
    if (n <= 7) {
      let m = 0;
      for (let i = 0; i < n - 1; i++) m += ((bytes[start + i] ?? 0) & 0x7f) * 2 ** (7 * i);
      m += (final & 0x3f) * 2 ** (7 * (n - 1));
      magnitude = m;
    } else {
      let m = 0n;
      for (let i = 0; i < n - 1; i++) m |= BigInt((bytes[start + i] ?? 0) & 0x7f) << BigInt(7 * i);
      m |= BigInt(final & 0x3f) << BigInt(7 * (n - 1));
      magnitude = m;
    }
    this.pos = start + n;
    if (typeof magnitude === 'number') {
      const value = negative ? -magnitude - 1 : magnitude;
      this.checkRange(kind, value);
      return value;
    }
    const value = negative ? -magnitude - 1n : magnitude;
    this.checkRange(kind, value);
    return normalizeInt64(value);
  }

  private checkRange(kind: IntKind, v: number | bigint): void {
    switch (kind) {
      case 'int64':
        if (v >= TWO_63 || v < -TWO_63) bad('bad changeset - integer out of range');
        return;
      case 'uint64':
        if (v < 0 || v >= 1n << 64n) bad('bad changeset - unsigned integer out of range');
        return;
      case 'uint32':
        if (v < 0 || v > 0xffffffff) bad('bad changeset - unsigned integer out of range');
        return;
      case 'int32':
        if (v < -0x80000000 || v > 0x7fffffff) bad('bad changeset - integer out of range');
        return;
      case 'uint8':
        if (v < 0 || v > 0xff) bad('bad changeset - unsigned integer out of range');
        return;
    }
  }

  /** A small non-negative integer that must fit in a JS number (sizes, indices). */
  smallUint(kind: 'uint32' | 'uint64' | 'uint8'): number {
    const v = this.int(kind);
    if (typeof v !== 'number') bad('bad changeset - size out of range');
    return v;
  }

  bool(): boolean {
    const v = this.int('uint8');
    if (v !== 0 && v !== 1) bad('bad changeset - boolean must be 0 or 1');
    return v === 1;
  }

  take(size: number): Uint8Array {
    if (size > this.bytes.length - this.pos) bad('bad changeset - truncated input');
    const out = this.bytes.subarray(this.pos, this.pos + size);
    this.pos += size;
    return out;
  }

  /** A BID128 coefficient: plain 7-bit groups, no sign bit, at most 17 bytes. */
  bid128(): bigint {
    let v = 0n;
    for (let i = 0; ; i++) {
      if (i >= 17) bad('bad changeset - decimal coefficient has too many bytes');
      const b = this.bytes[this.pos++];
      if (b === undefined) bad('bad changeset - decimal runs past the end');
      v |= BigInt(b & 0x7f) << BigInt(7 * i);
      if ((b & 0x80) === 0) {
        // Canonical: the encoder stops once fewer than 7 bits are left, so the last group is < 64 and nonzero after a continuation.
        if (b > 0x3f || (i > 0 && b === 0 && ((this.bytes[this.pos - 2] ?? 0) & 0x40) === 0)) bad('bad changeset - non-canonical decimal coefficient');
        if (v >> 128n !== 0n) bad('bad changeset - decimal coefficient out of range');
        return v;
      }
    }
  }
}

export class Writer {
  private buf = new Uint8Array(256);
  length = 0;

  private ensure(extra: number): void {
    if (this.length + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.length++] = b;
  }

  int(v: Int64): void {
    this.ensure(10);
    if (typeof v === 'number' && Number.isSafeInteger(v)) {
      const negative = v < 0;
      let m = negative ? -(v + 1) : v;
      while (m >= 64) {
        this.buf[this.length++] = 0x80 | (m % 128);
        m = Math.floor(m / 128);
      }
      this.buf[this.length++] = negative ? 0x40 | m : m;
      return;
    }
    let b = BigInt(v);
    const negative = b < 0n;
    if (negative) b = -(b + 1n);
    while (b >= 64n) {
      this.buf[this.length++] = 0x80 | Number(b & 0x7fn);
      b >>= 7n;
    }
    this.buf[this.length++] = negative ? 0x40 | Number(b) : Number(b);
  }

  bid128(v: bigint): void {
    this.ensure(19);
    let b = v;
    while (b >= 64n) {
      this.buf[this.length++] = 0x80 | Number(b & 0x7fn);
      b >>= 7n;
    }
    this.buf[this.length++] = Number(b);
  }

  bytes(data: Uint8Array): void {
    this.ensure(data.length);
    this.buf.set(data, this.length);
    this.length += data.length;
  }

  string(s: string): void {
    // ASCII strings are written directly; others go through the UTF-8 encoder.
    if (s.length < 64) {
      let ascii = true;
      for (let i = 0; i < s.length; i++) {
        if (s.charCodeAt(i) >= 0x80) {
          ascii = false;
          break;
        }
      }
      if (ascii) {
        this.int(s.length);
        this.ensure(s.length);
        for (let i = 0; i < s.length; i++) this.buf[this.length++] = s.charCodeAt(i);
        return;
      }
    }
    const data = utf8(s);
    this.int(data.length);
    this.bytes(data);
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}
