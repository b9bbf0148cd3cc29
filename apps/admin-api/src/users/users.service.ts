import { Injectable, Logger, Optional } from '@nestjs/common';
import { type AppUserChanged, authEventOf, type JsonValue, Subjects } from '@tessera/contracts';
import { hashPassword } from '@tessera/credentials';
import { encodeEjson, MessageBus } from '@tessera/messaging';
import { AppUserStore, AuthEvents, DataSources, type AppRecord, type AppUser, type ImportResult, MAX_IMPORT_BATCH, parseUserListing, readCustomUserData, type Session } from '@tessera/platform';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

/** A user as the admin API shows it (realm-cli's `User`). */
export interface UserView {
  _id: string;
  identities: AppUser['identities'];
  type: string;
  disabled: boolean;
  data: Record<string, unknown>;
  /** Seconds since the epoch. */
  creation_date: number;
  last_authentication_date: number;
}

/** One refresh-token session of a user (Tessera: `GET .../users/{id}/sessions`); never its token. */
export interface SessionView {
  _id: string;
  device_id: string;
  /** Seconds since the epoch. */
  created: number;
  /** When the refresh token last got an access token; the login's time until then. */
  last_used: number;
  expires: number;
}

/** A user's custom data document (Tessera: `GET .../users/{id}/custom_data`), as canonical EJSON. */
export interface CustomDataView {
  /** Whether the app's `custom_user_data_config` is enabled. */
  enabled: boolean;
  /** `<database>.<collection>` the document is read from, when enabled. */
  namespace?: string;
  user_id_field?: string;
  document: JsonValue | null;
}

/** App users, through the platform's user store that the client API writes. */
@Injectable()
export class UsersService {
  private readonly stores = new Map<string, AppUserStore>();
  private readonly logger = new Logger('Users');

  constructor(
    private readonly dataSources: DataSources,
    private readonly state: AppStateService,
    @Optional() private readonly bus?: MessageBus,
    @Optional() private readonly authEvents?: AuthEvents,
  ) {}

  /** The app's user store (one per app and process). */
  async store(record: AppRecord): Promise<AppUserStore> {
    let store = this.stores.get(record._id);
    if (!store) {
      store = new AppUserStore(this.dataSources.platform(), record._id);
      this.stores.set(record._id, store);
    }
    await store.init();
    return store;
  }

  async list(record: AppRecord, filter: { status?: string; providerTypes?: string[] }): Promise<UserView[]> {
    const users = await (await this.store(record)).listUsers();
    return users
      .filter((user) => filter.status !== 'enabled' || !user.disabled)
      .filter((user) => filter.status !== 'disabled' || user.disabled)
      .filter((user) => !filter.providerTypes?.length || user.identities.some((identity) => filter.providerTypes!.includes(identity.provider_type)))
      .map(view);
  }

  async get(record: AppRecord, userId: string): Promise<UserView> {
    return view(await this.require(record, userId));
  }

  /** realm-cli `users create --type email`: a confirmed email/password user, ready to log in. */
  async createEmailUser(record: AppRecord, email: unknown, password: unknown): Promise<UserView> {
    if (typeof email !== 'string' || !email || typeof password !== 'string') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'email and password are required');
    if (password.length < 6 || password.length > 128) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'password must be between 6 and 128 characters');
    const provider = (await this.state.liveApp(record)).authProviders.find((candidate) => candidate.type === 'local-userpass');
    if (!provider) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'the app has no local-userpass (email/password) provider');
    const store = await this.store(record);
    if (!(await store.createAccount(email, await hashPassword(password)))) throw new AdminApiError(AdminApiErrorCode.UserAlreadyExists, `a user with email "${email}" already exists`);
    await store.confirmAccount(email);
    const user = await store.createUser('normal', { email });
    await store.addIdentity(user._id, { id: email, provider_type: 'local-userpass', provider_id: provider.id ?? provider.name, provider_data: { email } });
    await store.setAccountUser(email, user._id);
    return view((await store.findUser(user._id)) ?? user);
  }

  async remove(record: AppRecord, userId: string): Promise<void> {
    const store = await this.store(record);
    const user = await this.require(record, userId);
    // Authentication triggers on DELETE run on it (function runtime), durably: the event is in the outbox
    // before the user is deleted (AuthEvents.around), so a crash between them loses no trigger run.
    const event = authEventOf(record._id, 'DELETE', [...new Set(user.identities.map((identity) => identity.provider_type))], user);
    await (this.authEvents ? this.authEvents.around(event, () => store.deleteUser(user)) : store.deleteUser(user));
    await this.announce({ appId: record._id, userId, change: 'deleted' });
  }

  async setDisabled(record: AppRecord, userId: string, disabled: boolean): Promise<void> {
    if (!(await (await this.store(record)).setUserDisabled(userId, disabled))) throw notFound(userId);
    if (disabled) await this.announce({ appId: record._id, userId, change: 'disabled' });
  }

  /** Live connections of the user (sync, the apps' wire endpoint) close; a lost announcement leaves them open until they reconnect. */
  private async announce(change: AppUserChanged): Promise<void> {
    try {
      await this.bus?.emit(Subjects.AppsUserChanged, change);
    } catch (error) {
      this.logger.warn({ err: error, appId: change.appId }, 'could not announce a user change: live sync connections of the user stay open');
    }
  }

  /**
   * `POST .../users/import` (Tessera): users from an App Services listing, with their ids and identities.
   * Each user succeeds or fails on its own; nothing existing is overwritten.
   */
  async importUsers(record: AppRecord, body: unknown): Promise<{ results: ImportResult[]; created: number; unchanged: number; conflicts: number; invalid: number }> {
    let parsed: ReturnType<typeof parseUserListing>;
    try {
      parsed = parseUserListing(body);
    } catch (error) {
      throw new AdminApiError(AdminApiErrorCode.InvalidParameter, error instanceof Error ? error.message : String(error));
    }
    if (parsed.length > MAX_IMPORT_BATCH) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `at most ${MAX_IMPORT_BATCH} users per import request (got ${parsed.length}); send them in batches`);
    const store = await this.store(record);
    const results: ImportResult[] = [];
    for (const item of parsed) {
      if (!item.imported) {
        results.push({ index: item.index, ...(item._id ? { _id: item._id } : {}), status: 'invalid', error: item.error ?? 'invalid user' });
        continue;
      }
      const outcome = await store.importUser(item.imported);
      results.push({ index: item.index, _id: item.imported.user._id, ...outcome });
    }
    const count = (status: ImportResult['status']): number => results.filter((result) => result.status === status).length;
    return { results, created: count('created'), unchanged: count('unchanged'), conflicts: count('conflict'), invalid: count('invalid') };
  }

  /** Ends every session of the user (realm-cli `users revoke`). */
  /** App Services' `reset_email`: an email/password user's email changes, its password and sessions kept. */
  async changeEmail(record: AppRecord, userId: string, email: unknown): Promise<void> {
    if (typeof email !== 'string' || email.length === 0 || email.length > 128) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'email must be a string of 1 to 128 characters');
    const outcome = await (await this.store(record)).changeUserpassEmail(userId, email);
    if (outcome === 'no-user') throw notFound(userId);
    if (outcome === 'no-identity') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `user ${userId} has no email/password identity`);
    if (outcome === 'taken') throw new AdminApiError(AdminApiErrorCode.UserAlreadyExists, `the email ${email} belongs to another user`);
  }

  async logout(record: AppRecord, userId: string): Promise<void> {
    await this.require(record, userId);
    await (await this.store(record)).revokeSessions(userId);
    await this.announce({ appId: record._id, userId, change: 'sessions-revoked' });
  }

  /** The user's sessions that have not ended, newest first. */
  async sessions(record: AppRecord, userId: string): Promise<SessionView[]> {
    await this.require(record, userId);
    return (await (await this.store(record)).listSessions(userId)).map(sessionView);
  }

  /** Ends one session: its refresh token and the access tokens it issued stop working. */
  async revokeSession(record: AppRecord, userId: string, sessionId: string): Promise<void> {
    await this.require(record, userId);
    if (!(await (await this.store(record)).deleteUserSession(userId, sessionId))) throw new AdminApiError(AdminApiErrorCode.SessionNotFound, `session not found: '${sessionId}'`);
    await this.announce({ appId: record._id, userId, change: 'sessions-revoked' });
  }

  /** The user's custom data document, read as a token issue reads it (null when none or disabled). */
  async customData(record: AppRecord, userId: string): Promise<CustomDataView> {
    await this.require(record, userId);
    const config = await this.state.liveApp(record);
    const custom = config.settings.custom_user_data_config;
    if (custom?.enabled !== true) return { enabled: false, document: null };
    const document = await readCustomUserData(config, this.dataSources, userId);
    return { enabled: true, namespace: `${custom.database_name}.${custom.collection_name}`, user_id_field: custom.user_id_field, document: document ? encodeEjson(document) : null };
  }

  private async require(record: AppRecord, userId: string): Promise<AppUser> {
    const user = await (await this.store(record)).findUser(userId);
    if (!user) throw notFound(userId);
    return user;
  }
}

function notFound(userId: string): AdminApiError {
  return new AdminApiError(AdminApiErrorCode.UserNotFound, `user not found: '${userId}'`);
}

function seconds(date: Date | string | undefined): number {
  return date ? Math.floor(new Date(date).getTime() / 1000) : 0;
}

function sessionView(session: Session): SessionView {
  return { _id: session._id, device_id: session.deviceId, created: seconds(session.createdAt), last_used: seconds(session.lastUsedAt ?? session.createdAt), expires: seconds(session.expiresAt) };
}

function view(user: AppUser): UserView {
  return {
    _id: user._id,
    identities: user.identities,
    type: user.type,
    disabled: user.disabled === true,
    data: user.data ?? {},
    creation_date: seconds(user.createdAt),
    last_authentication_date: seconds(user.lastLoginAt),
  };
}
