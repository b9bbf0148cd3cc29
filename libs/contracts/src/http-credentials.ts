/**
 * The request headers and query parameters of the HTTP surfaces (HTTPS endpoints, incoming webhooks, the Data
 * API) that carry a credential: App Services' application authentication headers (`Authorization`, `apiKey`
 * or `api-key`, `email` and `password`, `jwtTokenString`) and the `secret` query parameter of
 * SECRET_AS_QUERY_PARAM validation. Functions receive them as sent; logs show them redacted.
 */
const credentialHeaders = new Set(['authorization', 'apikey', 'api-key', 'email', 'password', 'jwttokenstring']);

/** What a logged request shows in place of a credential. */
export const REDACTED = '<redacted>';

/** True for a header name (any case) that carries a credential. */
export function isCredentialHeader(name: string): boolean {
  return credentialHeaders.has(name.toLowerCase());
}

/** True for a query parameter that carries a credential (the endpoint or webhook secret). */
export function isCredentialQueryParameter(name: string): boolean {
  return name === 'secret';
}
