import { type JwtClaims, signJwt, verifyJwt } from '@tessera/credentials';
import { invalidSession } from '../client-api.error';

export type TokenType = 'access' | 'refresh';

/** Claims of the tokens this API issues; the SDKs read exp, iat, sub, user_data and baas_device_id (R6). */
export interface ClientTokenClaims extends JwtClaims {
  typ: TokenType;
  /** The app's `_id`: tells which app's key signed the token. */
  baas_app_id: string;
  baas_domain_id: string;
  baas_device_id: string;
  /** The refresh-token session this token belongs to. */
  baas_session_id: string;
  stitch_devId: string;
  stitch_domainId: string;
  user_data?: Record<string, unknown>;
}

export interface TokenSubject {
  appId: string;
  domainId: string;
  userId: string;
  deviceId: string;
  sessionId: string;
}

export function issueToken(type: TokenType, subject: TokenSubject, key: Buffer, lifetimeSeconds: number, userData?: Record<string, unknown>): string {
  const iat = Math.floor(Date.now() / 1000);
  const claims: ClientTokenClaims = {
    sub: subject.userId,
    iat,
    exp: iat + Math.max(1, Math.floor(lifetimeSeconds)),
    typ: type,
    baas_app_id: subject.appId,
    baas_domain_id: subject.domainId,
    baas_device_id: subject.deviceId,
    baas_session_id: subject.sessionId,
    stitch_devId: subject.deviceId,
    stitch_domainId: subject.domainId,
    ...(type === 'access' && userData ? { user_data: userData } : {}),
  };
  return signJwt(claims, key);
}

const APP_ID = /^[0-9a-f]{24}$/;

/** The app a token claims to come from, read before its signature can be checked with that app's key. */
export function tokenAppId(token: string): string {
  // The CORS check, the request budget and the authentication each ask, for the same token: a token whose
  // signature was verified already has its claims parsed (the signature is still checked with the key).
  const known = verified.get(token)?.claims['baas_app_id'];
  if (typeof known === 'string' && APP_ID.test(known)) return known;
  const payload = token.split('.')[1];
  if (!payload) throw invalidSession();
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { baas_app_id?: unknown };
    if (typeof claims.baas_app_id === 'string' && APP_ID.test(claims.baas_app_id)) return claims.baas_app_id;
  } catch {
    // falls through to the refusal
  }
  throw invalidSession();
}

/**
 * Tokens whose signature was verified, with the key that verified them, most recently used last. The HMAC
 * is a visible share of a small request's CPU, and a client sends the same access token for its whole
 * lifetime. Only the signature check is remembered: expiry is checked on every use, and revocation stays
 * immediate because the caller still looks up the token's session and user on every request.
 */
const verified = new Map<string, { key: Buffer; claims: Readonly<JwtClaims> }>();
const verifiedLimit = 1024;

function verifiedClaims(token: string, key: Buffer): JwtClaims | 'expired' | undefined {
  const now = Math.floor(Date.now() / 1000);
  const known = verified.get(token);
  if (known && known.key.equals(key)) {
    if (known.claims.exp <= now) {
      verified.delete(token);
      return 'expired';
    }
    verified.delete(token);
    verified.set(token, known);
    return known.claims;
  }
  const result = verifyJwt(token, key, now);
  if (!result.valid) return result.reason === 'expired' ? 'expired' : undefined;
  if (verified.size >= verifiedLimit) verified.delete(verified.keys().next().value as string);
  verified.set(token, { key: Buffer.from(key), claims: Object.freeze(result.claims) });
  return result.claims;
}

/** Checks signature, expiry and type; the 401s are the ones the SDKs react to by refreshing (R5). */
export function verifyToken(token: string, type: TokenType, key: Buffer): ClientTokenClaims {
  const result = verifiedClaims(token, key);
  if (result === 'expired') throw invalidSession(`${type} token expired`);
  if (result === undefined) throw invalidSession();
  const claims = result as ClientTokenClaims;
  if (claims.typ !== type || typeof claims.baas_session_id !== 'string') throw invalidSession();
  return claims;
}

/** The bearer token of an Authorization header. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match?.[1];
}
