/**
 * The request checks App Services offered endpoints and webhooks before running their function: the secret
 * as the `secret` query parameter, or an HMAC of the raw body in a header (`Endpoint-Signature: sha256=<hex>`
 * for HTTPS endpoints, `X-Hook-Signature: sha1=<hex>` for incoming webhooks). Comparisons take constant
 * time; the refusal says which check failed, never what was expected.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { EndpointError, EndpointErrorCode } from './endpoints.error';

export type ValidationMethod = 'NO_VALIDATION' | 'SECRET_AS_QUERY_PARAM' | 'VERIFY_PAYLOAD';

export interface SignatureScheme {
  /** Lower-case header name. */
  header: string;
  algorithm: 'sha256' | 'sha1';
}

export const ENDPOINT_SIGNATURE: SignatureScheme = { header: 'endpoint-signature', algorithm: 'sha256' };
export const WEBHOOK_SIGNATURE: SignatureScheme = { header: 'x-hook-signature', algorithm: 'sha1' };

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) {
    // timingSafeEqual needs equal lengths; comparing the input with itself keeps the time independent of the secret.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** The value of `name` in a raw query string (first occurrence), decoded; undefined when absent. */
export function firstQueryValue(rawQuery: string, name: string): string | undefined {
  for (const [key, value] of new URLSearchParams(rawQuery)) if (key === name) return value;
  return undefined;
}

/** Throws IncomingWebhookAuthFailed unless the request passes `method` with `secret`. */
export function validateRequest(method: string | undefined, secret: string | undefined, request: { rawQuery: string; headers: Record<string, string | string[] | undefined>; body: Buffer }, scheme: SignatureScheme): void {
  const validation = method ?? 'NO_VALIDATION';
  if (validation === 'NO_VALIDATION') return;
  if (secret === undefined || secret === '') throw new EndpointError(EndpointErrorCode.AuthFailed, 'the secret this request is validated with is not set');
  if (validation === 'SECRET_AS_QUERY_PARAM') {
    const given = firstQueryValue(request.rawQuery, 'secret');
    if (given === undefined || !sameText(given, secret)) throw new EndpointError(EndpointErrorCode.AuthFailed, 'invalid secret: the secret query parameter does not match');
    return;
  }
  if (validation === 'VERIFY_PAYLOAD') {
    const raw = request.headers[scheme.header];
    const header = Array.isArray(raw) ? raw[0] : raw;
    const prefix = `${scheme.algorithm}=`;
    if (typeof header !== 'string' || !header.toLowerCase().startsWith(prefix)) {
      throw new EndpointError(EndpointErrorCode.AuthFailed, `invalid signature: the ${scheme.header} header must be ${prefix}<hex HMAC-${scheme.algorithm.toUpperCase()} of the body>`);
    }
    const expected = createHmac(scheme.algorithm, secret).update(request.body).digest('hex');
    if (!sameText(header.slice(prefix.length).trim().toLowerCase(), expected)) throw new EndpointError(EndpointErrorCode.AuthFailed, 'invalid signature: the payload signature does not match');
    return;
  }
  throw new EndpointError(EndpointErrorCode.AuthFailed, `unknown validation method: ${validation}`);
}
