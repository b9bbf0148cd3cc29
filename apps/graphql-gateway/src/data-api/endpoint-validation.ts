import { createHmac, timingSafeEqual } from 'node:crypto';
import type { EndpointValidationMethod } from './data-api-config';
import { DataApiError, DataApiErrorCode } from './data-api.error';

/** What a request offers to prove it knows the endpoint's secret. */
export interface EndpointProof {
  /** The `secret` query parameter. */
  secret: string | undefined;
  /** The `Endpoint-Signature` header: `sha256=<hex HMAC-SHA256 of the raw body>`. */
  signature: string | undefined;
  body: Buffer;
}

/**
 * App Services' request validation of HTTPS endpoints and the Data API: `SECRET_AS_QUERY_PARAM` (the
 * `secret` query parameter equals the secret) or `VERIFY_PAYLOAD` (the body's HMAC-SHA256 under the
 * secret, hex, in `Endpoint-Signature: sha256=...`). `secret` is the value of the configured secret
 * (undefined when it is missing: every request is then refused). Comparisons take constant time.
 */
export function checkEndpointValidation(method: EndpointValidationMethod, secret: string | undefined, proof: EndpointProof): void {
  if (method === 'NO_VALIDATION') return;
  if (secret === undefined || secret === '') throw new DataApiError(DataApiErrorCode.AuthError, 'the endpoint names a secret that does not exist');
  if (method === 'SECRET_AS_QUERY_PARAM') {
    if (proof.secret === undefined || !sameText(proof.secret, secret)) throw new DataApiError(DataApiErrorCode.AuthError, 'invalid secret');
    return;
  }
  const expected = `sha256=${createHmac('sha256', secret).update(proof.body).digest('hex')}`;
  if (proof.signature === undefined || !sameText(proof.signature.trim().toLowerCase(), expected)) throw new DataApiError(DataApiErrorCode.AuthError, 'invalid endpoint signature');
}

function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
