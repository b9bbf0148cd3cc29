import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, startServerProcess } from '@tessera/testing';
import { Realm, realmApp } from '../client-api/realm-helpers';

/** Every directory and file under `root` with its permission bits. */
function modes(root: string): { path: string; dir: boolean; mode: number }[] {
  const out: { path: string; dir: boolean; mode: number }[] = [{ path: root, dir: true, mode: statSync(root).mode & 0o777 }];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) out.push(...modes(path));
    else out.push({ path, dir: false, mode: statSync(path).mode & 0o777 });
  }
  return out;
}

// Issue 14, item 9 (file modes): the log was 0644 and the directories 0755 under the data directory.
describe('the data directory of a running server', () => {
  const parent = makeTempDir('tessera-modes-');
  afterAll(() => parent.remove());

  it('holds only 0700 directories and 0600 files, a pre-existing 0755 data directory included', async () => {
    const dataDir = join(parent.path, 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir, TESSERA_ADMIN_PASSWORD: 'file-modes-password' } });
    try {
      const clientAppId = /app "todo": app id (\S+)/.exec(server.output())?.[1] as string;
      expect(clientAppId).toBeTruthy();
      // App data (an app cluster of its own), a user, and a reset mail in the outbox.
      const app = realmApp(server.url, clientAppId);
      const user = await app.logIn(Realm.Credentials.anonymous(false));
      await user.mongoClient('mongodb-atlas').db('todo').collection('items').insertOne({ summary: 'private', owner_id: user.id });
      await app.emailPasswordAuth.registerUser({ email: 'modes@example.com', password: 'modes-password' });
      await app.emailPasswordAuth.sendResetPasswordEmail({ email: 'modes@example.com' });

      const found = modes(dataDir);
      expect(found.filter((entry) => !entry.dir).map((entry) => entry.path)).toEqual(expect.arrayContaining([expect.stringMatching(/clusters\/tessera-platform\/wal-\d+\.log$/), expect.stringMatching(/platform\/mail\/outbox\.jsonl$/)]));
      expect(found.filter((entry) => entry.path.includes(`${join('clusters', '')}`) && /wal-/.test(entry.path)).length).toBeGreaterThanOrEqual(2);
      const loose = found.filter((entry) => entry.mode !== (entry.dir ? 0o700 : 0o600)).map((entry) => `${entry.mode.toString(8)} ${entry.path}`);
      expect(loose).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
