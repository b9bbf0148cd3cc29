import { appendFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, startServerProcess } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';

// Issue 14, item 3, as it was found: 67 acknowledged writes, four bytes flipped in the middle of the log,
// and a restart that came up "ready" with 33 of them gone. Now the server refuses to start, names the file
// and offset, and leaves the bytes alone; a torn last record is still cut, and the log says so.
describe('the server over a damaged write-ahead log', () => {
  const dataDir = makeTempDir('tessera-corrupt-log-');
  afterAll(() => dataDir.remove());

  const platformCluster = join(dataDir.path, 'clusters', 'tessera-platform');
  const lastSegment = () => join(platformCluster, readdirSync(platformCluster).filter((f) => /^wal-\d+\.log$/.test(f)).sort().pop() as string);

  async function start() {
    return startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_EXAMPLE_APP: '', TESSERA_ADMIN_PASSWORD: 'corrupt-log-password' }, timeoutMs: 90_000 });
  }

  it('refuses to start over mid-log damage without touching it, and cuts only a torn tail', async () => {
    const server = await start();
    // 67 acknowledged writes to the platform cluster (the one every start opens): apps created by an admin.
    const admin = await AdminSession.login(server, 'admin', 'corrupt-log-password');
    for (let i = 0; i < 67; i++) await admin.createApp(`app${i}`);
    const apps = (await admin.request<unknown[]>('GET', `/groups/${admin.groupId}/apps`)).body.length;
    expect(apps).toBeGreaterThanOrEqual(67);
    expect(await server.stop()).toBe(0);

    const path = lastSegment();
    const intact = readFileSync(path);
    const damaged = Buffer.from(intact);
    const middle = Math.floor(damaged.length / 2);
    for (let i = middle; i < middle + 4; i++) damaged[i] ^= 0xff;
    writeFileSync(path, damaged);

    const refused = await start().then(
      async (unexpected) => {
        await unexpected.stop();
        return '';
      },
      (error: unknown) => String(error),
    );
    expect(refused).toContain('Tessera failed to start');
    expect(refused).toMatch(new RegExp(`the record at byte \\d+ of ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ bytes\\) fails its checksum, and \\d+ intact records follow it`));
    expect(refused).toContain(`TESSERA_DATASTORE_TRUNCATE_LOG=${path}:`);
    expect(readFileSync(path).equals(damaged)).toBe(true);

    // The undamaged log with half a record after it, as a crash in the middle of an append leaves it.
    writeFileSync(path, intact);
    appendFileSync(path, intact.subarray(0, 30));
    const restarted = await start();
    try {
      expect(restarted.output()).toContain(`recovery: cut 30 bytes off the end of ${path} at byte ${intact.length}`);
      expect(readFileSync(path).subarray(0, intact.length).equals(intact)).toBe(true);
      const listed = await (await AdminSession.login(restarted, 'admin', 'corrupt-log-password')).request<unknown[]>('GET', `/groups/${admin.groupId}/apps`);
      expect(listed.body).toHaveLength(apps);
    } finally {
      await restarted.stop();
    }
  }, 240_000);
});
