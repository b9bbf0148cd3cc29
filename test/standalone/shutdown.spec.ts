import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { anonymousLogin, eventually, makeTempDir, repositoryRoot, type ServerProcess, startServerProcess } from '@tessera/testing';

/** CPU seconds the process has used so far (user + system, from /proc). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** True while any process of the group `pid` leads is alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

const drainSeconds = 1;

// The built server started as users start it, asked to stop (SIGTERM, as Kubernetes does) while a function
// loops forever: it drains for TESSERA_SHUTDOWN_DRAIN_SECONDS, terminates the function and exits; nothing of
// it keeps spinning. (The time limit is 300 s: only the shutdown can have stopped the loop.)
describe.skipIf(process.platform !== 'linux')('stopping the server while a runaway function runs', () => {
  const app = makeTempDir('tessera-shutdown-app-');
  const dataDir = makeTempDir('tessera-shutdown-data-');
  let server: ServerProcess;

  beforeAll(async () => {
    cpSync(join(repositoryRoot, 'examples/todo'), app.path, { recursive: true });
    mkdirSync(join(app.path, 'functions/spin'));
    writeFileSync(join(app.path, 'functions/spin/config.json'), JSON.stringify({ name: 'spin', private: false }));
    // It tells the test it started (an item the caller can list), then loops.
    writeFileSync(
      join(app.path, 'functions/spin/source.js'),
      `exports = async function () {
        const items = context.services.get('mongodb-atlas').db('todo').collection('items');
        await items.insertOne({ _partition: context.user.id, owner_id: context.user.id, summary: 'spinning', isComplete: false });
        for (;;) {}
      };`,
    );
    server = await startServerProcess({
      env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_EXAMPLE_APP: app.path, TESSERA_ADMIN_PASSWORD: 'shutdown-test-password', TESSERA_SHUTDOWN_DRAIN_SECONDS: String(drainSeconds), TESSERA_FUNCTION_TIME_LIMIT_SECONDS: '300' },
    });
  }, 90_000);

  afterAll(async () => {
    if (server && groupAlive(server.pid)) await server.stop('SIGKILL');
    app.remove();
    dataDir.remove();
  });

  it('exits within the drain bound plus a margin and leaves no spinning isolate behind', { timeout: 90_000 }, async () => {
    const clientAppId = /app id (\S+)/.exec(server.output())![1];
    const api = `${server.url}/api/client/v2.0/app/${clientAppId}`;
    const token = (await anonymousLogin(server.url, clientAppId)).accessToken;
    const call = fetch(`${api}/functions/call`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ name: 'spin', arguments: [] }) }).then(
      (response) => response.status,
      () => 'connection closed',
    );
    const post = (name: string) => fetch(`${api}/functions/call`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ name, arguments: [] }) });
    await eventually(async () => expect(await (await post('listMyItems')).text()).toContain('spinning'), { timeoutMs: 20_000, intervalMs: 100 });
    // The loop burns CPU now: the process is far from idle.
    const before = cpuSeconds(server.pid);
    await eventually(() => cpuSeconds(server.pid) - before >= 0.2, { timeoutMs: 20_000, intervalMs: 100 });

    const signalled = Date.now();
    process.kill(server.pid, 'SIGTERM');
    await eventually(() => !groupAlive(server.pid), { timeoutMs: (drainSeconds + 15) * 1000, intervalMs: 50 });
    const stoppedAfterMs = Date.now() - signalled;

    expect(stoppedAfterMs).toBeLessThan((drainSeconds + 10) * 1000);
    expect(await server.stop()).toBe(0);
    // The caller was answered (the runtime is shutting down) or its connection closed; it never hangs.
    expect([503, 'connection closed']).toContain(await call);
    expect(server.output()).not.toContain('did not stop within');
  });
});
