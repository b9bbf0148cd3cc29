import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';

/** A signing key of the stand-in provider, published in its key set under `kid`. */
interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicJwk: Record<string, unknown>;
}

export interface FacebookAccount {
  /** What `debug_token` says about the token. */
  appId: string;
  userId: string;
  valid: boolean;
  expiresAt?: number;
  /** What `/me` answers. */
  profile: Record<string, unknown>;
}

/**
 * A real HTTP server on a random port standing in for Google, Apple and Facebook: it publishes JSON Web Key
 * Sets (`/google/certs`, `/apple/keys`), exchanges Google auth codes (`/google/token`) and answers the Graph
 * API's `/facebook/debug_token` and `/facebook/me`; for the redirect flow, its sign-in pages (`/google/authorize`,
 * `/facebook/authorize`) send the browser back with a code that `/google/token` and
 * `/facebook/oauth/access_token` exchange; Apple's (`/apple/authorize`) answers with a form that posts the code
 * to the callback, exchanged at `/apple/token`. Tokens are signed with node:crypto (RS256), as the
 * providers sign theirs; `foreignKey` signs with a key the set does not publish.
 */
export class OAuthStandIn {
  private server?: Server;
  readonly keys: SigningKey[] = [makeKey(), makeKey()];
  readonly foreignKey = makeKey();
  /** Google auth code -> the id token its exchange returns. */
  readonly googleCodes = new Map<string, string>();
  /** Who signs in at the stand-in's authorization pages (the redirect flow): the id token or access token its code yields. */
  readonly signIn: { google?: string; facebook?: string; apple?: string } = {};
  /** Apple authorization code -> the id token its exchange returns. */
  readonly appleCodes = new Map<string, string>();
  /** Facebook authorization code -> the access token it is exchanged for. */
  readonly facebookCodes = new Map<string, string>();
  /** Facebook access token -> its account. */
  readonly facebookTokens = new Map<string, FacebookAccount>();
  /** How many times each path was requested (the key sets are fetched once and cached). */
  readonly hits = new Map<string, number>();
  url = '';

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://stand-in');
      this.hits.set(url.pathname, (this.hits.get(url.pathname) ?? 0) + 1);
      const json = (status: number, body: unknown): void => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        switch (url.pathname) {
          case '/google/certs':
          case '/apple/keys':
            return json(200, { keys: this.keys.map((key) => key.publicJwk) });
          case '/google/token': {
            const form = new URLSearchParams(body);
            const idToken = this.googleCodes.get(form.get('code') ?? '');
            if (!idToken || form.get('client_secret') !== 'google-client-secret') return json(400, { error: 'invalid_grant' });
            this.googleCodes.delete(form.get('code') ?? '');
            return json(200, { access_token: 'ya29.x', id_token: idToken, token_type: 'Bearer', expires_in: 3599 });
          }
          case '/google/authorize':
          case '/facebook/authorize': {
            // The user signs in and the provider sends the browser back to the redirect URI with a code.
            const google = url.pathname.startsWith('/google');
            const credential = google ? this.signIn.google : this.signIn.facebook;
            const back = new URL(url.searchParams.get('redirect_uri') ?? '');
            if (credential) {
              const code = randomUUID();
              (google ? this.googleCodes : this.facebookCodes).set(code, credential);
              back.searchParams.set('code', code);
            } else back.searchParams.set('error', 'access_denied');
            back.searchParams.set('state', url.searchParams.get('state') ?? '');
            response.writeHead(302, { location: back.toString() });
            return response.end();
          }
          case '/apple/authorize': {
            // Asked for the name or email, Apple answers with a page that posts a form to the redirect URI.
            const fields: Record<string, string> = { state: url.searchParams.get('state') ?? '' };
            if (url.searchParams.get('response_mode') !== 'form_post') return json(400, { error: 'invalid_request' });
            if (this.signIn.apple) {
              const code = randomUUID();
              this.appleCodes.set(code, this.signIn.apple);
              fields['code'] = code;
              fields['user'] = JSON.stringify({ name: { firstName: 'Tim', lastName: 'Apple' }, email: 'tim@example.com' });
            } else fields['error'] = 'user_cancelled_authorize';
            const inputs = Object.entries(fields).map(([name, value]) => `<input type="hidden" name="${name}" value="${value.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}">`).join('');
            response.writeHead(200, { 'content-type': 'text/html' });
            return response.end(`<html><body onload="document.forms[0].submit()"><form method="POST" action="${url.searchParams.get('redirect_uri') ?? ''}">${inputs}</form></body></html>`);
          }
          case '/apple/token': {
            const form = new URLSearchParams(body);
            const idToken = this.appleCodes.get(form.get('code') ?? '');
            if (!idToken || form.get('client_secret') !== 'apple-client-secret' || form.get('grant_type') !== 'authorization_code' || !form.get('redirect_uri')) return json(400, { error: 'invalid_grant' });
            this.appleCodes.delete(form.get('code') ?? '');
            return json(200, { access_token: 'apple-access', id_token: idToken, token_type: 'Bearer', expires_in: 3600 });
          }
          case '/facebook/oauth/access_token': {
            const accessToken = this.facebookCodes.get(url.searchParams.get('code') ?? '');
            if (!accessToken || url.searchParams.get('client_secret') !== 'facebook-client-secret' || !url.searchParams.get('redirect_uri')) return json(400, { error: { message: 'Invalid verification code format.', code: 100 } });
            this.facebookCodes.delete(url.searchParams.get('code') ?? '');
            return json(200, { access_token: accessToken, token_type: 'bearer', expires_in: 5183944 });
          }
          case '/facebook/debug_token': {
            if (url.searchParams.get('access_token') !== 'facebook-app-id|facebook-client-secret') return json(400, { error: { message: 'Invalid OAuth access token - Cannot parse access token', code: 190 } });
            const account = this.facebookTokens.get(url.searchParams.get('input_token') ?? '');
            if (!account) return json(200, { data: { is_valid: false, error: { code: 190, message: 'Invalid OAuth access token.' } } });
            return json(200, { data: { app_id: account.appId, type: 'USER', is_valid: account.valid, user_id: account.userId, expires_at: account.expiresAt ?? 0, scopes: ['email', 'public_profile'] } });
          }
          case '/facebook/me': {
            const account = this.facebookTokens.get(url.searchParams.get('access_token') ?? '');
            if (!account?.valid) return json(400, { error: { message: 'Invalid OAuth access token.', code: 190 } });
            const fields = (url.searchParams.get('fields') ?? 'id,name').split(',');
            return json(200, Object.fromEntries(fields.filter((field) => field in account.profile || field === 'id').map((field) => [field, field === 'id' ? account.userId : account.profile[field]])));
          }
          default:
            return json(404, { error: 'not found' });
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The settings that point Tessera at this stand-in. */
  settings(): Record<string, string> {
    return {
      TESSERA_OAUTH_GOOGLE_JWKS_URL: `${this.url}/google/certs`,
      TESSERA_OAUTH_GOOGLE_TOKEN_URL: `${this.url}/google/token`,
      TESSERA_OAUTH_GOOGLE_AUTHORIZE_URL: `${this.url}/google/authorize`,
      TESSERA_OAUTH_FACEBOOK_AUTHORIZE_URL: `${this.url}/facebook/authorize`,
      TESSERA_OAUTH_APPLE_JWKS_URL: `${this.url}/apple/keys`,
      TESSERA_OAUTH_APPLE_AUTHORIZE_URL: `${this.url}/apple/authorize`,
      TESSERA_OAUTH_APPLE_TOKEN_URL: `${this.url}/apple/token`,
      TESSERA_OAUTH_FACEBOOK_GRAPH_URL: `${this.url}/facebook`,
    };
  }

  /** An RS256 id token; `key` defaults to the published second key, and `header`/`claims` override anything. */
  idToken(claims: Record<string, unknown>, options: { key?: SigningKey; header?: Record<string, unknown> } = {}): string {
    const key = options.key ?? this.keys[1];
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: 'RS256', typ: 'JWT', kid: key.kid, ...options.header };
    const payload = { iat: now, exp: now + 3600, ...claims };
    const signingInput = `${base64url(header)}.${base64url(payload)}`;
    return `${signingInput}.${sign('sha256', Buffer.from(signingInput), key.privateKey).toString('base64url')}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

function makeKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } };
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
