import { generatePassword, hashPassword, verifyPassword } from '@tessera/credentials';
import { isDuplicateKeyError } from '@tessera/datastore';
import { newObjectIdHex } from './ids';
import { type PlatformDatabase } from './platform-database';

export interface AdminUser {
  _id: string;
  username: string;
  passwordHash: string;
  /** Groups (projects) this admin manages. */
  groupIds: string[];
  created: string;
}

export interface AdminBootstrap {
  groupId: string;
  username: string;
  /** Set only when this call generated the password: it is shown once and never stored in clear. */
  generatedPassword?: string;
}

/** Sessions recorded before they carried an end lasted as long as the refresh token then: 60 days. */
const legacySessionLifetimeMs = 60 * 24 * 60 * 60 * 1000;

/**
 * Administrators of this server (`admin_users`, usernames unique), their refresh-token sessions
 * (`admin_sessions`) and the single group (project) their apps live in (`meta`). Passwords are stored as
 * scrypt hashes only.
 */
export class AdminUserStore {
  constructor(private readonly db: PlatformDatabase) {}

  /**
   * Makes sure the group and the named admin exist. A configured password replaces the stored one; with
   * none configured, a first start generates one and returns it so the caller can print it once. Two
   * processes bootstrapping at once agree on one group and one admin: the unique keys pick the winner, and
   * only the winner reports a generated password.
   */
  async bootstrap(username: string, configuredPassword: string | undefined): Promise<AdminBootstrap> {
    const groupId = await this.ensureGroup();
    const users = await this.db.collection('admin_users');
    const existing = (await users.findOne({ username })) as AdminUser | null;
    if (!existing) {
      const generatedPassword = configuredPassword === undefined ? generatePassword() : undefined;
      const user: AdminUser = { _id: newObjectIdHex(), username, passwordHash: await hashPassword(configuredPassword ?? generatedPassword!), groupIds: [groupId], created: new Date().toISOString() };
      try {
        await users.insertOne({ ...user });
        return generatedPassword ? { groupId, username, generatedPassword } : { groupId, username };
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        return this.bootstrap(username, configuredPassword);
      }
    }
    if (configuredPassword && !(await verifyPassword(configuredPassword, existing.passwordHash))) {
      await users.updateOne({ _id: existing._id }, { $set: { passwordHash: await hashPassword(configuredPassword) } });
    }
    return { groupId, username };
  }

  private async ensureGroup(): Promise<string> {
    const meta = await this.db.collection('meta');
    const existing = await meta.findOne({ _id: 'group' });
    if (existing) return String(existing['group_id']);
    try {
      await meta.insertOne({ _id: 'group', group_id: newObjectIdHex() });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    return String((await meta.findOne({ _id: 'group' }))?.['group_id']);
  }

  async authenticate(username: string, password: string): Promise<AdminUser | undefined> {
    const user = (await (await this.db.collection('admin_users')).findOne({ username })) as AdminUser | null;
    if (!user) {
      // Spend the same time as a real check so a wrong username cannot be told from a wrong password.
      await verifyPassword(password, 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=');
      return undefined;
    }
    return (await verifyPassword(password, user.passwordHash)) ? user : undefined;
  }

  /**
   * Records a session that ends `lifetimeSeconds` from now; its refresh and access tokens carry its id, so
   * closing it revokes both. Sessions past their end are swept here, as each login adds one.
   */
  async openSession(userId: string, lifetimeSeconds: number): Promise<string> {
    const sessions = await this.db.collection('admin_sessions');
    const now = new Date();
    await sessions.deleteMany({ $or: [{ expires_at: { $lte: now } }, { expires_at: { $exists: false }, created: { $lte: new Date(now.getTime() - legacySessionLifetimeMs) } }] });
    const sessionId = newObjectIdHex();
    await sessions.insertOne({ _id: sessionId, user_id: userId, created: now, expires_at: new Date(now.getTime() + lifetimeSeconds * 1000) });
    return sessionId;
  }

  /** The admin of a session that is open and not past its end. */
  async sessionUser(sessionId: string): Promise<AdminUser | undefined> {
    const session = await (await this.db.collection('admin_sessions')).findOne({ _id: sessionId });
    if (!session) return undefined;
    const expiresAt = session['expires_at'] instanceof Date ? session['expires_at'] : new Date(new Date(session['created'] as Date).getTime() + legacySessionLifetimeMs);
    if (expiresAt.getTime() <= Date.now()) return undefined;
    return this.get(String(session['user_id']));
  }

  async closeSession(sessionId: string): Promise<boolean> {
    return (await (await this.db.collection('admin_sessions')).deleteOne({ _id: sessionId })).deletedCount > 0;
  }

  async get(id: string): Promise<AdminUser | undefined> {
    return ((await (await this.db.collection('admin_users')).findOne({ _id: id })) as AdminUser | null) ?? undefined;
  }

  async groupId(): Promise<string | undefined> {
    const group = await (await this.db.collection('meta')).findOne({ _id: 'group' });
    return group ? String(group['group_id']) : undefined;
  }
}
