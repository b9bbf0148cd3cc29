import { loadSettings } from '@tessera/settings';
import { makeTempDir, portTakenError } from '@tessera/testing';
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { startHost } from './host';

// A host whose HTTP port is taken fails to start and releases what it had started (the data directory's
// lock above all), so a second try over the same directory, in the same process, starts.
describe('a host whose port is taken', () => {
  const dir = makeTempDir('tessera-host-port-');
  let holder: Server;

  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '0.0.0.0', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve));
    dir.remove();
  });

  it('fails with EADDRINUSE and lets a later host over the same data directory start', async () => {
    const taken = String((holder.address() as { port: number }).port);
    const settings = (port: string) => loadSettings({ PORT: port, HOST: '0.0.0.0', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: '', LOG_LEVEL: 'silent', TESSERA_ADMIN_PASSWORD: 'port-taken-password' });
    const failure: unknown = await startHost(settings(taken)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'EADDRINUSE' });
    // What the test hosts' retry on another port (startOnFreePort) recognises.
    expect(portTakenError(failure, Number(taken))).toBe(true);
    // The failed host opened the platform's database (it bootstrapped the administrator) and closed it again.
    const locks = (readdirSync(dir.path, { recursive: true }) as string[]).filter((path) => path.endsWith('LOCK'));
    expect(locks).toEqual([]);
    const host = await startHost(settings('0'));
    try {
      const response = await fetch(`${host.url}/api/admin/v3.0/auth/providers/local-userpass/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'port-taken-password' }) });
      expect(response.status).toBe(200);
    } finally {
      await host.close();
    }
  });
});
