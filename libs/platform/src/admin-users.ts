import { join } from 'node:path';
import { newObjectIdHex } from './ids';
import { readJsonFile, writeJsonFile } from './json-file';
import { generatePassword, hashPassword, verifyPassword } from './passwords';

export interface AdminUser {
  _id: string;
  username: string;
  passwordHash: string;
  /** Groups (projects) this admin manages. */
  groupIds: string[];
  created: string;
}

interface AdminState {
  groupId: string;
  users: AdminUser[];
  /** Live refresh-token sessions: session id -> admin user id. */
  sessions?: Record<string, string>;
}

export interface AdminBootstrap {
  groupId: string;
  username: string;
  /** Set only when this call generated the password: it is shown once and never stored in clear. */
  generatedPassword?: string;
}

/**
 * Administrators of this server and the single group (project) their apps live in, kept in
 * `<dataDir>/platform/admin.json`. Passwords are stored as scrypt hashes only.
 */
export class FileAdminUserStore {
  private state: Promise<AdminState | undefined> | undefined;

  constructor(private readonly dataDir: string) {}

  private get path(): string {
    return join(this.dataDir, 'platform', 'admin.json');
  }

  private read(): Promise<AdminState | undefined> {
    const state = this.state ?? readJsonFile<AdminState>(this.path);
    this.state = state;
    return state;
  }

  private async write(state: AdminState): Promise<void> {
    await writeJsonFile(this.path, state);
    this.state = Promise.resolve(state);
  }

  /**
   * Makes sure the group and the named admin exist. A configured password replaces the stored one; with
   * none configured, a first start generates one and returns it so the caller can print it once.
   */
  async bootstrap(username: string, configuredPassword: string | undefined): Promise<AdminBootstrap> {
    const state: AdminState = (await this.read()) ?? { groupId: newObjectIdHex(), users: [] };
    const existing = state.users.find((user) => user.username === username);
    let generatedPassword: string | undefined;
    if (!existing) {
      const password = configuredPassword ?? (generatedPassword = generatePassword());
      state.users.push({ _id: newObjectIdHex(), username, passwordHash: await hashPassword(password), groupIds: [state.groupId], created: new Date().toISOString() });
      await this.write(state);
    } else if (configuredPassword && !(await verifyPassword(configuredPassword, existing.passwordHash))) {
      existing.passwordHash = await hashPassword(configuredPassword);
      await this.write(state);
    }
    return generatedPassword ? { groupId: state.groupId, username, generatedPassword } : { groupId: state.groupId, username };
  }

  async authenticate(username: string, password: string): Promise<AdminUser | undefined> {
    const user = (await this.read())?.users.find((candidate) => candidate.username === username);
    if (!user) {
      // Spend the same time as a real check so a wrong username cannot be told from a wrong password.
      await verifyPassword(password, 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=');
      return undefined;
    }
    return (await verifyPassword(password, user.passwordHash)) ? user : undefined;
  }

  /** Records a refresh-token session; the refresh token carries its id. */
  async openSession(userId: string): Promise<string> {
    const state = await this.read();
    if (!state) throw new Error('admin store is not bootstrapped');
    const sessionId = newObjectIdHex();
    state.sessions = { ...state.sessions, [sessionId]: userId };
    await this.write(state);
    return sessionId;
  }

  async sessionUser(sessionId: string): Promise<AdminUser | undefined> {
    const state = await this.read();
    const userId = state?.sessions?.[sessionId];
    return userId ? state.users.find((user) => user._id === userId) : undefined;
  }

  async closeSession(sessionId: string): Promise<boolean> {
    const state = await this.read();
    if (!state?.sessions?.[sessionId]) return false;
    const { [sessionId]: _closed, ...rest } = state.sessions;
    state.sessions = rest;
    await this.write(state);
    return true;
  }

  async get(id: string): Promise<AdminUser | undefined> {
    return (await this.read())?.users.find((user) => user._id === id);
  }

  async groupId(): Promise<string | undefined> {
    return (await this.read())?.groupId;
  }
}
