import { Injectable, Logger, Optional } from '@nestjs/common';
import type { AuthProvider } from '@tessera/app-config';
import { type AppAuthEvent, authEventOf, type CallerUser, callerUserOf, Subjects } from '@tessera/contracts';
import { MessageBus } from '@tessera/messaging';
import { AuthEvents, DataSources, newObjectIdHex } from '@tessera/platform';
import { EJSON } from 'bson';
import { ClientApiError, ClientApiErrorCode, invalidSession } from '../client-api.error';
import { type ClientApp, ClientApps, enabledProvider, refreshSecondsOf } from '../client-apps.service';
import { readCustomUserData } from './custom-user-data';
import type { ProviderIdentity } from './provider-identity';
import { ProviderLogins } from './provider-logins';
import { bearerToken, type ClientTokenClaims, issueToken, tokenAppId, type TokenType, verifyToken } from './tokens';
import type { AppUser } from '@tessera/platform';

/** An authenticated request: the app, the user and the claims of the token presented. */
export interface ClientSession {
  app: ClientApp;
  user: AppUser;
  claims: ClientTokenClaims;
}

export interface LoginResponse {
  access_token: string;
  refresh_token?: string;
  user_id: string;
  device_id: string;
}

export interface ProfileResponse {
  user_id: string;
  domain_id: string;
  type: string;
  identities: Array<{ id: string; provider_type: string; provider_id: string; provider_data?: Record<string, unknown> }>;
  data: Record<string, unknown>;
}

const authEventLogger = new Logger('AuthEvents');

const NO_DEVICE = '000000000000000000000000';

/** Logins, sessions (access and refresh tokens), profiles and user deletion. */
@Injectable()
export class AuthService {
  constructor(
    private readonly apps: ClientApps,
    private readonly dataSources: DataSources,
    private readonly providers: ProviderLogins,
    @Optional() private readonly bus?: MessageBus,
    @Optional() private readonly authEvents?: AuthEvents,
  ) {}

  /** `POST C/app/{app}/auth/providers/{provider}/login[?link=true]`. */
  async login(clientAppId: string, providerName: string, body: unknown, options: { link: boolean; authorization: string | undefined; clientAddress?: string }): Promise<LoginResponse> {
    const app = await this.apps.byClientAppId(clientAppId);
    const payload = loginPayload(body);
    const provider = enabledProvider(app, providerName);
    const linking = options.link ? await this.authenticate(options.authorization, 'access', clientAppId) : undefined;
    const identity = await this.providers.identify(app, provider, payload, options.clientAddress);
    const deviceId = deviceIdOf(payload) ?? newObjectIdHex();

    if (linking) {
      const user = await this.link(app, linking.user, provider, identity);
      const access = await this.accessToken(app, user, { deviceId, sessionId: linking.claims.baas_session_id });
      return { access_token: access, user_id: user._id, device_id: deviceId };
    }
    const user = await this.userFor(app, provider, identity);
    if (user.disabled) throw new ClientApiError(ClientApiErrorCode.UserDisabled, 'user disabled');
    if (identity.data && Object.keys(identity.data).length > 0) await app.users.updateUserData(user._id, identity.data);
    const response = await this.startSession(app, user._id, deviceId);
    await this.authEvent(app, 'LOGIN', [provider.type], user);
    return response;
  }

  /**
   * Links a provider's identity to the user of a session that is still valid (the OAuth redirect flow, which
   * comes back without the user's token): as `login?link=true` with that session's access token.
   */
  async linkSession(app: ClientApp, providerName: string, body: Record<string, unknown>, session: { userId: string; sessionId: string; deviceId: string }, clientAddress?: string): Promise<{ access_token: string; user_id: string; device_id: string }> {
    const stored = await app.users.findSession(session.sessionId);
    if (!stored || stored.userId !== session.userId || stored.expiresAt.getTime() <= Date.now()) throw invalidSession('the session that started linking has ended');
    const current = await app.users.findUser(session.userId);
    if (!current) throw invalidSession('user not found');
    if (current.disabled) throw new ClientApiError(ClientApiErrorCode.UserDisabled, 'user disabled', { httpStatus: 401 });
    const provider = enabledProvider(app, providerName);
    const identity = await this.providers.identify(app, provider, body, clientAddress);
    const user = await this.link(app, current, provider, identity);
    return { access_token: await this.accessToken(app, user, { deviceId: session.deviceId, sessionId: session.sessionId }), user_id: user._id, device_id: session.deviceId };
  }

  /** Issues a new refresh-token session and its first access token. */
  async startSession(app: ClientApp, userId: string, deviceId: string): Promise<LoginResponse> {
    const user = await app.users.findUser(userId);
    if (!user) throw new ClientApiError(ClientApiErrorCode.UserNotFound, 'user not found');
    const lifetime = refreshSecondsOf(app, this.apps.lifetimes);
    const session = await app.users.createSession(user._id, deviceId, lifetime);
    const subject = { appId: app.appId, domainId: app.domainId, userId: user._id, deviceId, sessionId: session._id };
    return {
      access_token: await this.accessToken(app, user, { deviceId, sessionId: session._id }),
      refresh_token: issueToken('refresh', subject, app.signingKey, lifetime),
      user_id: user._id,
      device_id: deviceId,
    };
  }

  /** `POST C/auth/session` with the refresh token: a new access token (custom user data read again). */
  async refresh(authorization: string | undefined): Promise<{ access_token: string }> {
    const { app, user, claims } = await this.authenticate(authorization, 'refresh');
    // The admin API shows when each session was last used (a user's sessions in the console).
    await app.users.touchSession(claims.baas_session_id);
    return { access_token: await this.accessToken(app, user, { deviceId: claims.baas_device_id, sessionId: claims.baas_session_id }) };
  }

  /** `DELETE C/auth/session`: revokes the refresh token. A second logout finds no session. */
  async logout(authorization: string | undefined): Promise<void> {
    const { app, claims } = await this.authenticate(authorization, 'refresh');
    await app.users.deleteSession(claims.baas_session_id);
  }

  async deleteUser(authorization: string | undefined): Promise<void> {
    const { app, user } = await this.authenticate(authorization, 'access');
    const event = authEventOf(app.appId, 'DELETE', [...new Set(user.identities.map((identity) => identity.provider_type))], user);
    // In the outbox before the user is deleted (AuthEvents.around): a crash between them loses no trigger run.
    await (this.authEvents ? this.authEvents.around(event, () => app.users.deleteUser(user)) : app.users.deleteUser(user));
    // The user's live sync connections close; their reconnect is refused.
    await this.bus?.emit(Subjects.AppsUserChanged, { appId: app.appId, userId: user._id, change: 'deleted' }).catch(() => undefined);
  }

  /**
   * Authentication triggers run on it (function runtime), durably (AuthEvents). The user exists already: an
   * outbox that cannot be written is logged and never fails the request (as App Services).
   */
  private async authEvent(app: ClientApp, operationType: AppAuthEvent['operationType'], providers: string[], user: AppUser): Promise<void> {
    await this.authEvents?.occurred(authEventOf(app.appId, operationType, [...new Set(providers)], user)).catch((error: unknown) => authEventLogger.warn(`auth event of app ${app.appId} not recorded: ${error instanceof Error ? error.message : String(error)}`));
  }

  profile(session: ClientSession): ProfileResponse {
    const { user, app } = session;
    return {
      user_id: user._id,
      domain_id: app.domainId,
      type: user.type,
      identities: user.identities.map((identity) => ({ ...identity })),
      data: publicData(user),
    };
  }

  /**
   * Checks a bearer token (or the `baas_at` query token of streaming requests) and loads its user. An
   * access token must still have its refresh session: logging out ends both. With `clientAppId`, the
   * token must belong to that app.
   */
  async authenticate(authorization: string | undefined, type: TokenType, clientAppId?: string, queryToken?: string): Promise<ClientSession> {
    const token = bearerToken(authorization) ?? queryToken;
    if (!token) throw invalidSession();
    const appId = tokenAppId(token);
    let app: ClientApp;
    try {
      app = await this.apps.byAppId(appId);
    } catch {
      throw invalidSession();
    }
    const claims = verifyToken(token, type, app.signingKey);
    if (clientAppId !== undefined && app.clientAppId !== clientAppId) throw invalidSession('token was issued for another app');
    const session = await app.users.findSession(claims.baas_session_id);
    if (!session || session.userId !== claims.sub) {
      throw type === 'refresh' ? invalidSession('failed to find refresh token') : invalidSession();
    }
    if (session.expiresAt.getTime() <= Date.now()) throw invalidSession(`${type === 'refresh' ? 'refresh' : 'access'} token expired`);
    const user = await app.users.findUser(claims.sub);
    if (!user) throw invalidSession('user not found');
    if (user.disabled) throw new ClientApiError(ClientApiErrorCode.UserDisabled, 'user disabled', { httpStatus: 401 });
    return { app, user, claims };
  }

  /**
   * The user a provider's credentials name, checked as a login checks them (throttling included) but with
   * no session: the Data API and HTTPS endpoints authenticate every request. A first login of an identity
   * creates its user only with `createUser` (their `create_user_on_auth`).
   */
  async userForCredentials(app: ClientApp, providerName: string, payload: Record<string, unknown>, options: { createUser: boolean; clientAddress?: string }): Promise<AppUser> {
    const provider = enabledProvider(app, providerName);
    const identity = await this.providers.identify(app, provider, payload, options.clientAddress);
    const known = identity.userId ? await app.users.findUser(identity.userId) : await app.users.userByIdentity(provider.type, identity.id);
    const user = known ?? (options.createUser ? await this.userFor(app, provider, identity) : undefined);
    if (!user) throw invalidSession('error finding user for endpoint');
    if (user.disabled) throw new ClientApiError(ClientApiErrorCode.UserDisabled, 'user disabled', { httpStatus: 401 });
    return user;
  }

  /** The caller identity of the session, made once per request: `context.user` with the custom data read now. */
  async callerOf(session: Pick<ClientSession, 'app' | 'user'>): Promise<CallerUser> {
    const { user, app } = session;
    return callerUserOf(user, await readCustomUserData(app.config, this.dataSources, user._id));
  }

  private async accessToken(app: ClientApp, user: AppUser, session: { deviceId: string; sessionId: string }): Promise<string> {
    const custom = await readCustomUserData(app.config, this.dataSources, user._id);
    const userData = custom ? (EJSON.serialize(custom, { relaxed: true }) as Record<string, unknown>) : undefined;
    const subject = { appId: app.appId, domainId: app.domainId, userId: user._id, deviceId: session.deviceId, sessionId: session.sessionId };
    return issueToken('access', subject, app.signingKey, this.apps.lifetimes.accessSeconds, userData);
  }

  /** The user an identity logs in as: its owner, the key's user, or a new user (first login). */
  private async userFor(app: ClientApp, provider: AuthProvider, identity: ProviderIdentity): Promise<AppUser> {
    if (identity.userId) {
      const user = await app.users.findUser(identity.userId);
      if (!user) throw new ClientApiError(ClientApiErrorCode.UserNotFound, 'user not found');
      return user;
    }
    const existing = await app.users.userByIdentity(provider.type, identity.id);
    if (existing) return existing;
    // The CREATE event is in the outbox before the user is written (AuthEvents.around): a crash between
    // them loses no trigger run, and the relay drops the event of a user never written.
    const record = this.identityRecord(provider, identity);
    const planned: AppUser = { _id: newObjectIdHex(), type: 'normal', identities: [record], data: identity.data ?? {}, disabled: false, createdAt: new Date() };
    const event = authEventOf(app.appId, 'CREATE', [provider.type], planned);
    const createUser = async (): Promise<{ created: AppUser; user?: AppUser }> => {
      const created = await app.users.createUser('normal', identity.data ?? {}, planned._id);
      if (!(await app.users.addIdentity(created._id, record))) return { created };
      if (identity.onUserCreated) await identity.onUserCreated(created._id);
      return { created, user: (await app.users.findUser(created._id)) ?? created };
    };
    const { created, user } = this.authEvents ? await this.authEvents.around(event, createUser, (made) => (made.user ? { ...event, user: callerUserOf(made.user) } : undefined)) : await createUser();
    if (user) return user;
    // Another request created the owner first: use it and drop ours.
    await app.users.deleteUser(created);
    const owner = await app.users.userByIdentity(provider.type, identity.id);
    if (!owner) throw new ClientApiError(ClientApiErrorCode.AuthError, 'could not create the user');
    return owner;
  }

  private async link(app: ClientApp, user: AppUser, provider: AuthProvider, identity: ProviderIdentity): Promise<AppUser> {
    if (provider.type === 'anon-user') throw new ClientApiError(ClientApiErrorCode.BadRequest, 'linking forbidden: an anonymous identity cannot be linked to a user');
    const owner = identity.userId ? await app.users.findUser(identity.userId) : await app.users.userByIdentity(provider.type, identity.id);
    if (owner && owner._id !== user._id) throw new ClientApiError(ClientApiErrorCode.BadRequest, 'linking forbidden: the identity already belongs to a different user', { httpStatus: 409 });
    if (!owner && !(await app.users.addIdentity(user._id, this.identityRecord(provider, identity)))) {
      throw new ClientApiError(ClientApiErrorCode.BadRequest, 'linking forbidden: the identity already belongs to a different user', { httpStatus: 409 });
    }
    if (!owner && identity.onUserCreated) await identity.onUserCreated(user._id);
    if (identity.data && Object.keys(identity.data).length > 0) await app.users.updateUserData(user._id, identity.data);
    return (await app.users.findUser(user._id)) ?? user;
  }

  private identityRecord(provider: AuthProvider, identity: ProviderIdentity): AppUser['identities'][number] {
    return {
      id: identity.id,
      provider_type: provider.type,
      provider_id: provider.id ?? provider.name,
      ...(identity.data && Object.keys(identity.data).length > 0 ? { provider_data: identity.data } : {}),
    };
  }
}

/** The login body as a plain object; realm-core adds `provider`, both send `options.device`. */
function loginPayload(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new ClientApiError(ClientApiErrorCode.BadRequest, 'the login request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** The device id the client already has (`options.device.deviceId`, an ObjectId or its hex). */
function deviceIdOf(payload: Record<string, unknown>): string | undefined {
  const options = payload['options'] as { device?: { deviceId?: unknown } } | undefined;
  const raw = options?.device?.deviceId;
  const hex = typeof raw === 'string' ? raw : typeof raw === 'object' && raw !== null && 'toHexString' in raw && typeof raw.toHexString === 'function' ? String((raw as { toHexString(): string }).toHexString()) : undefined;
  return hex && /^[0-9a-f]{24}$/i.test(hex) && hex !== NO_DEVICE ? hex.toLowerCase() : undefined;
}

function publicData(user: AppUser): Record<string, unknown> {
  return { ...user.data };
}
