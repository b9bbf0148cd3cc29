/** Small byte helpers shared by the wire codec and the changeset codec. */
import { SyncProtocolError, type SyncProtocolErrorKind } from './errors';

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function utf8(text: string): Uint8Array {
  return utf8Encoder.encode(text);
}

export function fromUtf8(bytes: Uint8Array, kind: SyncProtocolErrorKind, what: string): string {
  // Short ASCII strings (names, keys) are the common case and decode faster by hand.
  if (bytes.length <= 64) {
    let ascii = true;
    for (let i = 0; i < bytes.length; i++) {
      if ((bytes[i] ?? 0) >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return String.fromCharCode(...bytes);
  }
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    throw new SyncProtocolError(kind, `${what} is not valid UTF-8`);
  }
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const hexByte = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += hexByte[bytes[i] ?? 0] ?? '';
  return s;
}

/** The value of one hex digit's character code, or -1. */
export function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  return -1;
}

export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new SyncProtocolError('bad_syntax', `bad hex string`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}
