/**
 * Entry of the first isolate script: runs in every sandbox context before the bson bundle and gives it the
 * web globals it expects and a bare V8 context lacks (TextEncoder/TextDecoder, atob/btoa,
 * crypto.getRandomValues). They stay writable until the prelude freezes the context.
 */
import { isolateGlobal } from './bridge';
import { B64, base64Decode, base64Encode, randomSource, utf8Decode, utf8Encode } from './codec';

function toBytes(input: unknown): Uint8Array {
  if (input === undefined || input === null) return new Uint8Array(0);
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new TypeError('The "input" argument must be an ArrayBuffer or ArrayBufferView');
}

class TextEncoder {
  get encoding(): string {
    return 'utf-8';
  }
  encode(input?: unknown): Uint8Array {
    return utf8Encode(input === undefined ? '' : String(input));
  }
}

class TextDecoder {
  private readonly fatal: boolean;
  constructor(label?: unknown, options?: { fatal?: unknown }) {
    const l = label === undefined ? 'utf-8' : String(label).toLowerCase();
    if (l !== 'utf-8' && l !== 'utf8') throw new RangeError('only utf-8 is supported by TextDecoder here');
    this.fatal = Boolean(options && options.fatal);
  }
  get encoding(): string {
    return 'utf-8';
  }
  decode(input?: unknown): string {
    return utf8Decode(toBytes(input), this.fatal);
  }
}

function btoa(data: unknown): string {
  const s = String(data);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 255) throw new Error('Invalid character');
    bytes[i] = c;
  }
  return base64Encode(bytes, B64, true);
}

function atob(data: unknown): string {
  const bytes = base64Decode(String(data).replace(/[\t\n\f\r ]/g, ''));
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return out;
}

const g = isolateGlobal();
const { getRandomValues, randomUUID } = randomSource(g.__tessera_randomHex);
const define = (name: string, value: unknown): void => {
  Object.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
};
define('TextEncoder', TextEncoder);
define('TextDecoder', TextDecoder);
define('atob', atob);
define('btoa', btoa);
define('crypto', { getRandomValues, randomUUID });
