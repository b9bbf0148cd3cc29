/**
 * Text and byte codecs for the isolate, which has no TextEncoder, atob or Buffer of its own: UTF-8 as the
 * WHATWG encoding does it, base64 (standard and URL alphabets), random bytes from the host.
 */

export function utf8Encode(s: string): Uint8Array {
  const buf = new Uint8Array(s.length * 3);
  let p = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      } else c = 0xfffd;
    } else if (c >= 0xdc00 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) buf[p++] = c;
    else if (c < 0x800) {
      buf[p++] = 0xc0 | (c >> 6);
      buf[p++] = 0x80 | (c & 63);
    } else if (c < 0x10000) {
      buf[p++] = 0xe0 | (c >> 12);
      buf[p++] = 0x80 | ((c >> 6) & 63);
      buf[p++] = 0x80 | (c & 63);
    } else {
      buf[p++] = 0xf0 | (c >> 18);
      buf[p++] = 0x80 | ((c >> 12) & 63);
      buf[p++] = 0x80 | ((c >> 6) & 63);
      buf[p++] = 0x80 | (c & 63);
    }
  }
  return buf.slice(0, p);
}

/** The WHATWG UTF-8 decoder: one U+FFFD per maximal invalid subsequence, as Node and browsers decode. */
export function utf8Decode(b: Uint8Array, fatal: boolean): string {
  let out = '';
  let chunk: number[] = [];
  let need = 0;
  let seen = 0;
  let cp = 0;
  let lower = 0x80;
  let upper = 0xbf;
  const bad = (): void => {
    if (fatal) throw new TypeError('The encoded data was not valid for encoding utf-8');
    chunk.push(0xfffd);
  };
  for (let i = 0; i < b.length; i++) {
    const byte = b[i];
    if (need === 0) {
      if (byte < 0x80) chunk.push(byte);
      else if (byte >= 0xc2 && byte <= 0xdf) {
        need = 1;
        cp = byte & 0x1f;
      } else if (byte >= 0xe0 && byte <= 0xef) {
        if (byte === 0xe0) lower = 0xa0;
        if (byte === 0xed) upper = 0x9f;
        need = 2;
        cp = byte & 0x0f;
      } else if (byte >= 0xf0 && byte <= 0xf4) {
        if (byte === 0xf0) lower = 0x90;
        if (byte === 0xf4) upper = 0x8f;
        need = 3;
        cp = byte & 0x07;
      } else bad();
    } else if (byte < lower || byte > upper) {
      need = seen = cp = 0;
      lower = 0x80;
      upper = 0xbf;
      bad();
      i--;
    } else {
      lower = 0x80;
      upper = 0xbf;
      cp = (cp << 6) | (byte & 0x3f);
      if (++seen === need) {
        chunk.push(cp);
        need = seen = cp = 0;
      }
    }
    if (chunk.length >= 8192) {
      out += String.fromCodePoint(...chunk);
      chunk = [];
    }
  }
  if (need !== 0) bad();
  return out + String.fromCodePoint(...chunk);
}

export const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
export const B64URL = B64.slice(0, 62) + '-_';
const B64_INDEX = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64_INDEX[B64.charCodeAt(i)] = i;
B64_INDEX['-'.charCodeAt(0)] = 62;
B64_INDEX['_'.charCodeAt(0)] = 63;

export function base64Encode(bytes: Uint8Array, alphabet: string, pad: boolean): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] + alphabet[(n >> 6) & 63] + alphabet[n & 63];
  }
  if (i < bytes.length) {
    const n = (bytes[i] << 16) | ((i + 1 < bytes.length ? bytes[i + 1] : 0) << 8);
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63];
    out += i + 1 < bytes.length ? alphabet[(n >> 6) & 63] : pad ? '=' : '';
    out += pad ? '=' : '';
  }
  return out;
}

/** Lenient, as Node's Buffer is: characters outside both alphabets are skipped, decoding stops at '='. */
export function base64Decode(s: string): Uint8Array {
  const out = new Uint8Array(Math.ceil((s.length * 3) / 4));
  let p = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    if (ch === 61) break;
    const v = ch < 128 ? B64_INDEX[ch] : -1;
    if (v < 0) continue;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[p++] = (acc >> bits) & 255;
    }
  }
  return out.slice(0, p);
}

export interface RandomSource {
  getRandomValues: <T extends ArrayBufferView>(array: T) => T;
  randomUUID: () => string;
}

/** crypto.getRandomValues and randomUUID over the host's random bytes (`randomHex`). */
export function randomSource(randomHex: (n: number) => string): RandomSource {
  function getRandomValues<T extends ArrayBufferView>(array: T): T {
    if (!ArrayBuffer.isView(array) || array instanceof DataView) throw new TypeError('getRandomValues expects an integer typed array');
    if (array.byteLength > 65536) throw new RangeError('getRandomValues: at most 65536 bytes at a time');
    const hex = randomHex(array.byteLength);
    const view = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    for (let i = 0; i < view.length; i++) view[i] = parseInt(hex.substr(i * 2, 2), 16);
    return array;
  }
  function randomUUID(): string {
    const b = getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = '';
    for (let i = 0; i < 16; i++) h += (b[i] < 16 ? '0' : '') + b[i].toString(16);
    return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
  }
  return { getRandomValues, randomUUID };
}
