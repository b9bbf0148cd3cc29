import { isDuplicateKeyError } from '@tessera/datastore';
import { newObjectIdHex } from './ids';
import { type PlatformDatabase } from './platform-database';
import { generatePassword, hashPassword, verifyPassword } from './passwords';

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

  /** Records a refresh-token session; the refresh token carries its id. */
  async openSession(userId: string): Promise<string> {
    const sessionId = newObjectIdHex();
    await (await this.db.collection('admin_sessions')).insertOne({ _id: sessionId, user_id: userId, created: new Date() });
    return sessionId;
  }

  async sessionUser(sessionId: string): Promise<AdminUser | undefined> {
    const session = await (await this.db.collection('admin_sessions')).findOne({ _id: sessionId });
    return session ? this.get(String(session['user_id'])) : undefined;
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
