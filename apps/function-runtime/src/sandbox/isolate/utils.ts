/**
 * The `utils` global App Services offered functions: `utils.crypto` (hash, hmac, AES encryption, RSA
 * signatures) and `utils.jwt` (encode and decode JSON Web Tokens). Hashes run through the host's hash
 * callback; the rest through its crypto callback (host-crypto.ts), which answers JSON of `{ok, value}` or
 * `{ok: false, message}`. Inputs cross as base64 or JSON text, never as objects.
 */
import type { Binary } from 'bson';
import { bson } from './bridge';
import { Buffer, toBuffer } from './buffer';
import { type Hash } from './node-crypto';

export type HostCrypto = (op: string, argsJson: string) => string;

type MakeHash = (algorithm: unknown, key: Buffer | null) => Hash;

export function functionUtils(makeHash: MakeHash, hostCrypto: HostCrypto) {
  const BSON = bson();
  const call = (op: string, args: Record<string, unknown>): unknown => {
    const answer = JSON.parse(hostCrypto(op, JSON.stringify(args))) as { ok: boolean; value?: unknown; message?: string };
    if (!answer.ok) throw new Error(String(answer.message));
    return answer.value;
  };
  const base64Of = (value: unknown, what: string): string => {
    if (typeof value !== 'string' && !(value instanceof BSON.Binary) && !(value instanceof ArrayBuffer) && !ArrayBuffer.isView(value)) {
      throw new TypeError(`${what} must be a string or a BSON.Binary`);
    }
    return toBuffer(value).toString('base64');
  };
  const binaryOf = (base64: unknown): Binary => new BSON.Binary(Buffer.from(String(base64), 'base64'));
  const textOf = (value: unknown, what: string): string => {
    if (typeof value !== 'string') throw new TypeError(`${what} must be a string`);
    return value;
  };

  const crypto = {
    hash(hashFunction: unknown, input: unknown): Binary {
      return new BSON.Binary(makeHash(hashFunction, null).update(input).digest() as Buffer);
    },
    hmac(input: unknown, secret: unknown, hashFunction: unknown, outputFormat?: unknown): string {
      const format = outputFormat === undefined ? 'hex' : String(outputFormat);
      if (format !== 'hex' && format !== 'base64') throw new Error('hmac output format must be hex or base64');
      return makeHash(hashFunction, toBuffer(secret)).update(input).digest(format) as string;
    },
    encrypt(encryptionType: unknown, message: unknown, key: unknown): Binary {
      return binaryOf(call('encrypt', { type: encryptionType, message: base64Of(message, 'the message'), key: base64Of(key, 'the key') }));
    },
    decrypt(encryptionType: unknown, encryptedMessage: unknown, key: unknown): Binary {
      return binaryOf(call('decrypt', { type: encryptionType, message: base64Of(encryptedMessage, 'the encrypted message'), key: base64Of(key, 'the key') }));
    },
    sign(encryptionType: unknown, message: unknown, privateKey: unknown, signatureScheme?: unknown): Binary {
      return binaryOf(call('sign', { type: encryptionType, message: base64Of(message, 'the message'), key: textOf(privateKey, 'the private key'), scheme: signatureScheme ?? null }));
    },
    verify(encryptionType: unknown, message: unknown, publicKey: unknown, signature: unknown, signatureScheme?: unknown): boolean {
      return call('verify', {
        type: encryptionType,
        message: base64Of(message, 'the message'),
        key: textOf(publicKey, 'the public key'),
        signature: base64Of(signature, 'the signature'),
        scheme: signatureScheme ?? null,
      }) === true;
    },
  };

  const jwt = {
    encode(signingMethod: unknown, payload: unknown, secret: unknown, customHeaderFields?: unknown): string {
      if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) throw new TypeError('the payload must be an object');
      const header = customHeaderFields === undefined || customHeaderFields === null ? undefined : BSON.EJSON.stringify(customHeaderFields, { relaxed: true });
      return String(call('jwtEncode', { alg: textOf(signingMethod, 'the signing method'), payload: BSON.EJSON.stringify(payload, { relaxed: true }), secret, header }));
    },
    decode(jwtString: unknown, key: unknown, returnHeader?: unknown, acceptedSigningMethods?: unknown): unknown {
      if (acceptedSigningMethods !== undefined && acceptedSigningMethods !== null && !Array.isArray(acceptedSigningMethods)) throw new TypeError('acceptedSigningMethods must be an array of strings');
      const decoded = call('jwtDecode', { token: textOf(jwtString, 'the token'), key, accepted: acceptedSigningMethods ?? null }) as { header: string; payload: string };
      const payload: unknown = BSON.EJSON.parse(decoded.payload, { relaxed: true });
      return returnHeader === true ? { header: JSON.parse(decoded.header) as unknown, payload } : payload;
    },
  };

  return { crypto, jwt };
}
