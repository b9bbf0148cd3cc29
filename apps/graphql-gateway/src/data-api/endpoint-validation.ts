/**
 * The request checks App Services made before an HTTP surface ran: the secret as the `secret` query
 * parameter, or an HMAC of the raw body in a header (`Endpoint-Signature: sha256=<hex>` for the Data API and
 * HTTPS endpoints, `X-Hook-Signature: sha256=<hex>` for incoming webhooks, as App Services documented them;
 * webhooks also take `sha1=<hex>`, the HMAC-SHA1 some senders were set up with). The one implementation every
 * surface calls; each maps a refusal to its own error code. Comparisons take constant time, and a refusal
 * says which check failed, never what was expected.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SecretStore } from '@tessera/platform';
import type { ClientApp } from '../client-api/client-apps.service';

export interface SignatureScheme {
  /** Lower-case header name. */
  header: string;
  /** The HMACs the header may carry, as `<algorithm>=<hex>`; the first is the one a refusal names. */
  algorithms: ReadonlyArray<'sha256' | 'sha1'>;
}

export const ENDPOINT_SIGNATURE: SignatureScheme = { header: 'endpoint-signature', algorithms: ['sha256'] };
export const WEBHOOK_SIGNATURE: SignatureScheme = { header: 'x-hook-signature', algorithms: ['sha256', 'sha1'] };

/** What a request offers to prove it knows the secret. */
export interface RequestProof {
  /** The query string as sent, without `?`. */
  rawQuery: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
}

function sameText(given: string, expected: string): boolean {
  const left = Buffer.from(given, 'utf8');
  const right = Buffer.from(expected, 'utf8');
  if (left.length !== right.length) {
    // timingSafeEqual needs equal lengths; comparing the input with itself keeps the time independent of the secret.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** The value of `name` in a raw query string (first occurrence, as App Services read it), decoded. */
export function firstQueryValue(rawQuery: string, name: string): string | undefined {
  for (const [key, value] of new URLSearchParams(rawQuery)) if (key === name) return value;
  return undefined;
}

/** The raw query string of a request URL. */
export function rawQueryOf(url: string): string {
  const mark = url.indexOf('?');
  return mark >= 0 ? url.slice(mark + 1) : '';
}

/**
 * Why the request fails `method` with `secret` (the value of the configured secret; undefined when it does
 * not exist, so every request is refused), or undefined when it passes.
 */
export function requestProofRefusal(method: string | undefined, secret: string | undefined, request: RequestProof, scheme: SignatureScheme): string | undefined {
  const validation = method ?? 'NO_VALIDATION';
  if (validation === 'NO_VALIDATION') return undefined;
  if (secret === undefined || secret === '') return 'the secret this request is validated with is not set';
  if (validation === 'SECRET_AS_QUERY_PARAM') {
    const given = firstQueryValue(request.rawQuery, 'secret');
    return given !== undefined && sameText(given, secret) ? undefined : 'invalid secret: the secret query parameter does not match';
  }
  if (validation === 'VERIFY_PAYLOAD') {
    const raw = request.headers[scheme.header];
    const header = Array.isArray(raw) ? raw[0] : raw;
    const algorithm = typeof header === 'string' ? scheme.algorithms.find((name) => header.toLowerCase().startsWith(`${name}=`)) : undefined;
    if (typeof header !== 'string' || algorithm === undefined) {
      const [named = 'sha256'] = scheme.algorithms;
      return `invalid signature: the ${scheme.header} header must be ${named}=<hex HMAC-${named.toUpperCase()} of the body>`;
    }
    const expected = createHmac(algorithm, secret).update(request.body).digest('hex');
    return sameText(header.slice(algorithm.length + 1).trim().toLowerCase(), expected) ? undefined : 'invalid signature: the payload signature does not match';
  }
  return `unknown validation method: ${validation}`;
}

/** The value of the app's secret `name`: the secret store first, then a value its configuration files carry. */
export async function endpointSecret(secrets: SecretStore, app: ClientApp, name: string | undefined): Promise<string | undefined> {
  if (!name) return undefined;
  const stored = (await secrets.values(app.appId))[name];
  if (stored !== undefined) return stored;
  const fromFile = (app.config.secrets as { values?: Record<string, unknown> } | undefined)?.values?.[name];
  return typeof fromFile === 'string' ? fromFile : undefined;
}
