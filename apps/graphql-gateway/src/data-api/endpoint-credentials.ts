/**
 * Application authentication of the HTTP surfaces (the Data API, HTTPS endpoints, incoming webhooks): the
 * user a request's credential headers prove, as App Services read them (`Authorization: Bearer <access
 * token>`, `apiKey` (or `api-key`), `email` and `password`, `jwtTokenString`, in that order). Each credential
 * is checked as a login checks it (AuthService.userForCredentials, throttled like logins) but no session is
 * started. Who the call then runs as is each surface's decision; this class must not make it.
 */
import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { AppUser } from '@tessera/platform';
import { AuthService } from '../client-api/auth/auth.service';
import { ClientApiError, ClientApiErrorCode } from '../client-api/client-api.error';
import type { ClientApp } from '../client-api/client-apps.service';

export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface CredentialOptions {
  /** create_user_on_auth: a valid email/password or custom JWT with no user yet makes one, as a first login would. */
  createUser: boolean;
  clientAddress: string;
}

function header(headers: RequestHeaders, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

@Injectable()
export class EndpointCredentials {
  /**
   * Checks under way, by app, provider, user creation and credential digest. Concurrent requests with the same
   * credentials (a backend's parallel calls with its API key) share one check: the login throttle counts
   * checks in flight as possible failures (to stop parallel guessing), and would otherwise take a burst of
   * them for a login storm. Nothing is kept once a check settles, so a revoked key is refused next time.
   */
  private readonly inFlight = new Map<string, Promise<AppUser>>();

  constructor(private readonly auth: AuthService) {}

  /** The user the request's credential headers prove; undefined when it sends none. Bad credentials are refused. */
  async userOf(app: ClientApp, headers: RequestHeaders, options: CredentialOptions): Promise<AppUser | undefined> {
    const authorization = header(headers, 'authorization');
    if (authorization !== undefined) {
      const { user } = await this.auth.authenticate(authorization, 'access', app.clientAppId);
      if (user.disabled) throw new ClientApiError(ClientApiErrorCode.UserDisabled, 'user disabled', { httpStatus: 401 });
      return user;
    }
    const apiKey = header(headers, 'apikey') ?? header(headers, 'api-key');
    if (apiKey !== undefined) return this.check(app, 'api-key', { key: apiKey }, options);
    const email = header(headers, 'email');
    const password = header(headers, 'password');
    if (email !== undefined || password !== undefined) {
      // One without the other, answered as the Data API's OpenAPI description answers it.
      if (email === undefined || password === undefined) {
        throw new ClientApiError(ClientApiErrorCode.MissingParameter, 'must specify some form of authentication (either email+password, api-key, or jwt) in the request header or body');
      }
      return this.check(app, 'local-userpass', { username: email, password }, options);
    }
    const jwt = header(headers, 'jwttokenstring');
    if (jwt !== undefined) return this.check(app, 'custom-token', { token: jwt }, options);
    return undefined;
  }

  private check(app: ClientApp, provider: string, payload: Record<string, unknown>, options: CredentialOptions): Promise<AppUser> {
    const digest = createHash('sha256').update(JSON.stringify(payload)).digest('base64');
    const key = `${app.appId}\u0000${provider}\u0000${options.createUser ? 'create' : 'find'}\u0000${digest}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.auth.userForCredentials(app, provider, payload, options).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }
}
