/**
 * The host side of a function's `utils.crypto.encrypt/decrypt/sign/verify` and `utils.jwt.encode/decode`, in
 * the formats App Services wrote, so data encrypted or tokens signed by an App Services function open here and
 * the reverse:
 * - `encrypt("aes", message, key)`: AES-GCM with the key's bytes as the key (16, 24 or 32 bytes: AES-128/192/256),
 *   a random 12-byte nonce written before the ciphertext and the 16-byte tag after it (the docs' example output
 *   decrypts with its key in exactly this layout).
 * - `sign("rsa", message, privateKey, scheme)` / `verify(...)`: RSA over SHA-256, PSS (the default; salt as long
 *   as the key allows when signing, any length when verifying) or PKCS #1 v1.5.
 * - `utils.jwt`: JWS compact tokens with the HS, RS, PS and ES algorithms of RFC 7518.
 *
 * The isolate calls `hostCrypto(op, JSON args)` synchronously and gets JSON back: `{ ok, value }` or
 * `{ ok: false, message }`. Nothing here throws to the isolate; key material never leaves this module.
 */
import { constants, createCipheriv, createDecipheriv, createHmac, createPrivateKey, createPublicKey, createSecretKey, randomBytes, sign, verify, type KeyObject } from 'node:crypto';

const AES_KEY_BYTES = new Set([16, 24, 32]);
const GCM_NONCE_BYTES = 12;
const GCM_TAG_BYTES = 16;
/** The largest message or token the isolate may hand over (its results are bounded separately). */
const MAX_INPUT_BYTES = 16 * 1024 * 1024;

type Json = Record<string, unknown>;

class CryptoInputError extends Error {}

export function hostCrypto(op: string, argsJson: string): string {
  try {
    if (typeof argsJson !== 'string' || argsJson.length > MAX_INPUT_BYTES * 2) throw new CryptoInputError('the input is too large');
    const args = JSON.parse(argsJson) as Json;
    return JSON.stringify({ ok: true, value: runOperation(String(op), args) });
  } catch (error) {
    return JSON.stringify({ ok: false, message: messageOf(error) });
  }
}

function runOperation(op: string, args: Json): unknown {
  switch (op) {
    case 'encrypt':
      return aesEncrypt(encryptionType(args.type, 'aes'), bytes(args.message), bytes(args.key));
    case 'decrypt':
      return aesDecrypt(encryptionType(args.type, 'aes'), bytes(args.message), bytes(args.key));
    case 'sign':
      encryptionType(args.type, 'rsa');
      return rsaSign(bytes(args.message), String(args.key), signatureScheme(args.scheme));
    case 'verify':
      encryptionType(args.type, 'rsa');
      return rsaVerify(bytes(args.message), String(args.key), bytes(args.signature), signatureScheme(args.scheme));
    case 'jwtEncode':
      return jwtEncode(String(args.alg), String(args.payload), args.secret, typeof args.header === 'string' ? (JSON.parse(args.header) as unknown) : {});
    case 'jwtDecode':
      return jwtDecode(String(args.token), args.key, args.accepted, Date.now() / 1000);
    default:
      throw new CryptoInputError(`unknown crypto operation '${op}'`);
  }
}

function bytes(base64: unknown): Buffer {
  if (typeof base64 !== 'string') throw new CryptoInputError('expected a string or a BSON.Binary');
  return Buffer.from(base64, 'base64');
}

function encryptionType(type: unknown, expected: 'aes' | 'rsa'): string {
  const name = typeof type === 'string' ? type.toLowerCase() : String(type);
  if (name !== expected) throw new CryptoInputError(`unsupported encryption type '${String(type)}' (supported: "${expected}")`);
  return name;
}

function aesCipherName(key: Buffer): 'aes-128-gcm' | 'aes-192-gcm' | 'aes-256-gcm' {
  if (!AES_KEY_BYTES.has(key.length)) throw new CryptoInputError(`invalid AES key size ${key.length}: the key must be 16, 24 or 32 bytes`);
  return `aes-${key.length * 8}-gcm` as 'aes-128-gcm' | 'aes-192-gcm' | 'aes-256-gcm';
}

function aesEncrypt(_type: string, message: Buffer, key: Buffer): string {
  const nonce = randomBytes(GCM_NONCE_BYTES);
  const cipher = createCipheriv(aesCipherName(key), key, nonce, { authTagLength: GCM_TAG_BYTES });
  return Buffer.concat([nonce, cipher.update(message), cipher.final(), cipher.getAuthTag()]).toString('base64');
}

function aesDecrypt(_type: string, sealed: Buffer, key: Buffer): string {
  const name = aesCipherName(key);
  if (sealed.length < GCM_NONCE_BYTES + GCM_TAG_BYTES) throw new CryptoInputError('the encrypted message is too short');
  const decipher = createDecipheriv(name, key, sealed.subarray(0, GCM_NONCE_BYTES), { authTagLength: GCM_TAG_BYTES });
  decipher.setAuthTag(sealed.subarray(sealed.length - GCM_TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(GCM_NONCE_BYTES, sealed.length - GCM_TAG_BYTES)), decipher.final()]).toString('base64');
  } catch {
    throw new CryptoInputError('message authentication failed: the key is wrong or the message was altered');
  }
}

type Scheme = 'pss' | 'pkcs1v15';

function signatureScheme(scheme: unknown): Scheme {
  if (scheme === undefined || scheme === null || scheme === '') return 'pss';
  const name = typeof scheme === 'string' ? scheme.toLowerCase() : JSON.stringify(scheme);
  if (name === 'pss' || name === 'pkcs1v15') return name;
  throw new CryptoInputError(`unsupported signature scheme '${typeof scheme === 'string' ? scheme : name}' (supported: "pss", "pkcs1v15")`);
}

function rsaKey(pem: string, kind: 'private' | 'public'): KeyObject {
  let key: KeyObject;
  try {
    key = kind === 'private' ? createPrivateKey(pem) : createPublicKey(pem);
  } catch {
    throw new CryptoInputError(`the ${kind} key is not a PEM-encoded RSA ${kind} key`);
  }
  if (key.asymmetricKeyType !== 'rsa') throw new CryptoInputError(`the ${kind} key is not an RSA key`);
  return key;
}

function rsaSign(message: Buffer, pem: string, scheme: Scheme): string {
  const key = rsaKey(pem, 'private');
  const padding = scheme === 'pss' ? { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_MAX_SIGN } : { padding: constants.RSA_PKCS1_PADDING };
  return sign('sha256', message, { key, ...padding }).toString('base64');
}

function rsaVerify(message: Buffer, pem: string, signature: Buffer, scheme: Scheme): boolean {
  const key = rsaKey(pem, 'public');
  const padding = scheme === 'pss' ? { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO } : { padding: constants.RSA_PKCS1_PADDING };
  try {
    return verify('sha256', message, { key, ...padding }, signature);
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- JSON Web Tokens (JWS compact form)

interface JwsAlgorithm {
  family: 'HS' | 'RS' | 'PS' | 'ES';
  hash: 'sha256' | 'sha384' | 'sha512';
}

const JWS_ALGORITHMS: Record<string, JwsAlgorithm> = Object.fromEntries(
  (['HS', 'RS', 'PS', 'ES'] as const).flatMap((family) => (['256', '384', '512'] as const).map((bits) => [`${family}${bits}`, { family, hash: `sha${bits}` }])),
);
const EC_CURVE_OF: Record<string, string> = { sha256: 'prime256v1', sha384: 'secp384r1', sha512: 'secp521r1' };

function jwsAlgorithm(alg: string): JwsAlgorithm {
  const found = Object.prototype.hasOwnProperty.call(JWS_ALGORITHMS, alg) ? JWS_ALGORITHMS[alg] : undefined;
  if (!found) throw new CryptoInputError(`unsupported signing method '${alg}' (supported: ${Object.keys(JWS_ALGORITHMS).join(', ')})`);
  return found;
}

function secretText(secret: unknown, what: string): string {
  if (typeof secret !== 'string' || secret === '') throw new CryptoInputError(`the ${what} must be a non-empty string`);
  return secret;
}

/** The key a token is signed (`private`) or checked (`public`) with: the secret's bytes for HS, else the PEM key. */
function jwsKey(alg: JwsAlgorithm, secret: string, use: 'private' | 'public'): KeyObject {
  if (alg.family === 'HS') return createSecretKey(Buffer.from(secret, 'utf8'));
  let key: KeyObject;
  try {
    key = use === 'private' ? createPrivateKey(secret) : createPublicKey(secret);
  } catch {
    throw new CryptoInputError(use === 'private' ? 'the secret is not a PEM-encoded private key' : 'the key is not a PEM-encoded public key or certificate');
  }
  checkAsymmetricKey(alg, key);
  return key;
}

function checkAsymmetricKey(alg: JwsAlgorithm, key: KeyObject): void {
  const wanted = alg.family === 'ES' ? 'ec' : 'rsa';
  const type = key.asymmetricKeyType === 'rsa-pss' ? 'rsa' : key.asymmetricKeyType;
  if (type !== wanted) throw new CryptoInputError(`a ${alg.family}${alg.hash.slice(3)} token needs an ${wanted.toUpperCase()} key`);
  if (alg.family === 'ES' && key.asymmetricKeyDetails?.namedCurve !== EC_CURVE_OF[alg.hash]) throw new CryptoInputError(`ES${alg.hash.slice(3)} needs a key on curve ${EC_CURVE_OF[alg.hash]}`);
}

function jwsSignature(alg: JwsAlgorithm, key: KeyObject, input: Buffer): Buffer {
  switch (alg.family) {
    case 'HS':
      return createHmac(alg.hash, key).update(input).digest();
    case 'RS':
      return sign(alg.hash, input, { key, padding: constants.RSA_PKCS1_PADDING });
    case 'PS':
      return sign(alg.hash, input, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST });
    case 'ES':
      return sign(alg.hash, input, { key, dsaEncoding: 'ieee-p1363' });
  }
}

function jwsVerify(alg: JwsAlgorithm, key: KeyObject, input: Buffer, signature: Buffer): boolean {
  try {
    switch (alg.family) {
      case 'HS': {
        const expected = createHmac(alg.hash, key).update(input).digest();
        return expected.length === signature.length && timingSafe(expected, signature);
      }
      case 'RS':
        return verify(alg.hash, input, { key, padding: constants.RSA_PKCS1_PADDING }, signature);
      case 'PS':
        return verify(alg.hash, input, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, signature);
      case 'ES':
        return verify(alg.hash, input, { key, dsaEncoding: 'ieee-p1363' }, signature);
    }
  } catch {
    return false;
  }
}

function timingSafe(a: Buffer, b: Buffer): boolean {
  let diff = 0;
  for (let i = 0; i < a.length; i += 1) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

function jwtEncode(algName: string, payloadJson: string, secret: unknown, extraHeader: unknown): string {
  const alg = jwsAlgorithm(algName);
  const key = jwsKey(alg, secretText(secret, 'secret'), 'private');
  const payload = JSON.parse(payloadJson) as unknown;
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) throw new CryptoInputError('the payload must be an object');
  if (extraHeader !== null && (typeof extraHeader !== 'object' || Array.isArray(extraHeader))) throw new CryptoInputError('customHeaderFields must be an object');
  const header = { ...(extraHeader as Json | null), alg: algName, typ: 'JWT' };
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${jwsSignature(alg, key, Buffer.from(input)).toString('base64url')}`;
}

function jwtDecode(token: string, key: unknown, accepted: unknown, nowSeconds: number): { header: string; payload: string } {
  const parts = token.split('.');
  if (parts.length !== 3) throw new CryptoInputError('token contains an invalid number of segments');
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = decodeSegment(headerPart, 'header');
  const payload = decodeSegment(payloadPart, 'payload');
  const algName = typeof header.alg === 'string' ? header.alg : '';
  if (Array.isArray(accepted) && !accepted.map(String).includes(algName)) throw new CryptoInputError(`signing method ${algName || '(none)'} is invalid (accepted: ${accepted.map(String).join(', ')})`);
  const alg = jwsAlgorithm(algName);
  if (!jwsVerify(alg, jwsKey(alg, secretText(key, 'key'), 'public'), Buffer.from(`${headerPart}.${payloadPart}`), Buffer.from(signaturePart, 'base64url'))) {
    throw new CryptoInputError('signature is invalid');
  }
  if (typeof payload.exp === 'number' && nowSeconds >= payload.exp) throw new CryptoInputError('token is expired');
  if (typeof payload.nbf === 'number' && nowSeconds < payload.nbf) throw new CryptoInputError('token is not valid yet');
  return { header: JSON.stringify(header), payload: JSON.stringify(payload) };
}

function decodeSegment(segment: string, what: string): Json {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw new CryptoInputError(`the token's ${what} is not base64url-encoded JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CryptoInputError(`the token's ${what} is not a JSON object`);
  return value as Json;
}

function messageOf(error: unknown): string {
  if (error instanceof CryptoInputError) return error.message;
  if (error instanceof SyntaxError) return 'the input is not valid JSON';
  // Node's own messages name what went wrong with a key or input without holding key material.
  return error instanceof Error ? error.message : String(error);
}
