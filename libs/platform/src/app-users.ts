import { createHash, randomBytes } from 'node:crypto';
import type { CollectionHandle, DataSourceClient, Document } from '@tessera/datastore';
import { isDuplicateKeyError } from '@tessera/datastore';
import { newObjectIdHex } from './ids';

/** One way a user logs in: `id` is the identity's id within its provider (an email, a key id, a `sub`). */

/** Sessions of one user the admin API lists at most, the newest. */
export const SESSIONS_LISTED = 1_000;
export interface Identity {
  id: string;
  provider_type: string;
  provider_id: string;
  provider_data?: Record<string, unknown>;
}

export interface AppUser {
  _id: string;
  /** `normal` for people, `server` for server API keys. */
  type: 'normal' | 'server';
  identities: Identity[];
  /** Metadata the providers gave (email, name, metadata_fields of custom tokens). */
  data: Record<string, unknown>;
  disabled: boolean;
  createdAt: Date;
  lastLoginAt?: Date;
}

export interface Session {
  _id: string;
  userId: string;
  deviceId: string;
  createdAt: Date;
  expiresAt: Date;
  /** When its refresh token last got an access token (absent: not since the login). */
  lastUsedAt?: Date;
}

export interface UserpassAccount {
  /** The email, as registered. */
  _id: string;
  passwordHash: string;
  confirmed: boolean;
  userId?: string;
  createdAt: Date;
  /** The pending user id the admin API lists a registration under (accounts made before it had one: none). */
  registrationId?: string;
  /** An imported account (App Services never exported password hashes): it logs in only after a password reset. */
  resetRequired?: boolean;
}

export type UserpassTokenPurpose = 'confirm' | 'reset';

export interface UserpassToken {
  /** The tokenId sent with the token. */
  _id: string;
  tokenHash: string;
  email: string;
  purpose: UserpassTokenPurpose;
  expiresAt: Date;
}

export interface ApiKey {
  _id: string;
  name: string;
  keyHash: string;
  disabled: boolean;
  /** The user the key logs in as: its owner for a user key, the key's own server user for a server key. */
  userId: string;
  server: boolean;
  createdAt: Date;
}

/** SHA-256 hex of a high-entropy secret (API keys, tokens): enough, since they are random, not chosen. */
export function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('hex');
}

/**
 * The client users of one app, kept in the platform database (`app-<app id>`): users and their
 * identities, refresh-token sessions, email/password accounts and their tokens, API keys, push
 * registrations. Only this class touches those collections. The client API writes them; the admin API
 * (users, server API keys) and the function runtime (`run_as_user_id`) read and manage them here.
 */
export class AppUserStore {
  private ready?: Promise<void>;

  constructor(
    private readonly client: DataSourceClient,
    readonly appId: string,
  ) {}

  private collection(name: string): CollectionHandle {
    return this.client.db(`app-${this.appId}`).collection(name);
  }

  private get users(): CollectionHandle {
    return this.collection('users');
  }
  private get identities(): CollectionHandle {
    return this.collection('identities');
  }
  private get sessions(): CollectionHandle {
    return this.collection('sessions');
  }
  private get accounts(): CollectionHandle {
    return this.collection('userpass_accounts');
  }
  private get tokens(): CollectionHandle {
    return this.collection('userpass_tokens');
  }
  private get apiKeys(): CollectionHandle {
    return this.collection('api_keys');
  }

  /** Creates the indexes once per process. */
  init(): Promise<void> {
    this.ready ??= (async () => {
      await this.apiKeys.createIndex({ keyHash: 1 }, { unique: true });
      await this.apiKeys.createIndex({ userId: 1, name: 1 }, { unique: true });
      await this.sessions.createIndex({ userId: 1 });
    })();
    return this.ready;
  }

  // Users and identities

  async findUser(userId: string): Promise<AppUser | null> {
    return (await this.users.findOne({ _id: userId })) as AppUser | null;
  }

  async userByIdentity(providerType: string, externalId: string): Promise<AppUser | null> {
    const link = await this.identities.findOne({ _id: identityKey(providerType, externalId) });
    return link ? this.findUser(String(link['userId'])) : null;
  }

  /** `id`: chosen ahead (an auth event names the user before it is written); a new ObjectId by default. */
  async createUser(type: AppUser['type'], data: Record<string, unknown> = {}, id: string = newObjectIdHex()): Promise<AppUser> {
    const user: AppUser = { _id: id, type, identities: [], data, disabled: false, createdAt: new Date() };
    await this.users.insertOne(user as unknown as Document);
    return user;
  }

  /**
   * Attaches an identity to a user. False when the identity already belongs to a user (the unique `_id`
   * of the link decides, so two concurrent first logins cannot create two owners).
   */
  async addIdentity(userId: string, identity: Identity): Promise<boolean> {
    try {
      await this.identities.insertOne({ _id: identityKey(identity.provider_type, identity.id), userId });
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
    await this.users.updateOne({ _id: userId }, { $push: { identities: identity } });
    return true;
  }

  /**
   * Moves an email/password user to another email: its account (password and confirmation kept), its identity
   * and `data.email`. The new email's identity link is written first, so an email another user holds is
   * refused ('taken') before anything changes; the old email's account, link and pending tokens go last.
   */
  async changeUserpassEmail(userId: string, email: string): Promise<'changed' | 'unchanged' | 'taken' | 'no-user' | 'no-identity'> {
    const user = await this.findUser(userId);
    if (!user) return 'no-user';
    const identity = user.identities.find((candidate) => candidate.provider_type === 'local-userpass');
    if (!identity) return 'no-identity';
    const from = identity.id;
    if (from === email) return 'unchanged';
    try {
      await this.identities.insertOne({ _id: identityKey('local-userpass', email), userId });
    } catch (error) {
      if (isDuplicateKeyError(error)) return 'taken';
      throw error;
    }
    const account = await this.accounts.findOne({ _id: from });
    if (account) {
      try {
        await this.accounts.insertOne({ ...account, _id: email });
      } catch (error) {
        await this.identities.deleteOne({ _id: identityKey('local-userpass', email) });
        if (isDuplicateKeyError(error)) return 'taken';
        throw error;
      }
    }
    const identities = user.identities.map((candidate) => (candidate === identity ? { ...candidate, id: email } : candidate));
    await this.users.updateOne({ _id: userId }, { $set: { identities, 'data.email': email } });
    await this.accounts.deleteOne({ _id: from });
    await this.identities.deleteOne({ _id: identityKey('local-userpass', from) });
    await this.tokens.deleteMany({ email: from });
    return 'changed';
  }

  async updateUserData(userId: string, data: Record<string, unknown>): Promise<void> {
    const set: Document = { lastLoginAt: new Date() };
    for (const [key, value] of Object.entries(data)) set[`data.${key}`] = value;
    await this.users.updateOne({ _id: userId }, { $set: set });
  }

  async deleteUser(user: AppUser): Promise<void> {
    for (const identity of user.identities) await this.identities.deleteOne({ _id: identityKey(identity.provider_type, identity.id) });
    await this.sessions.deleteMany({ userId: user._id });
    await this.apiKeys.deleteMany({ userId: user._id });
    await this.collection('push_registrations').deleteMany({ userId: user._id });
    const emails = user.identities.filter((identity) => identity.provider_type === 'local-userpass').map((identity) => identity.id);
    for (const email of emails) await this.accounts.deleteOne({ _id: email });
    await this.users.deleteOne({ _id: user._id });
  }

  /**
   * Stores a user brought from App Services with its own `_id` and identities (user-import.ts reads them).
   * `unchanged` when that user is already here with the same identities (a re-import); `conflict`, with
   * nothing written, when the id is another user's or an identity or email account belongs to another
   * user. Its email/password identities get accounts that wait for a password reset; its API keys with a
   * known secret log in as it again.
   */
  async importUser({ user, apiKeys }: ImportedUser): Promise<{ status: 'created' | 'unchanged' | 'conflict'; error?: string }> {
    const keyOf = (identity: Identity): string => identityKey(identity.provider_type, identity.id);
    const existing = await this.findUser(user._id);
    if (existing) {
      const same = existing.identities.length === user.identities.length && user.identities.every((identity) => existing.identities.some((other) => keyOf(other) === keyOf(identity)));
      return same ? { status: 'unchanged' } : { status: 'conflict', error: `a different user with id ${user._id} exists (its identities differ)` };
    }
    for (const identity of user.identities) {
      const link = await this.identities.findOne({ _id: keyOf(identity) });
      if (link) return { status: 'conflict', error: `the ${identity.provider_type} identity "${identity.id}" belongs to user ${String(link['userId'])}` };
    }
    const emails = user.identities.filter((identity) => identity.provider_type === 'local-userpass').map((identity) => identity.id);
    for (const email of emails) {
      if (await this.findAccount(email)) return { status: 'conflict', error: `an email/password account "${email}" already exists` };
    }
    const written: Array<() => Promise<unknown>> = [];
    const undo = async (error: string): Promise<{ status: 'conflict'; error: string }> => {
      for (const step of written.reverse()) await step();
      return { status: 'conflict', error };
    };
    try {
      await this.users.insertOne({ ...user, identities: [] });
    } catch (error) {
      if (isDuplicateKeyError(error)) return { status: 'conflict', error: `a different user with id ${user._id} was created meanwhile` };
      throw error;
    }
    written.push(() => this.users.deleteOne({ _id: user._id }));
    for (const identity of user.identities) {
      if (!(await this.addIdentity(user._id, identity))) return undo(`the ${identity.provider_type} identity "${identity.id}" was claimed meanwhile`);
      written.push(() => this.identities.deleteOne({ _id: keyOf(identity) }));
    }
    for (const email of emails) {
      try {
        await this.accounts.insertOne({ _id: email, passwordHash: '', confirmed: true, resetRequired: true, userId: user._id, createdAt: user.createdAt });
      } catch (error) {
        if (isDuplicateKeyError(error)) return undo(`an email/password account "${email}" was created meanwhile`);
        throw error;
      }
      written.push(() => this.accounts.deleteOne({ _id: email }));
    }
    for (const key of apiKeys) {
      try {
        await this.apiKeys.insertOne({ _id: key._id, name: key.name, keyHash: digest(key.key), disabled: key.disabled, userId: user._id, server: user.type === 'server', createdAt: user.createdAt });
      } catch (error) {
        if (isDuplicateKeyError(error)) return undo(`API key ${key._id} (or its secret, or its name for this user) is already in use`);
        throw error;
      }
      written.push(() => this.apiKeys.deleteOne({ _id: key._id }));
    }
    return { status: 'created' };
  }

  /** Users, newest first (the admin API's user list). */
  async listUsers(options: { limit?: number; after?: string } = {}): Promise<AppUser[]> {
    const cursor = this.users.find(options.after ? { _id: { $lt: options.after } } : {}).sort({ _id: -1 });
    if (options.limit) cursor.limit(options.limit);
    return (await cursor.toArray()) as unknown as AppUser[];
  }

  /** Disabling also ends every session: the user's tokens stop working at once. */
  async setUserDisabled(userId: string, disabled: boolean): Promise<boolean> {
    const matched = (await this.users.updateOne({ _id: userId }, { $set: { disabled } })).matchedCount > 0;
    if (matched && disabled) await this.revokeSessions(userId);
    return matched;
  }

  /** Logs the user out everywhere. */
  async revokeSessions(userId: string): Promise<number> {
    return (await this.sessions.deleteMany({ userId })).deletedCount;
  }

  // Sessions (refresh tokens)

  /** Opens a session; the user's sessions past their end are swept here, as each login adds one. */
  async createSession(userId: string, deviceId: string, lifetimeSeconds: number): Promise<Session> {
    const now = new Date();
    await this.sessions.deleteMany({ userId, expiresAt: { $lte: now } });
    const session: Session = { _id: newObjectIdHex(), userId, deviceId, createdAt: now, expiresAt: new Date(now.getTime() + lifetimeSeconds * 1000) };
    await this.sessions.insertOne(session as unknown as Document);
    return session;
  }

  async findSession(sessionId: string): Promise<Session | null> {
    return (await this.sessions.findOne({ _id: sessionId })) as Session | null;
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    return (await this.sessions.deleteOne({ _id: sessionId })).deletedCount > 0;
  }

  /**
   * The user's sessions that have not ended, newest first, at most SESSIONS_LISTED (the admin API lists them;
   * every login adds one, so a user who never logs out could otherwise make one answer of any size).
   */
  async listSessions(userId: string): Promise<Session[]> {
    // Ids grow with time: they order sessions opened within the same millisecond.
    return (await this.sessions
      .find({ userId, expiresAt: { $gt: new Date() } })
      .sort({ createdAt: -1, _id: -1 })
      .limit(SESSIONS_LISTED)
      .toArray()) as unknown as Session[];
  }

  /** Ends one session of the user; false when the user has no such session. */
  async deleteUserSession(userId: string, sessionId: string): Promise<boolean> {
    return (await this.sessions.deleteOne({ _id: sessionId, userId })).deletedCount > 0;
  }

  /** Records that the session's refresh token was used now (a refresh). */
  async touchSession(sessionId: string): Promise<void> {
    await this.sessions.updateOne({ _id: sessionId }, { $set: { lastUsedAt: new Date() } });
  }

  // Email/password accounts and their tokens

  async findAccount(email: string): Promise<UserpassAccount | null> {
    return (await this.accounts.findOne({ _id: email })) as UserpassAccount | null;
  }

  /** False when the email is taken. */
  async createAccount(email: string, passwordHash: string): Promise<boolean> {
    try {
      await this.accounts.insertOne({ _id: email, passwordHash, confirmed: false, createdAt: new Date(), registrationId: newObjectIdHex() });
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  /** Registrations still waiting for their confirmation, oldest first, after the one `after` names (the admin API's pending users). */
  async pendingAccounts(options: { after?: string; limit: number }): Promise<UserpassAccount[]> {
    const filter: Document = { confirmed: false, ...(options.after ? { registrationId: { $gt: options.after } } : {}) };
    return (await this.accounts.find(filter).sort({ registrationId: 1 }).limit(options.limit).toArray()) as unknown as UserpassAccount[];
  }

  /** Removes a registration still waiting for its confirmation, and its tokens; false when there is none. */
  async deletePendingAccount(email: string): Promise<boolean> {
    const deleted = (await this.accounts.deleteOne({ _id: email, confirmed: false })).deletedCount > 0;
    if (deleted) await this.tokens.deleteMany({ email });
    return deleted;
  }

  async confirmAccount(email: string): Promise<boolean> {
    return (await this.accounts.updateOne({ _id: email, confirmed: false }, { $set: { confirmed: true } })).modifiedCount > 0;
  }

  /** Also ends an imported account's wait for a password reset. */
  async setPassword(email: string, passwordHash: string): Promise<void> {
    await this.accounts.updateOne({ _id: email }, { $set: { passwordHash }, $unset: { resetRequired: '' } });
  }

  async setAccountUser(email: string, userId: string): Promise<void> {
    await this.accounts.updateOne({ _id: email }, { $set: { userId } });
  }

  async deleteAccount(email: string): Promise<void> {
    await this.accounts.deleteOne({ _id: email });
  }

  /** A new single-use token; returns the secret (only its hash is kept) and its id. */
  async issueToken(email: string, purpose: UserpassTokenPurpose, lifetimeSeconds: number): Promise<{ token: string; tokenId: string }> {
    const token = randomSecret();
    const tokenId = newObjectIdHex();
    await this.tokens.insertOne({ _id: tokenId, tokenHash: digest(token), email, purpose, expiresAt: new Date(Date.now() + lifetimeSeconds * 1000) });
    return { token, tokenId };
  }

  /** Consumes a token: the email it was issued for, or null when it is unknown, used, expired or for another purpose. */
  async consumeToken(tokenId: string, token: string, purpose: UserpassTokenPurpose): Promise<string | null> {
    const stored = (await this.tokens.findOneAndDelete({ _id: tokenId, purpose, tokenHash: digest(token) })) as UserpassToken | null;
    if (!stored || stored.expiresAt.getTime() <= Date.now()) return null;
    return stored.email;
  }

  // API keys

  async createApiKey(key: Omit<ApiKey, '_id' | 'createdAt' | 'disabled'>): Promise<ApiKey | null> {
    const record: ApiKey = { _id: newObjectIdHex(), ...key, disabled: false, createdAt: new Date() };
    try {
      await this.apiKeys.insertOne(record as unknown as Document);
      return record;
    } catch (error) {
      if (isDuplicateKeyError(error)) return null;
      throw error;
    }
  }

  /** A server API key (names unique among server keys): a `server` user of its own that the key logs in as. Returns the secret once; null when the name is taken. */
  async createServerApiKey(name: string): Promise<{ key: ApiKey; secret: string } | null> {
    if (await this.apiKeys.findOne({ server: true, name })) return null;
    const user = await this.createUser('server', { name });
    const secret = randomSecret();
    const key = await this.createApiKey({ name, keyHash: digest(secret), userId: user._id, server: true });
    if (!key) {
      await this.users.deleteOne({ _id: user._id });
      return null;
    }
    await this.addIdentity(user._id, { id: key._id, provider_type: 'api-key', provider_id: 'api-key' });
    return { key, secret };
  }

  async serverApiKeys(): Promise<ApiKey[]> {
    return (await this.apiKeys.find({ server: true }).sort({ createdAt: 1 }).toArray()) as unknown as ApiKey[];
  }

  /** One server API key by id; null for none, or for a key a user made for itself. */
  async serverApiKey(keyId: string): Promise<ApiKey | null> {
    return (await this.apiKeys.findOne({ _id: keyId, server: true })) as ApiKey | null;
  }

  /** Deletes a server API key and its user. */
  async deleteServerApiKey(keyId: string): Promise<boolean> {
    const key = await this.serverApiKey(keyId);
    if (!key) return false;
    await this.apiKeys.deleteOne({ _id: keyId });
    const user = await this.findUser(key.userId);
    if (user) await this.deleteUser(user);
    return true;
  }

  // Push registrations (realm-core's push client)

  async setPushRegistration(userId: string, service: string, registrationToken: string): Promise<void> {
    await this.collection('push_registrations').updateOne({ _id: `${userId}|${service}` }, { $set: { userId, service, registrationToken, updatedAt: new Date() } }, { upsert: true });
  }

  async deletePushRegistration(userId: string, service: string): Promise<void> {
    await this.collection('push_registrations').deleteOne({ _id: `${userId}|${service}` });
  }

  async apiKeysOf(userId: string): Promise<ApiKey[]> {
    return (await this.apiKeys.find({ userId, server: false }).sort({ createdAt: 1 }).toArray()) as unknown as ApiKey[];
  }

  async apiKey(userId: string, keyId: string): Promise<ApiKey | null> {
    return (await this.apiKeys.findOne({ _id: keyId, userId })) as ApiKey | null;
  }

  async apiKeyBySecret(secret: string): Promise<ApiKey | null> {
    return (await this.apiKeys.findOne({ keyHash: digest(secret) })) as ApiKey | null;
  }

  async setApiKeyDisabled(userId: string, keyId: string, disabled: boolean): Promise<boolean> {
    return (await this.apiKeys.updateOne({ _id: keyId, userId }, { $set: { disabled } })).matchedCount > 0;
  }

  async deleteApiKey(userId: string, keyId: string): Promise<boolean> {
    return (await this.apiKeys.deleteOne({ _id: keyId, userId })).deletedCount > 0;
  }
}

function identityKey(providerType: string, externalId: string): string {
  return `${providerType}|${externalId}`;
}

/** A user ready to store, and the API keys (with their secrets) that log in as it. */
export interface ImportedUser {
  user: AppUser;
  apiKeys: Array<{ _id: string; name: string; key: string; disabled: boolean }>;
}
