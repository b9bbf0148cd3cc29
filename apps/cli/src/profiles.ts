import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** What `tessera login` remembers per profile. */
export interface Profile {
  url: string;
  /** The admin user (local login) or the public API key (API key login). */
  username?: string;
  authType?: 'local' | 'api-key';
  accessToken?: string;
  refreshToken?: string;
  groupId?: string;
}

interface ProfileFile {
  profiles: Record<string, Profile>;
}

/**
 * The directory the CLI keeps its profiles in: TESSERA_CONFIG_DIR, else $XDG_CONFIG_HOME/tessera, else
 * ~/.config/tessera (%APPDATA%\tessera on Windows).
 */
export function configDirectory(env: NodeJS.ProcessEnv): string {
  if (env['TESSERA_CONFIG_DIR']) return env['TESSERA_CONFIG_DIR'];
  if (env['XDG_CONFIG_HOME']) return join(env['XDG_CONFIG_HOME'], 'tessera');
  if (process.platform === 'win32' && env['APPDATA']) return join(env['APPDATA'], 'tessera');
  return join(homedir(), '.config', 'tessera');
}

/** Profiles in `<config dir>/profiles.json`, readable by the user only (it holds refresh tokens). */
export class ProfileStore {
  constructor(private readonly directory: string) {}

  get path(): string {
    return join(this.directory, 'profiles.json');
  }

  private async read(): Promise<ProfileFile> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8')) as ProfileFile;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
      throw error;
    }
  }

  /** Every profile, by name. */
  async all(): Promise<Record<string, Profile>> {
    return (await this.read()).profiles;
  }

  async get(name: string): Promise<Profile | undefined> {
    return (await this.read()).profiles[name];
  }

  async save(name: string, profile: Profile): Promise<void> {
    const file = await this.read();
    file.profiles[name] = profile;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    await chmod(temporary, 0o600);
    await rename(temporary, this.path);
  }
}
