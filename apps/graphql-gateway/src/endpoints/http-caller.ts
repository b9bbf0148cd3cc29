/**
 * Application authentication of HTTPS endpoints and incoming webhooks: the user a request acts as, from
 * the credentials it carries in headers as App Services read them (`Authorization: Bearer <access token>`,
 * `apiKey` (or `api-key`), `email` and `password`, `jwtTokenString`). Each credential is checked by the same
 * provider code as a login (ProviderLogins, with its throttling), but no session is started. With
 * `createUser`, a valid email/password or custom JWT with no user yet makes one, as a first login would.
 */
import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { type CallerUser, callerUserOf } from '@tessera/contracts';
import { type AppUser, DataSources, readCustomUserData } from '@tessera/platform';
import { AuthService } from '../client-api/auth/auth.service';
import { ProviderLogins } from '../client-api/auth/provider-logins';
import { type ClientApp, enabledProvider } from '../client-api/client-apps.service';
import { ClientApiError, ClientApiErrorCode } from '../client-api/client-api.error';
import { EndpointError, EndpointErrorCode } from './endpoints.error';

export interface HttpCallerOptions {
  /** create_user_on_auth. */
  createUser: boolean;
  /** fetch_custom_user_data: `context.user.custom_data` is read for the call. */
  customData: boolean;
  clientAddress: string;
}

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

@Injectable()
export class HttpCallerAuth {
  /**
   * Checks under way, by app and credential digest. Concurrent requests with the same credential (a backend's
   * parallel calls with its API key) share one check: the login throttle counts attempts in flight, and would
   * otherwise take a burst of them for a login storm.
   */
  private readonly checks = new Map<string, Promise<AppUser>>();

  constructor(
    private readonly auth: AuthService,
    private readonly providers: ProviderLogins,
    private readonly dataSources: DataSources,
  ) {}

  /** The user the request authenticates as; a request without credentials or with bad ones is refused. */
  async callerOf(app: ClientApp, headers: Headers, options: HttpCallerOptions): Promise<CallerUser> {
    const bearer = header(headers, 'authorization');
    const apiKey = header(headers, 'apikey') ?? header(headers, 'api-key');
    const email = header(headers, 'email');
    const password = header(headers, 'password');
    const jwt = header(headers, 'jwttokenstring');
    const given = [bearer, apiKey, email ?? password, jwt].filter((value) => value !== undefined).length;
    if (given === 0) throw new EndpointError(EndpointErrorCode.InvalidSession, 'no authentication methods were specified');
    if (given > 1) throw new EndpointError(EndpointErrorCode.BadRequest, 'only one authentication method may be specified');
    let user: AppUser;
    if (bearer !== undefined) user = (await this.auth.authenticate(bearer, 'access', app.clientAppId)).user;
    else if (apiKey !== undefined) user = await this.userOf(app, 'api-key', { key: apiKey }, options);
    else if (jwt !== undefined) user = await this.userOf(app, 'custom-token', { token: jwt }, options);
    else {
      if (email === undefined || password === undefined) throw new EndpointError(EndpointErrorCode.BadRequest, "email/password authentication needs both the 'email' and the 'password' header");
      user = await this.userOf(app, 'local-userpass', { username: email, password }, options);
    }
    if (user.disabled) throw new ClientApiError(ClientApiErrorCode.UserDisabled, 'user disabled', { httpStatus: 401 });
    return callerUserOf(user, options.customData ? await readCustomUserData(app.config, this.dataSources, user._id) : undefined);
  }

  private userOf(app: ClientApp, providerType: string, payload: Record<string, unknown>, options: HttpCallerOptions): Promise<AppUser> {
    const key = `${app.appId}\u0000${providerType}\u0000${options.createUser ? 'create' : 'find'}\u0000${createHash('sha256').update(JSON.stringify(payload)).digest('hex')}`;
    const running = this.checks.get(key);
    if (running) return running;
    const check = this.checkCredentials(app, providerType, payload, options).finally(() => this.checks.delete(key));
    this.checks.set(key, check);
    return check;
  }

  private async checkCredentials(app: ClientApp, providerType: string, payload: Record<string, unknown>, options: HttpCallerOptions): Promise<AppUser> {
    const provider = enabledProvider(app, providerType);
    const identity = await this.providers.identify(app, provider, payload, options.clientAddress);
    const existing = identity.userId ? await app.users.findUser(identity.userId) : await app.users.userByIdentity(provider.type, identity.id);
    if (existing) return existing;
    if (!options.createUser) throw new EndpointError(EndpointErrorCode.UserNotFound, 'user not found: the credentials are valid but belong to no user of this app (create_user_on_auth is off)');
    // A first login makes the user exactly as the login endpoint does (identity, provider data, account link).
    const login = await this.auth.login(app.clientAppId, provider.name, payload, { link: false, authorization: undefined, clientAddress: options.clientAddress });
    const created = await app.users.findUser(login.user_id);
    if (!created) throw new EndpointError(EndpointErrorCode.UserNotFound, 'user not found');
    return created;
  }
}
