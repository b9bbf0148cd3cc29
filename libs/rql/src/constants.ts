/**
 * Decoding of realm-core's constant tokens into BSON values, with realm-core's quirks kept: integers are read
 * as strtoll(text, 0) reads them (a leading 0 is octal, 0x hexadecimal, out of range clamps), strings keep
 * their backslash escapes as written (realm-core does not decode them; the SDKs send any string with quotes
 * or control characters as B64"..."), and dates carry nanoseconds down to the millisecond a stored date has.
 */
import { Binary, Long, ObjectId, UUID } from 'bson';
import { syntaxError } from './errors';
import { type RqlScalar } from './ast';

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/** strtoll with base 0, as realm-core reads NATURAL0 and NUMBER tokens. */
export function parseInteger(text: string): bigint {
  const negative = text.startsWith('-');
  const body = text.replace(/^[+-]/, '');
  let magnitude: bigint;
  if (/^0[xX]/.test(body)) magnitude = BigInt(`0x${body.slice(2)}`);
  else if (body.startsWith('0')) magnitude = BigInt(`0o${/^[0-7]*/.exec(body)![0] || '0'}`);
  else magnitude = BigInt(body);
  const value = negative ? -magnitude : magnitude;
  return value > INT64_MAX ? INT64_MAX : value < INT64_MIN ? INT64_MIN : value;
}

export function integerValue(value: bigint): number | Long {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : Long.fromBigInt(value);
}

export function floatValue(text: string): number {
  const single = text.endsWith('f');
  const value = Number(single ? text.slice(0, -1) : text);
  return single ? Math.fround(value) : value;
}

const NS_PER_MS = 1_000_000n;

/** A Timestamp token (`T<s>:<ns>` or `YYYY-MM-DD@HH:MM:SS[:ns]`, `T` in place of `@` too). */
export function timestampValue(text: string, at: number): { date: Date; subMillisecond: boolean } {
  let seconds: bigint;
  let nanoseconds: bigint;
  if (text.startsWith('T')) {
    const [s, ns] = text.slice(1).split(':');
    seconds = parseInteger(s);
    nanoseconds = parseInteger(ns);
  } else {
    const parts = text.split(/[-@T:]/).map((part) => Number.parseInt(part, 10));
    const [year, month, day, hour, minute, second, nanos] = parts as [number, number, number, number, number, number, number | undefined];
    if (year < 1900) throw syntaxError('Conversion of dates before 1900 is not supported.', at);
    const date = new Date(0);
    date.setUTCFullYear(year, month - 1, day);
    date.setUTCHours(hour, minute, second, 0);
    seconds = BigInt(Math.floor(date.getTime() / 1000));
    nanoseconds = BigInt(nanos ?? 0);
    if (seconds < 0n) nanoseconds = -nanoseconds;
  }
  if ((seconds > 0n && nanoseconds < 0n) || (seconds < 0n && nanoseconds > 0n)) throw syntaxError('Invalid timestamp format', at);
  const total = seconds * 1_000_000_000n + nanoseconds;
  let ms = total / NS_PER_MS;
  if (total % NS_PER_MS !== 0n && total < 0n) ms -= 1n; // floor, not truncation
  const date = new Date(Number(ms));
  if (Number.isNaN(date.getTime())) throw syntaxError('timestamp out of range', at);
  return { date, subMillisecond: total % NS_PER_MS !== 0n };
}

/** A UUID as the plain Binary (subtype 4) a stored document holds, not bson's UUID subclass. */
export function uuidValue(text: string): Binary {
  return new UUID(text.slice(5, -1)).toBinary();
}

export function objectIdValue(text: string): ObjectId {
  return new ObjectId(text.slice(4, -1));
}

/** B64"..." (a string) or bin(B64"...") / bin("...") (binary data). */
export function base64Bytes(text: string, at: number): Buffer {
  const encoded = text.slice(4, -1);
  if (encoded.length % 4 === 1 || /=[^=]/.test(encoded)) throw syntaxError('Invalid base64 value', at);
  return Buffer.from(encoded, 'base64');
}

export function base64String(text: string, at: number): string {
  return base64Bytes(text, at).toString('utf8');
}

export function stringValue(text: string): string {
  return text.slice(1, -1);
}

export function binaryValue(bytes: Uint8Array): Binary {
  return new Binary(bytes, Binary.SUBTYPE_DEFAULT);
}

export function isScalarList(value: unknown): value is RqlScalar[] {
  return Array.isArray(value);
}
