import { Inject, Injectable } from '@nestjs/common';
import type { AuthProvider } from '@tessera/app-config';
import { SecretStore } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import { createRemoteJWKSet, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';
import type { ClientApp } from '../client-apps.service';
import type { ProviderIdentity } from './provider-identity';

/** The `iss` each provider signs its id tokens with (Google has used both spellings). */
const ISSUERS: Record<'oauth2-google' | 'oauth2-apple', string[]> = {
  'oauth2-google': ['https://accounts.google.com', 'accounts.google.com'],
  'oauth2-apple': ['https://appleid.apple.com'],
};

/** App Services' metadata field names for Google, and the OpenID claim each is read from. */
const GOOGLE_CLAIMS: Record<string, string> = { first_name: 'given_name', last_name: 'family_name' };

/** A bound on what a provider endpoint may answer: these are small JSON documents. */
const MAX_PROVIDER_RESPONSE_BYTES = 256 * 1024;
const PROVIDER_TIMEOUT_MS = 10_000;

/**
 * The id-token and access-token logins of `oauth2-google`, `oauth2-apple` and `oauth2-facebook` as realm-web
 * and the Realm SDKs send them: `{ id_token }` (Google, Apple), `{ authCode }` (Google's server auth code,
 * exchanged at its token endpoint), `{ accessToken }` (Facebook, checked with the Graph API). Id tokens are
 * verified against the provider's published key set (fetched once per URL and cached by jose, refetched when
 * an unknown key id appears): signature, `aud` = the provider's `clientId`, `iss`, `exp` and `nbf`.
 * It answers who logged in; it must not create users or sessions (AuthService does).
 */
@Injectable()
export class OAuthLogins {
  private readonly keySets = new Map<string, JWTVerifyGetKey>();

  constructor(
    private readonly secrets: SecretStore,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async identify(app: ClientApp, provider: AuthProvider, payload: Record<string, unknown>): Promise<ProviderIdentity> {
    const clientId = clientIdOf(provider);
    switch (provider.type) {
      case 'oauth2-google': {
        const idToken = typeof payload['id_token'] === 'string' && payload['id_token'] ? payload['id_token'] : await this.exchangeGoogleCode(app, provider, clientId, payload);
        const claims = await this.verifyIdToken(idToken, this.settings.oauth.googleJwksUrl, clientId, ISSUERS['oauth2-google']);
        return identityOf(provider, claims.sub, (name) => claims[GOOGLE_CLAIMS[name] ?? name]);
      }
      case 'oauth2-apple': {
        const claims = await this.verifyIdToken(requiredToken(payload, 'id_token'), this.settings.oauth.appleJwksUrl, clientId, ISSUERS['oauth2-apple']);
        return identityOf(provider, claims.sub, (name) => claims[name]);
      }
      case 'oauth2-facebook':
        return this.facebook(app, provider, clientId, requiredToken(payload, 'accessToken'));
      default:
        throw new ClientApiError(ClientApiErrorCode.AuthProviderNotFound, `authentication via '${provider.name}' is unsupported`);
    }
  }

  private async verifyIdToken(token: string, jwksUrl: string, clientId: string, issuers: string[]): Promise<JWTPayload & { sub: string }> {
    let claims: JWTPayload;
    try {
      claims = (await jwtVerify(token, this.keySet(jwksUrl), { audience: clientId, issuer: issuers, algorithms: ['RS256', 'ES256'] })).payload;
    } catch (error) {
      throw authError(`invalid id token: ${error instanceof Error ? error.message : 'verification failed'}`);
    }
    if (typeof claims.sub !== 'string' || claims.sub === '') throw authError("invalid id token: the 'sub' claim is required");
    return claims as JWTPayload & { sub: string };
  }

  private keySet(url: string): JWTVerifyGetKey {
    let set = this.keySets.get(url);
    if (!set) {
      set = createRemoteJWKSet(new URL(url), { timeoutDuration: PROVIDER_TIMEOUT_MS });
      this.keySets.set(url, set);
    }
    return set;
  }

  /** Google's server auth code (the SDKs' `Credentials.google({ authCode })`): exchanged with the client secret for an id token. */
  private async exchangeGoogleCode(app: ClientApp, provider: AuthProvider, clientId: string, payload: Record<string, unknown>): Promise<string> {
    const code = payload['authCode'];
    if (typeof code !== 'string' || code === '') throw new ClientApiError(ClientApiErrorCode.InvalidParameter, "expected 'id_token' or 'authCode' to be a non-empty string");
    const redirect = Array.isArray(provider['redirect_uris']) ? (provider['redirect_uris'] as unknown[]).find((uri): uri is string => typeof uri === 'string') : undefined;
    return this.googleIdTokenForCode(app, provider, code, redirect);
  }

  /**
   * The redirect flow's last step: the authorization code the provider sent to Tessera's callback, exchanged
   * for what the id-token (Google) or access-token (Facebook) login takes.
   */
  async credentialForCode(app: ClientApp, provider: AuthProvider, code: string, redirectUri: string): Promise<Record<string, string>> {
    if (provider.type === 'oauth2-google') return { id_token: await this.googleIdTokenForCode(app, provider, code, redirectUri) };
    if (provider.type === 'oauth2-apple') return { id_token: await this.appleIdTokenForCode(app, provider, code, redirectUri) };
    const clientId = clientIdOf(provider);
    const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, client_secret: await this.clientSecret(app, provider), code });
    const answer = await providerJson(`${this.settings.oauth.facebookGraphUrl}/oauth/access_token?${query.toString()}`, { method: 'GET' }, 'the Facebook Graph API');
    if (typeof answer['access_token'] !== 'string' || answer['access_token'] === '') throw authError('the Facebook Graph API returned no access token for the code');
    return { accessToken: answer['access_token'] };
  }

  private async googleIdTokenForCode(app: ClientApp, provider: AuthProvider, code: string, redirect: string | undefined): Promise<string> {
    const clientId = clientIdOf(provider);
    const form = new URLSearchParams({ code, client_id: clientId, client_secret: await this.clientSecret(app, provider), grant_type: 'authorization_code' });
    if (redirect) form.set('redirect_uri', redirect);
    const answer = await providerJson(this.settings.oauth.googleTokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }, 'the Google token endpoint');
    const idToken = answer['id_token'];
    if (typeof idToken !== 'string' || idToken === '') throw authError('the Google token endpoint returned no id token for the auth code');
    return idToken;
  }

  /** Apple's token endpoint: the code and the provider's client secret (the JWT the developer's key signed) for an id token. */
  private async appleIdTokenForCode(app: ClientApp, provider: AuthProvider, code: string, redirectUri: string): Promise<string> {
    const form = new URLSearchParams({ client_id: clientIdOf(provider), client_secret: await this.clientSecret(app, provider), code, grant_type: 'authorization_code', redirect_uri: redirectUri });
    const answer = await providerJson(this.settings.oauth.appleTokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }, 'the Apple token endpoint');
    const idToken = answer['id_token'];
    if (typeof idToken !== 'string' || idToken === '') throw authError('the Apple token endpoint returned no id token for the code');
    return idToken;
  }

  /** Facebook: the access token must be valid and issued to this app (`debug_token`); `/me` names the user. */
  private async facebook(app: ClientApp, provider: AuthProvider, clientId: string, accessToken: string): Promise<ProviderIdentity> {
    const graph = this.settings.oauth.facebookGraphUrl;
    const appToken = `${clientId}|${await this.clientSecret(app, provider)}`;
    const debug = await providerJson(`${graph}/debug_token?${new URLSearchParams({ input_token: accessToken, access_token: appToken }).toString()}`, { method: 'GET' }, 'the Facebook Graph API');
    const data = (typeof debug['data'] === 'object' && debug['data'] !== null ? debug['data'] : {}) as Record<string, unknown>;
    if (data['is_valid'] !== true) throw authError('invalid Facebook access token');
    if ((typeof data['app_id'] === 'string' || typeof data['app_id'] === 'number' ? String(data['app_id']) : undefined) !== clientId) throw authError('the Facebook access token was issued to another app');
    const expiresAt = typeof data['expires_at'] === 'number' ? data['expires_at'] : 0;
    if (expiresAt !== 0 && expiresAt * 1000 <= Date.now()) throw authError('the Facebook access token has expired');
    const fields = ['id', ...(provider.metadata_fields ?? []).map((field) => field.name).filter((name) => /^[a-z_]+$/.test(name))];
    const me = await providerJson(`${graph}/me?${new URLSearchParams({ fields: [...new Set(fields)].join(','), access_token: accessToken }).toString()}`, { method: 'GET' }, 'the Facebook Graph API');
    const tokenUser = typeof data['user_id'] === 'string' || typeof data['user_id'] === 'number' ? String(data['user_id']) : undefined;
    const id = me['id'] ?? tokenUser;
    if (typeof id !== 'string' || id === '' || (tokenUser !== undefined && tokenUser !== id)) throw authError('the Facebook Graph API did not name the user of the access token');
    return identityOf(provider, id, (name) => (name === 'picture' ? ((me['picture'] as { data?: { url?: unknown } } | undefined)?.data?.url ?? me['picture']) : me[name]));
  }

  private async clientSecret(app: ClientApp, provider: AuthProvider): Promise<string> {
    const name = provider.secret_config?.['clientSecret'];
    const value = typeof name === 'string' ? (await this.secrets.values(app.appId))[name] : undefined;
    if (typeof value !== 'string' || value === '') throw authError(`the ${provider.type} provider has no client secret configured`);
    return value;
  }
}

/** The provider's `clientId` (the `aud` of its id tokens, the app id at Facebook). */
export function clientIdOf(provider: AuthProvider): string {
  const clientId = provider.config?.['clientId'];
  if (typeof clientId !== 'string' || clientId === '') throw authError(`the ${provider.type} provider has no clientId configured`);
  return clientId;
}

/** The identity of a subject, with the provider's `metadata_fields` read through `read` (required ones must be there). */
function identityOf(provider: AuthProvider, subject: string, read: (name: string) => unknown): ProviderIdentity {
  const data: Record<string, unknown> = {};
  for (const field of provider.metadata_fields ?? []) {
    const value = read(field.name);
    if (value === undefined || value === null || value === '') {
      if (field.required) throw authError(`required metadata field '${field.name}' was not provided by ${provider.type}`);
      continue;
    }
    data[field.name] = value;
  }
  return { id: subject, ...(Object.keys(data).length > 0 ? { data } : {}) };
}

function requiredToken(payload: Record<string, unknown>, name: string): string {
  const value = payload[name];
  if (typeof value !== 'string' || value === '') throw new ClientApiError(ClientApiErrorCode.InvalidParameter, `'${name}' must be a non-empty string`);
  return value;
}

/** 401 AuthError: what App Services answered a login whose provider credential did not check out. */
function authError(message: string): ClientApiError {
  return new ClientApiError(ClientApiErrorCode.AuthError, message);
}

/** A provider endpoint's JSON answer, bounded in time and size; its failures are the login's 401. */
async function providerJson(url: string, init: RequestInit, what: string): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS), redirect: 'error' });
  } catch (error) {
    throw new ClientApiError(ClientApiErrorCode.ServiceUnavailable, `${what} could not be reached: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = await response.text();
  if (text.length > MAX_PROVIDER_RESPONSE_BYTES) throw authError(`${what} answered with an oversized response`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw authError(`${what} answered with status ${response.status} and no JSON`);
  }
  if (!response.ok || typeof body !== 'object' || body === null || Array.isArray(body)) {
    const detail = (body as { error?: { message?: unknown } | string } | null)?.error;
    throw authError(`${what} refused the credential: ${typeof detail === 'string' ? detail : typeof detail?.message === 'string' ? detail.message : `status ${response.status}`}`);
  }
  return body as Record<string, unknown>;
}
