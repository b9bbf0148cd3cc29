import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { startTestHost, type TestHost } from '../support/test-host';
import { cliWithApp, tessera } from './tessera-cli';

const password = 'realm-cli-names-password';

// realm-cli's own spellings on the built `tessera` binary, as a script written for realm-cli runs them: the
// singular command names (`app`, `user`, `secret`, `functions`, `log`), `-a/--app` where Tessera says
// `--remote`, `function run` with one `--args` per argument, and `profiles list`.
describe("tessera with realm-cli's command names and flags", () => {
  const work = makeTempDir('tessera-realm-cli-names-');
  let host: TestHost;
  let env: Record<string, string>;
  let clientAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    ({ env, clientAppId } = await cliWithApp(host.url, password, work.path, 'cli-names', join(work.path, 'app')));
    const admin = await AdminSession.login(host, 'admin', password);
    const apps = await admin.request<{ _id: string; client_app_id: string }[]>('GET', `/groups/${admin.groupId}/apps`);
    const appId = apps.body.find((app) => app.client_app_id === clientAppId)!._id;
    const created = await admin.request('POST', admin.app(appId, '/functions'), { name: 'echo', private: false, source: 'exports = (...args) => args;' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    for (const provider of [{ type: 'local-userpass', config: { autoConfirm: true, resetPasswordUrl: 'http://localhost/reset' } }, { type: 'api-key' }]) {
      const added = await admin.request('POST', admin.app(appId, '/auth_providers'), provider);
      expect(added.status, JSON.stringify(added.body)).toBe(201);
    }
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    work.remove();
  });

  const json = async (args: string[]): Promise<unknown> => {
    const run = await tessera([...args, '--json'], env);
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    return JSON.parse(run.stdout) as unknown;
  };

  it('runs a function with one --args per argument as realm-cli reads them, and the whole list as one JSON array', async () => {
    expect(await json(['function', 'run', '--app', clientAppId, '--name', 'echo', '--args', '2', '--args', '{"a": 1}', '--args', 'hello', '--args', '-1.5e2', '--args', '[1, "x"]'])).toMatchObject({ result: [2, { a: 1 }, 'hello', -150, [1, 'x']] });
    expect(await json(['functions', 'run', '-a', clientAppId, '--name', 'echo', '--args', '[2, 3]'])).toMatchObject({ result: [2, 3] });
    expect(await json(['function', 'run', '-a', clientAppId, '--name', 'echo'])).toMatchObject({ result: [] });
    const broken = await tessera(['function', 'run', '-a', clientAppId, '--name', 'echo', '--args', '{"a":'], env);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('is not valid JSON');
  });

  it('takes the singular command names and -a/--app on secrets, users, logs and apps', async () => {
    const secret = await tessera(['secret', 'create', '--app', clientAppId, '--name', 'apiToken', '--value', 's3cret'], env);
    expect(secret.code, secret.stderr).toBe(0);
    expect(await json(['secrets', 'list', '-a', clientAppId])).toEqual([expect.objectContaining({ name: 'apiToken' })]);
    const user = await tessera(['user', 'create', '--app', clientAppId, '--type', 'email', '--email', 'ada@example.com', '--password', 'analytical'], env);
    expect(user.code, user.stderr).toBe(0);
    const key = (await json(['user', 'create', '-a', clientAppId, '--type', 'api-key', '--name', 'ci-server'])) as { id: string; enabled: boolean; name: string; key: string };
    expect(key).toMatchObject({ enabled: true, name: 'ci-server' });
    expect(key.key.length).toBeGreaterThan(32);
    const users = (await json(['users', 'list', '-a', clientAppId])) as Array<{ data: { email?: string } }>;
    expect(users.map((user) => user.data.email).filter(Boolean)).toEqual(['ada@example.com']);
    expect(Array.isArray(await json(['log', 'list', '--app', clientAppId]))).toBe(true);
    expect(await json(['app', 'list'])).toEqual(expect.arrayContaining([expect.objectContaining({ client_app_id: clientAppId })]));
    // realm-cli's `app diff`, with --app as it names the app: the local directory lacks what the admin API added.
    const diff = await tessera(['app', 'diff', '--app', clientAppId, '--local', join(work.path, 'app')], env);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('removed auth_providers/api-key.json');
    // --remote still works, and names the same option.
    expect(await json(['secrets', 'list', '--remote', clientAppId])).toHaveLength(1);
  });

  it('lists the login profiles', async () => {
    expect(await json(['profiles', 'list'])).toEqual([expect.objectContaining({ profile: 'default', url: host.url, user: 'admin', logged_in: true })]);
    expect((await tessera(['profile', 'list'], env)).stdout).toContain('default');
  });
});
