import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { CallerUser } from '@tessera/contracts';
import type { AppUser } from '@tessera/platform';
import { AuthService } from '../client-api/auth/auth.service';
import { invalidSession } from '../client-api/client-api.error';
import type { ClientApp } from '../client-api/client-apps.service';
import type { DataApiConfig } from './data-api-config';
import { DataApiError, DataApiErrorCode } from './data-api.error';

/** Who a Data API call runs as: the system (no rules), or a user under the app's rules. */
export type DataApiCaller = { kind: 'system'; userId?: string } | { kind: 'user'; userId: string; user: CallerUser };

/** The credential headers of the Data API (header names are case-insensitive). */
type Headers = Readonly<Record<string, string | string[] | undefined>>;

const credentialHeaders = ['authorization', 'apikey', 'email', 'password', 'jwttokenstring'] as const;

/** Header values that name a credential, for redaction in logged request arguments. */
export function isCredentialHeader(name: string): boolean {
  return (credentialHeaders as readonly string[]).includes(name.toLowerCase());
}

/**
 * The caller of a Data API request. Credentials are checked as the client API checks them (access token,
 * API key, email/password, custom JWT through the app's enabled providers, throttled like logins); the
 * configuration then decides who the call runs as: the system (`run_as_system`), a fixed user
 * (`run_as_user_id`), or the authenticated user (application authentication, where credentials are
 * required). Credentials sent to a run-as endpoint are still checked: a wrong one is refused.
 */
@Injectable()
export class DataApiCallers {
  private readonly inFlight = new Map<string, Promise<AppUser>>();

  constructor(private readonly auth: AuthService) {}

  async callerOf(app: ClientApp, config: DataApiConfig, headers: Headers, clientAddress: string): Promise<DataApiCaller> {
    const authenticated = await this.authenticatedUser(app, config, headers, clientAddress);
    if (config.run_as_system) return { kind: 'system', ...(authenticated ? { userId: authenticated._id } : {}) };
    if (config.run_as_user_id !== '') {
      const user = await app.users.findUser(config.run_as_user_id);
      if (!user || user.disabled) throw invalidSession('error finding user for endpoint');
      return this.asUser(app, user);
    }
    if (config.run_as_user_id_script_source !== '') throw new DataApiError(DataApiErrorCode.NotImplemented, 'running Data API requests as the user a script names is not supported');
    if (!authenticated) throw new DataApiError(DataApiErrorCode.MissingAuthReq, 'must specify some form of authentication (either email+password, api-key, or jwt) in the request header or body');
    return this.asUser(app, authenticated);
  }

  private async asUser(app: ClientApp, user: AppUser): Promise<DataApiCaller> {
    return { kind: 'user', userId: user._id, user: await this.auth.callerOf({ app, user }) };
  }

  /**
   * Concurrent requests with the same credentials share one check. A server calling the Data API sends one
   * API key on many parallel requests, and the login throttle counts checks in flight as possible failures
   * (to stop parallel guessing): without this, its own traffic would be throttled. Nothing is kept once
   * the check settles, so a revoked key or changed password is refused on the next request.
   */
  private singleFlight(app: ClientApp, provider: string, payload: Record<string, unknown>, check: () => Promise<AppUser>): Promise<AppUser> {
    const key = `${app.appId}\u0000${provider}\u0000${createHash('sha256').update(JSON.stringify(payload)).digest('base64')}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = check().finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** The user the request's credentials prove, or undefined when it sends none. */
  private async authenticatedUser(app: ClientApp, config: DataApiConfig, headers: Headers, clientAddress: string): Promise<AppUser | undefined> {
    const header = (name: string) => {
      const value = headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const options = { createUser: config.create_user_on_auth, clientAddress };
    const check = (provider: string, payload: Record<string, unknown>) => this.singleFlight(app, provider, payload, () => this.auth.userForCredentials(app, provider, payload, options));
    const authorization = header('authorization');
    if (authorization !== undefined) return (await this.auth.authenticate(authorization, 'access', app.clientAppId)).user;
    const apiKey = header('apikey');
    if (apiKey !== undefined) return check('api-key', { key: apiKey });
    const email = header('email');
    const password = header('password');
    if (email !== undefined || password !== undefined) return check('local-userpass', { username: email, password });
    const jwt = header('jwttokenstring');
    if (jwt !== undefined) return check('custom-token', { token: jwt });
    return undefined;
  }
}
