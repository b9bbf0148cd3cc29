// JavaScript that runs INSIDE the sandbox isolate, kept as text because it is evaluated there and never
// imported by the host. Plain ES2022 without backticks or dollar-brace (each script lives in String.raw).

/** Web globals the bson bundle needs (TextEncoder/TextDecoder, atob/btoa, crypto.getRandomValues). */
export const POLYFILLS_SCRIPT = String.raw`// Runs first in every sandbox context, before the bson bundle: the web globals the bundle expects and a
// bare V8 context lacks (TextEncoder/TextDecoder, atob/btoa, crypto.getRandomValues).
(function () {
  'use strict';
  const g = globalThis;
  const randomHex = g.__tessera_randomHex;

  function utf8Encode(s) {
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

  // The WHATWG UTF-8 decoder: one U+FFFD per maximal invalid subsequence, as Node and browsers decode.
  function utf8Decode(b, fatal) {
    let out = '';
    let chunk = [];
    let need = 0;
    let seen = 0;
    let cp = 0;
    let lower = 0x80;
    let upper = 0xbf;
    const bad = () => {
      if (fatal) throw new TypeError('The encoded data was not valid for encoding utf-8');
      chunk.push(0xfffd);
    };
    for (let i = 0; i < b.length; i++) {
      const byte = b[i];
      if (need === 0) {
        if (byte < 0x80) chunk.push(byte);
        else if (byte >= 0xc2 && byte <= 0xdf) { need = 1; cp = byte & 0x1f; }
        else if (byte >= 0xe0 && byte <= 0xef) {
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
        out += String.fromCodePoint.apply(null, chunk);
        chunk = [];
      }
    }
    if (need !== 0) bad();
    return out + String.fromCodePoint.apply(null, chunk);
  }

  function toBytes(input) {
    if (input === undefined || input === null) return new Uint8Array(0);
    if (input instanceof ArrayBuffer) return new Uint8Array(input);
    if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    throw new TypeError('The "input" argument must be an ArrayBuffer or ArrayBufferView');
  }

  class TextEncoder {
    get encoding() { return 'utf-8'; }
    encode(input) { return utf8Encode(input === undefined ? '' : String(input)); }
  }
  class TextDecoder {
    constructor(label, options) {
      const l = label === undefined ? 'utf-8' : String(label).toLowerCase();
      if (l !== 'utf-8' && l !== 'utf8') throw new RangeError('only utf-8 is supported by TextDecoder here');
      this.fatal = Boolean(options && options.fatal);
    }
    get encoding() { return 'utf-8'; }
    decode(input) { return utf8Decode(toBytes(input), this.fatal); }
  }

  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const B64_INDEX = new Int16Array(128).fill(-1);
  for (let i = 0; i < 64; i++) B64_INDEX[B64.charCodeAt(i)] = i;
  B64_INDEX['-'.charCodeAt(0)] = 62;
  B64_INDEX['_'.charCodeAt(0)] = 63;

  function base64Encode(bytes, alphabet, pad) {
    let out = '';
    let i = 0;
    for (; i + 2 < bytes.length; i += 3) {
      const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] + alphabet[(n >> 6) & 63] + alphabet[n & 63];
    }
    if (i < bytes.length) {
      const n = (bytes[i] << 16) | ((i + 1 < bytes.length ? bytes[i + 1] : 0) << 8);
      out += alphabet[n >> 18] + alphabet[(n >> 12) & 63];
      out += i + 1 < bytes.length ? alphabet[(n >> 6) & 63] : (pad ? '=' : '');
      out += pad ? '=' : '';
    }
    return out;
  }
  // Lenient, as Node's Buffer is: characters outside both alphabets are skipped, decoding stops at '='.
  function base64Decode(s) {
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

  function btoa(data) {
    const s = String(data);
    const bytes = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c > 255) throw new Error('Invalid character');
      bytes[i] = c;
    }
    return base64Encode(bytes, B64, true);
  }
  function atob(data) {
    const bytes = base64Decode(String(data).replace(/[\t\n\f\r ]/g, ''));
    let out = '';
    for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    return out;
  }

  function getRandomValues(array) {
    if (!ArrayBuffer.isView(array) || array instanceof DataView) throw new TypeError('getRandomValues expects an integer typed array');
    if (array.byteLength > 65536) throw new RangeError('getRandomValues: at most 65536 bytes at a time');
    const hex = randomHex(array.byteLength);
    const view = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    for (let i = 0; i < view.length; i++) view[i] = parseInt(hex.substr(i * 2, 2), 16);
    return array;
  }
  function randomUUID() {
    const b = getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = '';
    for (let i = 0; i < 16; i++) h += (b[i] < 16 ? '0' : '') + b[i].toString(16);
    return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
  }

  const define = (name, value) => Object.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
  define('TextEncoder', TextEncoder);
  define('TextDecoder', TextDecoder);
  define('atob', atob);
  define('btoa', btoa);
  define('crypto', { getRandomValues, randomUUID });
  // Shared with the prelude that runs after the bson bundle; the prelude removes it from the global object.
  define('__tessera_codec', { utf8Encode, utf8Decode, base64Encode, base64Decode, B64, getRandomValues, randomUUID });
})();
`;

/** Buffer, URL, require, context, console, timers, the run/resolve entry points and the hardening. */
export const PRELUDE_SCRIPT = String.raw`// The sandbox side of the function runtime. Runs once per sandbox context, after the polyfills and the
// bson bundle. It builds Buffer, URL, the require allow-list, "context", and the entry points the host calls
// (run, resolve); it then hardens the context (frozen intrinsics, fixed globals) so one call cannot leave
// state behind for the next. Nothing here may hold a host object: the host hands over only string-in,
// string-out callbacks, captured below and removed from the global object.
(function () {
  'use strict';
  const g = globalThis;
  const hostStart = g.__tessera_hostStart;
  const hostHash = g.__tessera_hash;
  const hostUrl = g.__tessera_url;
  const boot = JSON.parse(g.__tessera_boot);
  const codec = g.__tessera_codec;
  for (const name of ['__tessera_hostStart', '__tessera_hash', '__tessera_url', '__tessera_boot', '__tessera_codec', '__tessera_randomHex']) delete g[name];
  const BSON = g.BSON;
  const EJSON = BSON.EJSON;
  const { utf8Encode, utf8Decode, base64Encode, base64Decode, B64 } = codec;
  const B64URL = B64.slice(0, 62) + '-_';

  // ---------------------------------------------------------------- Buffer (the common part of Node's)
  function normalizeEncoding(encoding) {
    const e = encoding === undefined || encoding === null ? 'utf8' : String(encoding).toLowerCase();
    switch (e) {
      case 'utf8': case 'utf-8': return 'utf8';
      case 'hex': return 'hex';
      case 'base64': return 'base64';
      case 'base64url': return 'base64url';
      case 'latin1': case 'binary': return 'latin1';
      case 'ascii': return 'ascii';
      case 'ucs2': case 'ucs-2': case 'utf16le': case 'utf-16le': return 'utf16le';
      default: throw new TypeError('Unknown encoding: ' + encoding);
    }
  }
  function bytesFromString(s, encoding) {
    switch (normalizeEncoding(encoding)) {
      case 'utf8': return utf8Encode(s);
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
      case 'base64': case 'base64url': return base64Decode(s);
      case 'latin1': case 'ascii': {
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
  function stringFromBytes(bytes, encoding) {
    switch (normalizeEncoding(encoding)) {
      case 'utf8': return utf8Decode(bytes, false);
      case 'hex': {
        let out = '';
        for (let i = 0; i < bytes.length; i++) out += (bytes[i] < 16 ? '0' : '') + bytes[i].toString(16);
        return out;
      }
      case 'base64': return base64Encode(bytes, B64, true);
      case 'base64url': return base64Encode(bytes, B64URL, false);
      case 'latin1': case 'ascii': {
        const mask = normalizeEncoding(encoding) === 'ascii' ? 127 : 255;
        let out = '';
        for (let i = 0; i < bytes.length; i += 8192) {
          out += String.fromCharCode.apply(null, Array.from(bytes.subarray(i, i + 8192), (b) => b & mask));
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

  class Buffer extends Uint8Array {
    static from(value, encodingOrOffset, length) {
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
      if (value instanceof BSON.Binary) return Buffer.from(value.buffer);
      if (value && value.type === 'Buffer' && Array.isArray(value.data)) return Buffer.from(value.data);
      if (value && typeof value === 'object' && typeof value.length === 'number') {
        const out = new Buffer(value.length);
        for (let i = 0; i < out.length; i++) out[i] = Number(value[i]) & 255;
        return out;
      }
      throw new TypeError('The first argument must be of type string, Buffer, ArrayBuffer, Array or an array-like object');
    }
    static alloc(size, fill, encoding) {
      const out = new Buffer(size);
      if (fill !== undefined && fill !== 0) out.fill(fill, 0, out.length, encoding);
      return out;
    }
    static allocUnsafe(size) { return new Buffer(size); }
    static isBuffer(value) { return value instanceof Buffer; }
    static isEncoding(encoding) {
      try { normalizeEncoding(encoding); return typeof encoding === 'string'; } catch { return false; }
    }
    static byteLength(value, encoding) {
      if (typeof value === 'string') return bytesFromString(value, encoding).length;
      return value.byteLength;
    }
    static concat(list, totalLength) {
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
    static compare(a, b) {
      const n = Math.min(a.length, b.length);
      for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
      return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
    }
    fill(value, start, end, encoding) {
      if (typeof start === 'string') { encoding = start; start = 0; end = this.length; }
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
    toString(encoding, start, end) {
      const view = start === undefined && end === undefined ? this : this.subarray(start || 0, end === undefined ? this.length : end);
      return stringFromBytes(view, encoding);
    }
    toJSON() { return { type: 'Buffer', data: Array.from(this) }; }
    equals(other) { return Buffer.compare(this, other) === 0; }
    compare(other) { return Buffer.compare(this, other); }
    slice(start, end) { return this.subarray(start, end); }
    write(string, offset, length, encoding) {
      if (typeof offset === 'string') { encoding = offset; offset = 0; length = undefined; }
      else if (typeof length === 'string') { encoding = length; length = undefined; }
      const at = offset || 0;
      const bytes = bytesFromString(String(string), encoding);
      const n = Math.min(bytes.length, this.length - at, length === undefined ? Infinity : length);
      this.set(bytes.subarray(0, n), at);
      return n;
    }
    readUInt8(offset) { return this[offset || 0]; }
    readUInt16BE(offset) { const o = offset || 0; return (this[o] << 8) | this[o + 1]; }
    readUInt32BE(offset) { const o = offset || 0; return ((this[o] << 24) >>> 0) + ((this[o + 1] << 16) | (this[o + 2] << 8) | this[o + 3]); }
    readUInt32LE(offset) { const o = offset || 0; return ((this[o + 3] << 24) >>> 0) + ((this[o + 2] << 16) | (this[o + 1] << 8) | this[o]); }
  }

  function toBuffer(data, encoding) {
    if (typeof data === 'string') return Buffer.from(data, encoding);
    if (data instanceof BSON.Binary) return Buffer.from(data.buffer);
    if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return Buffer.from(data);
    throw new TypeError('The "data" argument must be a string, Buffer, TypedArray or DataView');
  }

  // ---------------------------------------------------------------- crypto (hashing runs on the host)
  const HASH_ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'];
  function makeHash(algorithm, key) {
    const alg = String(algorithm).toLowerCase().replace(/^sha-/, 'sha');
    if (!HASH_ALGORITHMS.includes(alg)) throw new Error('Digest method not supported: ' + algorithm + ' (supported: ' + HASH_ALGORITHMS.join(', ') + ')');
    const chunks = [];
    let done = false;
    return {
      update(data, encoding) {
        if (done) throw new Error('Digest already called');
        chunks.push(toBuffer(data, encoding));
        return this;
      },
      digest(encoding) {
        if (done) throw new Error('Digest already called');
        done = true;
        const out = Buffer.from(hostHash(alg, Buffer.concat(chunks).toString('base64'), key === null ? '' : key.toString('base64')), 'base64');
        return encoding === undefined || encoding === 'buffer' ? out : out.toString(encoding);
      },
    };
  }
  const cryptoModule = {
    createHash: (algorithm) => makeHash(algorithm, null),
    createHmac: (algorithm, key) => makeHash(algorithm, toBuffer(key)),
    randomBytes: (size) => {
      const n = Number(size);
      if (!(n >= 0 && n <= 65536)) throw new RangeError('randomBytes: size must be between 0 and 65536');
      return Buffer.from(codec.getRandomValues(new Uint8Array(n)));
    },
    randomUUID: () => codec.randomUUID(),
    getRandomValues: (array) => codec.getRandomValues(array),
    getHashes: () => HASH_ALGORITHMS.slice(),
  };

  // ---------------------------------------------------------------- URL (parsing runs on the host)
  function formEncode(s) {
    return encodeURIComponent(s).replace(/%20/g, '+').replace(/[!'()~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  }
  function formDecode(s) {
    try { return decodeURIComponent(s.replace(/\+/g, ' ')); } catch { return s; }
  }
  const searchParamsOwner = new WeakMap();
  class URLSearchParams {
    constructor(init) {
      this._list = [];
      if (init === undefined || init === null) return;
      if (typeof init === 'string') {
        const s = init[0] === '?' ? init.slice(1) : init;
        for (const part of s.split('&')) {
          if (part === '') continue;
          const eq = part.indexOf('=');
          this._list.push(eq < 0 ? [formDecode(part), ''] : [formDecode(part.slice(0, eq)), formDecode(part.slice(eq + 1))]);
        }
      } else if (typeof init[Symbol.iterator] === 'function') {
        for (const pair of init) this._list.push([String(pair[0]), String(pair[1])]);
      } else {
        for (const key of Object.keys(init)) this._list.push([key, String(init[key])]);
      }
    }
    _changed() {
      const url = searchParamsOwner.get(this);
      if (url) url._setSearchFromParams(this.toString());
    }
    get size() { return this._list.length; }
    append(name, value) { this._list.push([String(name), String(value)]); this._changed(); }
    delete(name) { this._list = this._list.filter((p) => p[0] !== String(name)); this._changed(); }
    get(name) { const p = this._list.find((q) => q[0] === String(name)); return p ? p[1] : null; }
    getAll(name) { return this._list.filter((p) => p[0] === String(name)).map((p) => p[1]); }
    has(name) { return this._list.some((p) => p[0] === String(name)); }
    set(name, value) {
      const n = String(name);
      const i = this._list.findIndex((p) => p[0] === n);
      if (i < 0) this._list.push([n, String(value)]);
      else this._list = this._list.filter((p, k) => k <= i || p[0] !== n).map((p, k) => (k === i ? [n, String(value)] : p));
      this._changed();
    }
    sort() { this._list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)); this._changed(); }
    forEach(fn, thisArg) { for (const [k, v] of this._list) fn.call(thisArg, v, k, this); }
    keys() { return this._list.map((p) => p[0])[Symbol.iterator](); }
    values() { return this._list.map((p) => p[1])[Symbol.iterator](); }
    entries() { return this._list.map((p) => [p[0], p[1]])[Symbol.iterator](); }
    [Symbol.iterator]() { return this.entries(); }
    toString() { return this._list.map((p) => formEncode(p[0]) + '=' + formEncode(p[1])).join('&'); }
  }
  const URL_FIELDS = ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash'];
  function parseUrl(input, base, field, value) {
    const parsed = JSON.parse(hostUrl(input, base, field, value));
    if (parsed.error) throw new TypeError('Invalid URL: ' + input);
    return parsed;
  }
  class URL {
    constructor(input, base) {
      const base_ = base === undefined ? '' : base instanceof URL ? base.href : String(base);
      this._fields = parseUrl(input instanceof URL ? input.href : String(input), base_, '', '');
      this._params = null;
    }
    static canParse(input, base) {
      try { new URL(input, base); return true; } catch { return false; }
    }
    _update(field, value) {
      this._fields = parseUrl(this._fields.href, '', field, String(value));
      if (this._params && field !== 'hash') this._params._list = new URLSearchParams(this._fields.search)._list;
    }
    _setSearchFromParams(search) { this._fields = parseUrl(this._fields.href, '', 'search', search); }
    get searchParams() {
      if (!this._params) {
        this._params = new URLSearchParams(this._fields.search);
        searchParamsOwner.set(this._params, this);
      }
      return this._params;
    }
    toString() { return this._fields.href; }
    toJSON() { return this._fields.href; }
  }
  for (const field of URL_FIELDS) {
    Object.defineProperty(URL.prototype, field, {
      get() { return this._fields[field]; },
      set: field === 'origin' ? undefined : function (value) { this._update(field, value); },
      enumerable: true,
      configurable: false,
    });
  }

  // ---------------------------------------------------------------- require: an allow-list, nothing else
  const BUILTINS = {
    buffer: { Buffer },
    crypto: cryptoModule,
    url: { URL, URLSearchParams },
    bson: BSON,
  };
  function safeRequire(name) {
    const key = String(name).replace(/^node:/, '');
    if (Object.prototype.hasOwnProperty.call(BUILTINS, key)) return BUILTINS[key];
    throw new Error("Cannot require '" + String(name) + "': functions may require only " + Object.keys(BUILTINS).join(', '));
  }

  // ---------------------------------------------------------------- utils (as App Services offered)
  const utils = {
    crypto: {
      hash(hashFunction, input) {
        return new BSON.Binary(makeHash(hashFunction, null).update(input).digest());
      },
      hmac(input, secret, hashFunction, outputFormat) {
        const format = outputFormat === undefined ? 'hex' : String(outputFormat);
        if (format !== 'hex' && format !== 'base64') throw new Error('hmac output format must be hex or base64');
        return makeHash(hashFunction, toBuffer(secret)).update(input).digest(format);
      },
      encrypt() { throw new Error('utils.crypto.encrypt is not supported by this runtime'); },
      decrypt() { throw new Error('utils.crypto.decrypt is not supported by this runtime'); },
      sign() { throw new Error('utils.crypto.sign is not supported by this runtime'); },
      verify() { throw new Error('utils.crypto.verify is not supported by this runtime'); },
    },
  };

  // ---------------------------------------------------------------- calls, host operations and timers
  let currentCall = null;
  let opSeq = 0;
  const pending = new Map();

  function errorFromHost(text) {
    let info;
    try { info = JSON.parse(text); } catch { info = { message: String(text) }; }
    const error = new Error(info.message);
    if (info.code) error.code = info.code;
    return error;
  }
  // Buffers and typed arrays travel as BSON Binary, as App Services stored and returned them (EJSON would
  // otherwise write them as objects keyed by index). Objects without byte arrays are returned as they are.
  // A RegExp leaves as the BSON regex it stands for (bson's EJSON would refuse the flags g, y and d,
  // which have no meaning in a query or a stored value).
  function bytesToBinary(value, depth) {
    if (value === null || typeof value !== 'object') return value;
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return new BSON.Binary(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    if (value instanceof ArrayBuffer) return new BSON.Binary(new Uint8Array(value));
    if (value instanceof RegExp) return new BSON.BSONRegExp(value.source, value.flags.replace(/[^imsu]/g, ''));
    if (depth > 200) return value;
    if (Array.isArray(value)) {
      let out = null;
      for (let i = 0; i < value.length; i++) {
        const converted = bytesToBinary(value[i], depth + 1);
        if (converted !== value[i]) {
          if (!out) out = value.slice();
          out[i] = converted;
        }
      }
      return out || value;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    let out = null;
    for (const key of Object.keys(value)) {
      const item = value[key];
      const converted = bytesToBinary(item, depth + 1);
      if (converted !== item) {
        if (!out) out = Object.assign({}, value);
        out[key] = converted;
      }
    }
    return out || value;
  }
  function toEjsonText(value) {
    return EJSON.stringify(bytesToBinary(value === undefined ? null : value, 0), { relaxed: false });
  }
  // Regex values reach a function as JavaScript RegExp objects; a BSON regex JavaScript cannot hold (the
  // options x or l, PCRE-only syntax) stays a BSON.BSONRegExp. Only freshly parsed values come here.
  function regexesToRegExp(value, depth) {
    if (value === null || typeof value !== 'object' || depth > 200) return value;
    if (value._bsontype === 'BSONRegExp') {
      if (/^[imsu]*$/.test(value.options)) {
        try { return new RegExp(value.pattern, value.options); } catch { return value; }
      }
      return value;
    }
    if (value._bsontype !== undefined) return value;
    const proto = Object.getPrototypeOf(value);
    if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
    for (const key of Object.keys(value)) {
      const item = value[key];
      const converted = regexesToRegExp(item, depth + 1);
      if (converted !== item) Object.defineProperty(value, key, { value: converted, enumerable: true, writable: true, configurable: true });
    }
    return value;
  }
  function fromEjsonText(text) {
    return regexesToRegExp(EJSON.parse(text), 0);
  }

  function hostOp(call, frameId, op, payload) {
    if (call.ended) return Promise.reject(new Error('the function call has already ended'));
    const text = toEjsonText(payload);
    return new Promise((resolve, reject) => {
      const id = ++opSeq;
      pending.set(id, { call, resolve, reject });
      hostStart(call.token, frameId, id, op, text);
    });
  }
  function resolveOp(id, ok, text) {
    const entry = pending.get(id);
    if (!entry) return;
    pending.delete(id);
    if (entry.call.ended) return;
    if (ok) {
      let value;
      try { value = fromEjsonText(text); } catch (error) { entry.reject(error); return; }
      entry.resolve(value);
    } else entry.reject(errorFromHost(text));
  }
  function forgetPending(call) {
    for (const [id, entry] of pending) if (entry.call === call) pending.delete(id);
  }

  let timerSeq = 0;
  function startTimer(callback, ms, args, repeat) {
    if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function');
    const call = currentCall;
    if (!call) throw new Error('timers can only be set while a function runs');
    const id = ++timerSeq;
    const delay = Math.max(0, Number(ms) || 0);
    call.timers.add(id);
    const tick = () => {
      hostOp(call, 0, 'timer', { ms: delay }).then(() => {
        if (!call.timers.has(id) || call.ended) return;
        if (!repeat) call.timers.delete(id);
        try { callback.apply(undefined, args); } catch (error) { call.log('error', ['Uncaught', error]); }
        if (repeat && call.timers.has(id)) tick();
      }, () => undefined);
    };
    tick();
    return id;
  }
  function clearTimer(id) {
    if (currentCall) currentCall.timers.delete(id);
  }

  // ---------------------------------------------------------------- console
  function formatValue(value, depth) {
    if (typeof value === 'string') return value;
    if (value === undefined) return 'undefined';
    if (typeof value === 'function') return '[Function: ' + (value.name || 'anonymous') + ']';
    if (typeof value === 'symbol' || typeof value === 'bigint') return String(value);
    if (value instanceof Error) return value.stack || String(value);
    if (value instanceof Buffer) return '<Buffer ' + value.toString('hex').replace(/(..)(?!$)/g, '$1 ') + '>';
    try {
      const text = EJSON.stringify(value, { relaxed: true });
      return text === undefined ? String(value) : text;
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
  function makeCall(token, request, limits) {
    const call = {
      token,
      request,
      ended: false,
      timers: new Set(),
      logs: [],
      logBytes: 0,
      logsTruncated: false,
      frames: 0,
      log(level, args) {
        if (call.ended || call.logsTruncated) return;
        let line = Array.prototype.map.call(args, (a) => formatValue(a, 0)).join(' ');
        if (level === 'error' || level === 'warn') line = level.toUpperCase() + ': ' + line;
        if (line.length > limits.maxLogLineBytes) line = line.slice(0, limits.maxLogLineBytes) + '... (truncated)';
        if (call.logs.length >= limits.maxLogLines || call.logBytes + line.length > limits.maxLogBytes) {
          call.logsTruncated = true;
          call.logs.push('... (further log lines dropped: log limit reached)');
          return;
        }
        call.logBytes += line.length;
        call.logs.push(line);
      },
    };
    call.console = makeConsole((level, args) => call.log(level, args));
    return call;
  }
  function makeConsole(sink) {
    const c = {};
    for (const level of ['log', 'info', 'debug', 'trace']) c[level] = function () { sink('log', arguments); };
    c.warn = function () { sink('warn', arguments); };
    c.error = function () { sink('error', arguments); };
    return c;
  }
  const globalConsole = makeConsole((level, args) => { if (currentCall) currentCall.log(level, args); });

  // ---------------------------------------------------------------- the data-access API (spec 4.4)
  function clean(obj) {
    const out = {};
    for (const key of Object.keys(obj)) if (obj[key] !== undefined) out[key] = obj[key];
    return out;
  }
  function makeCursor(run, kind, baseArgs) {
    const options = {};
    let buffer = null;
    let loading = null;
    const guard = (method) => {
      if (loading) throw new Error('cannot call ' + method + '() on a cursor after documents were retrieved from it');
    };
    const load = () => {
      if (!loading) {
        let args;
        if (kind === 'aggregate') {
          const pipeline = baseArgs.pipeline.slice();
          if (options.skip !== undefined) pipeline.push({ $skip: options.skip });
          args = clean(Object.assign({}, baseArgs, { pipeline }));
        } else args = clean(Object.assign({}, baseArgs, options));
        loading = run(kind, args).then((docs) => { buffer = Array.isArray(docs) ? docs : []; });
      }
      return loading;
    };
    const cursor = {
      skip(n) { guard('skip'); options.skip = Number(n); return cursor; },
      async next() { await load(); return buffer.length > 0 ? buffer.shift() : null; },
      async hasNext() { await load(); return buffer.length > 0; },
      async toArray() { await load(); const docs = buffer; buffer = []; return docs; },
      toJSON() { throw new Error('a cursor cannot be returned from a function: call toArray() or next() and return the result'); },
    };
    if (kind === 'find') {
      cursor.limit = (n) => { guard('limit'); options.limit = Number(n); return cursor; };
      cursor.sort = (spec) => { guard('sort'); options.sort = spec; return cursor; };
    }
    return Object.freeze(cursor);
  }
  function collectionHandle(runIn, database, name) {
    const run = (action, args) => runIn(database, name, action, args);
    return Object.freeze({
      get name() { return name; },
      find: (query, projection, options) => makeCursor(run, 'find', clean(Object.assign({}, options, { query: query || {}, project: projection }))),
      findOne: (query, projection, options) => run('findOne', clean(Object.assign({}, options, { query: query || {}, project: projection }))),
      findOneAndUpdate: (filter, update, options) => run('findOneAndUpdate', clean(Object.assign({}, options, { filter, update }))),
      findOneAndReplace: (filter, replacement, options) => run('findOneAndReplace', clean(Object.assign({}, options, { filter, update: replacement }))),
      findOneAndDelete: (filter, options) => run('findOneAndDelete', clean(Object.assign({}, options, { filter }))),
      insertOne: (document) => run('insertOne', { document }),
      insertMany: (documents, options) => run('insertMany', clean(Object.assign({}, options, { documents }))),
      updateOne: (query, update, options) => run('updateOne', clean(Object.assign({}, options, { query, update }))),
      updateMany: (query, update, options) => run('updateMany', clean(Object.assign({}, options, { query, update }))),
      deleteOne: (query, options) => run('deleteOne', clean(Object.assign({}, options, { query: query || {} }))),
      deleteMany: (query, options) => run('deleteMany', clean(Object.assign({}, options, { query: query || {} }))),
      aggregate: (pipeline, options) => {
        if (!Array.isArray(pipeline)) throw new TypeError('aggregate expects an array of pipeline stages');
        return makeCursor(run, 'aggregate', clean(Object.assign({}, options, { pipeline })));
      },
      count: (query, options) => run('count', clean(Object.assign({}, options, { query: query || {} }))),
      distinct: (field, query, options) => run('distinct', clean(Object.assign({}, options, { key: field, query: query || {} }))),
      bulkWrite: (operations, options) => run('bulkWrite', clean(Object.assign({}, options, { operations }))),
      watch: () => { throw new Error('watch() is not supported in functions by this runtime'); },
    });
  }
  function serviceClient(call, frame, service) {
    const runIn = (database, collection, action, args) =>
      hostOp(call, frame.id, 'data', clean({ service, database, collection, action, arguments: [args] }));
    return Object.freeze({
      db(database) {
        const db = String(database);
        return Object.freeze({
          get name() { return db; },
          collection: (name) => collectionHandle(runIn, db, String(name)),
          getCollectionNames: () => runIn(db, undefined, 'getCollectionNames', {}),
        });
      },
      admin() {
        return Object.freeze({ getDBNames: () => runIn(undefined, undefined, 'getDBNames', {}) });
      },
    });
  }

  // ---------------------------------------------------------------- context.http
  const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];
  function normalizeHeaders(headers) {
    const out = {};
    if (!headers) return out;
    for (const name of Object.keys(headers)) {
      const value = headers[name];
      out[name] = Array.isArray(value) ? value.map(String) : [String(value)];
    }
    return out;
  }
  function buildUrl(options) {
    if (options.url) return String(options.url);
    if (!options.host) throw new Error('an HTTP request needs a url, or a scheme, host and path');
    let url = (options.scheme || 'https') + '://' + options.host + (options.path || '/');
    if (options.query) {
      const params = new URLSearchParams();
      for (const key of Object.keys(options.query)) {
        const values = Array.isArray(options.query[key]) ? options.query[key] : [options.query[key]];
        for (const v of values) params.append(key, v);
      }
      const qs = params.toString();
      if (qs) url += '?' + qs;
    }
    return url;
  }
  function bodyBytes(body, headers, options) {
    if (options.form) {
      headers['Content-Type'] = headers['Content-Type'] || ['application/x-www-form-urlencoded'];
      return Buffer.from(new URLSearchParams(options.form).toString());
    }
    if (body === undefined || body === null) return undefined;
    if (options.encodeBodyAsJSON) {
      headers['Content-Type'] = headers['Content-Type'] || ['application/json'];
      return Buffer.from(EJSON.stringify(body, { relaxed: true }));
    }
    if (typeof body === 'string') return Buffer.from(body);
    return toBuffer(body);
  }
  function makeHttp(call, frame) {
    const send = async (method, options) => {
      const opts = options || {};
      const headers = normalizeHeaders(opts.headers);
      const bytes = bodyBytes(opts.body, headers, opts);
      const res = await hostOp(call, frame.id, 'http', clean({
        method,
        url: buildUrl(opts),
        headers,
        bodyBase64: bytes === undefined ? undefined : bytes.toString('base64'),
        followRedirects: Boolean(opts.followRedirects),
      }));
      return res;
    };
    const appServicesResponse = (res) => {
      const bytes = Buffer.from(res.bodyBase64, 'base64');
      const body = new BSON.Binary(bytes);
      body.text = () => bytes.toString('utf8');
      return { status: res.statusCode + ' ' + res.statusText, statusCode: res.statusCode, headers: res.headers, cookies: {}, contentLength: bytes.length, body };
    };
    const http = {};
    for (const method of HTTP_METHODS) {
      http[method.toLowerCase()] = async (options) => appServicesResponse(await send(method, options));
    }
    http.fetch = async (input, init) => {
      const i = init || {};
      const method = String(i.method || 'GET').toUpperCase();
      if (!HTTP_METHODS.includes(method)) throw new Error('unsupported HTTP method: ' + method);
      const res = await send(method, { url: String(input), headers: i.headers, body: i.body, followRedirects: i.redirect !== 'manual' });
      const bytes = Buffer.from(res.bodyBase64, 'base64');
      const lower = {};
      for (const name of Object.keys(res.headers)) lower[name.toLowerCase()] = res.headers[name].join(', ');
      return {
        ok: res.statusCode >= 200 && res.statusCode < 300,
        status: res.statusCode,
        statusText: res.statusText,
        headers: {
          get: (name) => (Object.prototype.hasOwnProperty.call(lower, String(name).toLowerCase()) ? lower[String(name).toLowerCase()] : null),
          has: (name) => Object.prototype.hasOwnProperty.call(lower, String(name).toLowerCase()),
          entries: () => Object.entries(lower)[Symbol.iterator](),
        },
        text: async () => bytes.toString('utf8'),
        json: async () => JSON.parse(bytes.toString('utf8')),
        arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
      };
    };
    return Object.freeze(http);
  }

  // ---------------------------------------------------------------- context and function invocation
  const valuesJson = boot.values;
  const environmentJson = boot.environment;
  const factories = new Map();

  function compile(name, source) {
    const cached = factories.get(name);
    if (cached && cached.source === source) return cached.factory;
    let factory;
    try {
      factory = new Function('exports', 'module', 'require', 'context', 'console', source + '\n;return exports;');
    } catch (error) {
      throw new Error("function '" + name + "' does not compile: " + (error && error.message));
    }
    factories.set(name, { source, factory });
    return factory;
  }
  function loadExport(name, source, context, console) {
    const factory = compile(name, source);
    const module = { exports: {} };
    const initial = module.exports;
    const exported = factory.call(undefined, initial, module, safeRequire, context, console);
    const fn = module.exports !== initial ? module.exports : exported;
    return fn;
  }
  function makeContext(call, frame) {
    return Object.freeze({
      app: Object.freeze({ id: boot.appId, clientAppId: boot.appId }),
      services: Object.freeze({ get: (name) => serviceClient(call, frame, String(name)) }),
      functions: Object.freeze({ execute: (name, ...args) => executeNested(call, frame, String(name), args) }),
      values: Object.freeze({
        get: (name) => (Object.prototype.hasOwnProperty.call(valuesJson, name) ? JSON.parse(valuesJson[name]) : undefined),
      }),
      user: frame.user === null ? undefined : EJSON.parse(frame.user),
      environment: JSON.parse(environmentJson),
      request: call.request === null ? undefined : JSON.parse(call.request),
      http: makeHttp(call, frame),
      runningAsSystem: () => frame.system,
    });
  }
  async function resolveRunAs(call, frame, name) {
    if (frame.runAsScript === undefined) return frame;
    const parent = frame.parent;
    const context = makeContext(call, parent);
    // Either a module assigning exports, or a bare function expression.
    const script = /\bexports\b/.test(frame.runAsScript)
      ? loadExport(name + '#run_as_user_id_script_source', frame.runAsScript, context, call.console)
      : new Function('context', 'console', 'require', 'return (' + frame.runAsScript + '\n);')(context, call.console, safeRequire);
    if (typeof script !== 'function') throw new Error('run_as_user_id_script_source of ' + name + ' does not define a function');
    const userId = await script();
    if (typeof userId !== 'string' || userId === '') throw new Error('run_as_user_id_script_source of ' + name + ' must return a user id string');
    const bound = await hostOp(call, frame.id, 'frame.bindUser', { userId });
    return { id: frame.id, system: false, user: bound.user };
  }
  async function invoke(call, frame, fn, args) {
    const bound = await resolveRunAs(call, frame, fn.name);
    const context = makeContext(call, bound);
    const exported = loadExport(fn.name, fn.source, context, call.console);
    if (typeof exported !== 'function') throw new Error("function '" + fn.name + "' does not assign a function to exports");
    return exported.apply(undefined, args);
  }
  async function executeNested(call, frame, name, args) {
    // Arguments are copied, as they would be between two separate calls.
    const copied = fromEjsonText(toEjsonText(args));
    const prepared = await hostOp(call, frame.id, 'fn.prepare', { name });
    return invoke(call, prepared.frame, prepared.fn, copied);
  }

  function describeError(error) {
    try {
      if (error instanceof Error) return { name: String(error.name), message: String(error.message), stack: String(error.stack || '') };
      if (typeof error === 'string') return { name: 'Error', message: error };
      return { name: 'Error', message: formatValue(error, 0) };
    } catch {
      return { name: 'Error', message: 'the function threw a value that could not be described' };
    }
  }

  // ---------------------------------------------------------------- hardening and per-call reset
  const ENABLE_OVERRIDE = [
    [Object.prototype, ['constructor', 'toString', 'valueOf', 'toLocaleString', 'hasOwnProperty']],
    [Function.prototype, ['constructor', 'toString', 'apply', 'call', 'bind']],
    [Array.prototype, ['toString']],
    [Error.prototype, ['constructor', 'message', 'name', 'toString']],
    [TypeError.prototype, ['constructor', 'message', 'name']],
    [RangeError.prototype, ['constructor', 'message', 'name']],
    [SyntaxError.prototype, ['constructor', 'message', 'name']],
    [ReferenceError.prototype, ['constructor', 'message', 'name']],
    [EvalError.prototype, ['constructor', 'message', 'name']],
    [URIError.prototype, ['constructor', 'message', 'name']],
  ];
  // Assigning "obj.toString = f" must keep working when Object.prototype is frozen (the "override mistake"):
  // these properties become accessors whose setter defines an own property on the receiver.
  function enableOverride(proto, key) {
    const desc = Object.getOwnPropertyDescriptor(proto, key);
    if (!desc || !('value' in desc) || !desc.configurable) return;
    const value = desc.value;
    Object.defineProperty(proto, key, {
      get() { return value; },
      set(next) {
        if (this === proto) throw new TypeError('Cannot assign to read only property ' + String(key) + ' of a frozen built-in prototype');
        Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
      },
      enumerable: desc.enumerable,
      configurable: false,
    });
  }
  function deepFreeze(root) {
    const seen = new Set([g]);
    const stack = [root];
    while (stack.length > 0) {
      const obj = stack.pop();
      if ((typeof obj !== 'object' && typeof obj !== 'function') || obj === null || seen.has(obj)) continue;
      seen.add(obj);
      Object.freeze(obj);
      stack.push(Object.getPrototypeOf(obj));
      const descs = Object.getOwnPropertyDescriptors(obj);
      for (const key of Reflect.ownKeys(descs)) {
        const d = descs[key];
        if ('value' in d) stack.push(d.value);
        else { stack.push(d.get); stack.push(d.set); }
      }
    }
  }

  const api = { run, resolve: resolveOp };
  const define = (name, value) => Object.defineProperty(g, name, { value, writable: false, enumerable: false, configurable: false });
  define('Buffer', Buffer);
  define('URL', URL);
  define('URLSearchParams', URLSearchParams);
  define('EJSON', EJSON);
  define('utils', utils);
  define('console', globalConsole);
  define('setTimeout', (fn, ms, ...args) => startTimer(fn, ms, args, false));
  define('setInterval', (fn, ms, ...args) => startTimer(fn, ms, args, true));
  define('setImmediate', (fn, ...args) => startTimer(fn, 0, args, false));
  define('clearTimeout', clearTimer);
  define('clearInterval', clearTimer);
  define('clearImmediate', clearTimer);
  define('queueMicrotask', (fn) => { Promise.resolve().then(fn); });
  // Blocking or shared-memory primitives have no use in a function and only widen the attack surface.
  // FinalizationRegistry would let a finished call's code run later, during another caller's call.
  for (const name of ['SharedArrayBuffer', 'Atomics', 'WebAssembly', 'FinalizationRegistry']) delete g[name];

  // bson's ObjectId keeps its counter in a static property; keep it assignable (as a clamped number) once
  // the class is frozen.
  let objectIdIndex = BSON.ObjectId.index;
  Object.defineProperty(BSON.ObjectId, 'index', {
    get: () => objectIdIndex,
    set: (value) => { objectIdIndex = (Number(value) >>> 0) % 0xffffff; },
    configurable: false,
  });
  for (const [proto, keys] of ENABLE_OVERRIDE) for (const key of keys) enableOverride(proto, key);
  const intrinsicSeeds = [
    g, async function () {}, function* () {}, async function* () {}, (function* () {})(), (async function* () {})(),
    [][Symbol.iterator](), new Map().entries(), new Set().values(), ''[Symbol.iterator](), /a/[Symbol.matchAll](''),
    Object.getPrototypeOf(Uint8Array), api, globalConsole, safeRequire, BUILTINS, makeCall, pending, factories,
  ];
  for (const key of Reflect.ownKeys(g)) {
    const d = Object.getOwnPropertyDescriptor(g, key);
    if (d.configurable || d.writable) Object.defineProperty(g, key, 'value' in d ? { writable: false, configurable: false } : { configurable: false });
  }
  // The global object itself stays extensible (sloppy code assigns implicit globals); new globals are
  // removed after each call, see resetGlobals.
  const roots = intrinsicSeeds.filter((seed) => seed !== g);
  for (const key of Reflect.ownKeys(g)) {
    const d = Object.getOwnPropertyDescriptor(g, key);
    if (d && 'value' in d && d.value !== g) roots.push(d.value);
  }
  for (const root of roots) deepFreeze(root);
  const baselineGlobals = new Set(Reflect.ownKeys(g));
  const baselineGlobalProto = Object.getPrototypeOf(g);
  const emptyPattern = /(?:)/;

  // Removes what a call left on the global object. False when something could not be undone: the pool then
  // retires the sandbox.
  function resetGlobals() {
    let cleanState = true;
    for (const key of Reflect.ownKeys(g)) {
      if (baselineGlobals.has(key)) continue;
      if (!delete g[key]) cleanState = false;
    }
    if (Object.getPrototypeOf(g) !== baselineGlobalProto && !Reflect.setPrototypeOf(g, baselineGlobalProto)) cleanState = false;
    if (!Object.isExtensible(g)) cleanState = false;
    // The legacy RegExp statics (RegExp.$1, RegExp.input, lastMatch, ...) keep the last match of the context:
    // match an empty string so no call can read what the previous one matched.
    emptyPattern.exec('');
    return cleanState;
  }

  async function run(requestJson) {
    const request = JSON.parse(requestJson);
    resetGlobals();
    const call = makeCall(request.token, request.request === undefined ? null : JSON.stringify(request.request), request.limits);
    currentCall = call;
    let outcome;
    try {
      const args = fromEjsonText(request.args);
      const result = await invoke(call, request.frame, request.fn, args);
      const text = toEjsonText(result);
      if (text.length > request.limits.maxResultBytes) {
        throw new Error('the function result is ' + text.length + ' bytes of EJSON, above the limit of ' + request.limits.maxResultBytes);
      }
      outcome = { ok: true, result: text };
    } catch (error) {
      outcome = { ok: false, error: describeError(error) };
    }
    call.ended = true;
    call.timers.clear();
    forgetPending(call);
    currentCall = null;
    outcome.logs = call.logs;
    outcome.clean = resetGlobals();
    return JSON.stringify(outcome);
  }

  return api;
})();
`;
