import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, startServerProcess } from '@tessera/testing';

// Issue 14, item 4, as it was found: a container restarted on the same volume found the LOCK of its
// previous incarnation (a pid of another pid namespace, alive or not here) and could never start again.
describe('the server over a data directory locked by another container', () => {
  const dataDir = makeTempDir('tessera-stale-lock-');
  afterAll(() => dataDir.remove());

  it('says who holds a fresh lock and how to clear it, and takes over one its owner stopped refreshing', async () => {
    const cluster = join(dataDir.path, 'clusters', 'tessera-platform');
    mkdirSync(cluster, { recursive: true });
    const lock = join(cluster, 'LOCK');
    // pid 1 is alive in every pid namespace: only the owner's namespace and heartbeat tell it apart.
    const owner = { pid: 1, host: 'tessera-0-previous', bootId: 'another-boot', pidNamespace: 'pid:[4026532111]', startedAt: '2026-11-25T08:00:00.000Z', token: 'previous-container' };
    writeFileSync(lock, JSON.stringify(owner));
    // While its owner lives, it refreshes the lock, as a running Tessera does every 2 s.
    const heartbeat = setInterval(() => utimesSync(lock, new Date(), new Date()), 500);
    const refused = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_EXAMPLE_APP: '' } })
      .then(
        async (unexpected) => {
          await unexpected.stop();
          return '';
        },
        (error: unknown) => String(error),
      )
      .finally(() => clearInterval(heartbeat));
    expect(refused).toContain('Tessera failed to start');
    expect(refused).toContain(`in use by process 1 on host "tessera-0-previous", started 2026-11-25T08:00:00.000Z`);
    expect(refused).toContain(`delete ${lock} and start again`);
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ token: 'previous-container' });

    // The previous container died a minute ago: its lock is no longer refreshed.
    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(lock, minuteAgo, minuteAgo);
    const server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_EXAMPLE_APP: '' } });
    try {
      expect(server.output()).toMatch(/took over the lock of the data directory .*tessera-platform from process 1 on host \\?"tessera-0-previous\\?".*has not been refreshed for \d+ s/);
      expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: expect.any(Number), host: expect.not.stringMatching('tessera-0-previous') });
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  }, 180_000);
});
