import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Compact HS256 JSON Web Tokens. The SDKs decode the payload (exp, iat, sub, user_data, ...); only the
 * server checks the signature. Verification accepts exactly HS256: `alg: none` and every other algorithm
 * are refused, as are tokens whose signature does not match.
 */
export interface JwtClaims {
  sub: string;
  iat: number;
  exp: number;
  [claim: string]: unknown;
}

export type JwtVerification = { valid: true; claims: JwtClaims } | { valid: false; reason: 'malformed' | 'signature' | 'expired' };

const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

export function signJwt(claims: JwtClaims, key: Buffer): string {
  const body = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}

export function verifyJwt(token: string, key: Buffer, nowSeconds = Math.floor(Date.now() / 1000)): JwtVerification {
  const parts = token.split('.');
  if (parts.length !== 3) return { valid: false, reason: 'malformed' };
  const [encodedHeader, encodedPayload, signature] = parts as [string, string, string];
  let claims: JwtClaims;
  try {
    const parsedHeader = JSON.parse(Buffer.from(encodedHeader, 'base64url').toString('utf8')) as { alg?: unknown };
    if (parsedHeader.alg !== 'HS256') return { valid: false, reason: 'signature' };
    claims = JSON.parse(Buffer.from(encodedPayload, 'base64url').toString('utf8')) as JwtClaims;
  } catch {
    return { valid: false, reason: 'malformed' };
  }
  const expected = createHmac('sha256', key).update(`${encodedHeader}.${encodedPayload}`).digest();
  const actual = Buffer.from(signature, 'base64url');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return { valid: false, reason: 'signature' };
  if (typeof claims.sub !== 'string' || typeof claims.exp !== 'number' || typeof claims.iat !== 'number') return { valid: false, reason: 'malformed' };
  if (claims.exp <= nowSeconds) return { valid: false, reason: 'expired' };
  return { valid: true, claims };
}
