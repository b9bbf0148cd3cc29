import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { cliWithApp, tessera } from './tessera-cli';

const password = 'access-list-cli-password';

// realm-cli's `accessList` commands on the built `tessera` binary, as a subprocess against the real host.
describe('tessera accessList', () => {
  const work = makeTempDir('tessera-access-list-cli-');
  let host: TestHost;
  let env: Record<string, string>;
  let clientAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    ({ env, clientAppId } = await cliWithApp(host.url, password, work.path, 'cli-guarded', join(work.path, 'app')));
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    work.remove();
  });

  const listed = async (): Promise<Array<{ address: string; comment?: string }>> => {
    const run = await tessera(['accessList', 'list', '--app', clientAppId, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as Array<{ address: string; comment?: string }>;
  };

  it('creates, lists, updates and deletes entries with realm-cli flags', async () => {
    expect(await listed()).toEqual([]);
    const created = await tessera(['accessList', 'create', '--app', clientAppId, '--ip', '10.0.0.0/8', '--comment', 'office'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/Successfully created allowed IP, id: [0-9a-f]{24}/);
    expect((await tessera(['access-list', 'create', '--app', clientAppId, '--allow-all'], env)).code).toBe(0);
    expect((await listed()).map((entry) => entry.address)).toEqual(['10.0.0.0/8', '0.0.0.0']);

    const updated = await tessera(['accessList', 'update', '--app', clientAppId, '--ip', '10.0.0.0/8', '--new-ip', '10.1.0.0/16', '--comment', 'branch'], env);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toMatch(/Successfully updated allowed IP/);
    expect((await listed())[0]).toMatchObject({ address: '10.1.0.0/16', comment: 'branch' });

    const deleted = await tessera(['accessList', 'delete', '--app', clientAppId, '--ip', '10.1.0.0/16', '0.0.0.0'], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(await listed()).toEqual([]);
  });

  it('refuses ambiguous or missing input, and an entry it cannot find, with a usage error', async () => {
    expect((await tessera(['accessList', 'create', '--app', clientAppId, '--ip', '1.2.3.4', '--allow-all'], env)).stderr).toMatch(/exactly one of --ip, --use-current and --allow-all/);
    expect((await tessera(['accessList', 'create', '--app', clientAppId], env)).code).not.toBe(0);
    expect((await tessera(['accessList', 'update', '--app', clientAppId, '--ip', '1.2.3.4'], env)).stderr).toMatch(/must set either --new-ip or --comment/);
    expect((await tessera(['accessList', 'delete', '--app', clientAppId, '--ip', '9.9.9.9'], env)).stderr).toMatch(/unable to find allowed IP: 9\.9\.9\.9/);
    const bad = await tessera(['accessList', 'create', '--app', clientAppId, '--ip', 'example.com'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/IP address or a CIDR block/);
  });
});
