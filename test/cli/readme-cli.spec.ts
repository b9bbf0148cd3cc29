import { copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, repositoryRoot, startServerProcess, type ServerProcess } from '@tessera/testing';
import { type CliRun, runCommand } from './tessera-cli';

/** Runs a command as a newcomer types it at the repository root (`npx tessera ...`), in this environment. */
const run = (command: string, args: string[], env: Record<string, string>): Promise<CliRun> => runCommand(command, args, { cwd: repositoryRoot, env: { ...process.env, ...env } });

// The README's CLI section, command by command, through `npx tessera` as npm install linked it: the bin is
// a committed shim (apps/cli/bin), so npm links it on a fresh clone before the first build.
describe("the README's tessera commands, as written", () => {
  const dataDir = makeTempDir('tessera-readme-cli-data-');
  const work = makeTempDir('tessera-readme-cli-work-');
  let server: ServerProcess;
  let appId: string;
  let env: Record<string, string>;
  // `npx tessera` runs the bin npm linked; npx itself costs seconds per call, so after the first test proves
  // that npx finds the link, the rest run the link directly.
  const npxTessera = (...args: string[]): Promise<CliRun> => run(join(repositoryRoot, 'node_modules', '.bin', 'tessera'), args, env);

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'readme-cli-password' } });
    appId = /app id (\S+)/.exec(server.output())![1]!;
    env = { TESSERA_CONFIG_DIR: join(work.path, 'config') };
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
    work.remove();
  });

  it('runs npx tessera through the committed bin that npm install links', async () => {
    const linked = join(repositoryRoot, 'node_modules', '.bin', 'tessera');
    expect(realpathSync(linked)).toBe(join(repositoryRoot, 'apps', 'cli', 'bin', 'tessera.js'));
    const help = await run('npx', ['tessera', '--help'], env);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: tessera');
  }, 120_000);

  it('logs in, lists the apps, pulls the example app and finds nothing to push or diff', async () => {
    const login = await npxTessera('login', '--url', server.url, '--username', 'admin', '--password', 'readme-cli-password');
    expect(login.code, login.stderr).toBe(0);
    const apps = await npxTessera('apps', 'list');
    expect(apps.code, apps.stderr).toBe(0);
    expect(apps.stdout).toContain(appId);

    const local = join(work.path, 'todo');
    const pull = await npxTessera('pull', `--remote=${appId}`, '--local', local);
    expect(pull.code, pull.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(local, 'config.json'), 'utf8'))).toMatchObject({ app_id: appId, name: 'todo' });
    // The example app deployed at first start carries its app id as a push writes it: nothing changed.
    const diff = await npxTessera('diff', `--remote=${appId}`, '--local', local);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout.trim()).toBe(`No differences with ${appId}`);
    const push = await npxTessera('push', `--remote=${appId}`, '--local', local, '--yes');
    expect(push.code, push.stderr).toBe(0);
    expect(push.stdout.trim()).toBe(`App ${appId} is up to date: nothing to push`);
    expect(push.stderr).not.toContain('app_id');
  }, 180_000);

  it('prints function results in relaxed Extended JSON, as realm-cli did', async () => {
    const sum = await npxTessera('function', 'run', '--remote', appId, '--name', 'sum', '--args', '[2,3]');
    expect(sum.code, sum.stderr).toBe(0);
    expect(sum.stdout.trim()).toBe('result: 5');

    // $EDITOR ./todo/functions/sum/source.js, then push: a result with an int, a date and an ObjectId.
    const local = join(work.path, 'todo');
    writeFileSync(
      join(local, 'functions', 'sum', 'source.js'),
      "exports = function (a, b) { return { sum: a + b, count: 105, at: new Date(0), id: new BSON.ObjectId('5ff9a6f632ee5891dae6254f') }; };\n",
    );
    const push = await npxTessera('push', `--remote=${appId}`, '--local', local, '--yes');
    expect(push.code, push.stderr).toBe(0);
    const expected = { sum: 5, count: 105, at: { $date: expect.stringMatching(/^1970-01-01T00:00:00(\.000)?Z$/) as unknown }, id: { $oid: '5ff9a6f632ee5891dae6254f' } };
    const text = await npxTessera('function', 'run', '--remote', appId, '--name', 'sum', '--args', '[2,3]');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^result: /);
    expect(text.stdout).not.toContain('$numberInt');
    expect(JSON.parse(text.stdout.replace(/^result: /, ''))).toEqual(expected);
    const json = await npxTessera('function', 'run', '--remote', appId, '--name', 'sum', '--args', '[2,3]', '--json');
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { result: unknown }).result).toEqual(expected);

    const logs = await npxTessera('logs', 'list', '--remote', appId);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('FUNCTION sum');

    // The pushed app pulled again is what is deployed: still nothing to push.
    const again = join(work.path, 'todo-again');
    expect((await npxTessera('pull', `--remote=${appId}`, '--local', again)).code).toBe(0);
    expect((await npxTessera('diff', `--remote=${appId}`, '--local', again)).stdout.trim()).toBe(`No differences with ${appId}`);
  }, 180_000);

  it('moves in the partition-sync export of the README walk-through: a new app, the export pushed unchanged, sync on', async () => {
    const created = await npxTessera('apps', 'create', '--name', 'task-tracker', '--local', join(work.path, 'task-tracker-app'));
    expect(created.code, created.stderr).toBe(0);
    const trackerId = /app id (\S+)\)/.exec(created.stdout)![1];
    const push = await npxTessera('push', '--remote', trackerId, '--local', join(repositoryRoot, 'examples/task-tracker'), '--yes');
    expect(push.code, push.stderr).toBe(0);
    const described = await npxTessera('apps', 'describe', '--app', trackerId);
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toContain('Sync: enabled (partition key _partition)');
    expect(described.stdout).toContain('Functions: joinTeam');

    // The README's client steps over the client API: register, log in, join a team through the app's function.
    const client = `${server.url}/api/client/v2.0/app/${trackerId}`;
    const post = (path: string, body: unknown, token?: string) =>
      fetch(`${client}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
    expect((await post('/auth/providers/local-userpass/register', { email: 'ada@example.com', password: 'a-long-password' })).status).toBe(201);
    const login = (await (await post('/auth/providers/local-userpass/login', { username: 'ada@example.com', password: 'a-long-password' })).json()) as { access_token: string };
    const joined = await post('/functions/call', { name: 'joinTeam', arguments: ['red'] }, login.access_token);
    expect(await joined.json()).toEqual(['red']);
  }, 180_000);
  it("keeps the IP access list with the README's accessList commands", async () => {
    const created = await npxTessera('accessList', 'create', '--app', appId, '--ip', '203.0.113.0/24', '--comment', 'office');
    expect(created.code, created.stderr).toBe(0);
    const listed = await npxTessera('accessList', 'list', '--app', appId);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/203\.0\.113\.0\/24\s+office/);
    // Client requests from this machine are now refused; removing the entry serves them again.
    const refused = await fetch(`${server.url}/api/client/v2.0/app/${appId}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).toBe(403);
    expect((await npxTessera('accessList', 'delete', '--app', appId, '--ip', '203.0.113.0/24')).code).toBe(0);
  }, 60_000);
});

describe('the tessera bin before the first build', () => {
  it('says how to build the CLI and exits 1', async () => {
    // The committed shim in a checkout where tsc has not written apps/cli/dist yet.
    const checkout = makeTempDir('tessera-unbuilt-');
    try {
      mkdirSync(join(checkout.path, 'apps', 'cli', 'bin'), { recursive: true });
      copyFileSync(join(repositoryRoot, 'apps', 'cli', 'bin', 'tessera.js'), join(checkout.path, 'apps', 'cli', 'bin', 'tessera.js'));
      expect(existsSync(join(checkout.path, 'apps', 'cli', 'dist'))).toBe(false);
      const unbuilt = await run(process.execPath, [join(checkout.path, 'apps', 'cli', 'bin', 'tessera.js'), '--help'], {});
      expect(unbuilt.code).toBe(1);
      expect(unbuilt.stderr).toContain('npm run build');
      expect(unbuilt.stdout).toBe('');
    } finally {
      checkout.remove();
    }
  }, 60_000);
});

describe('package-lock.json', () => {
  // npm records every optional dependency of a package (each platform build of rollup, swc, esbuild) when it
  // can resolve it; one missing from the lock is added by the next `npm install`, which rewrites the lock.
  it('lists every optional dependency, so npm install on a clean clone leaves it unchanged', () => {
    const lock = JSON.parse(readFileSync(join(repositoryRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { optionalDependencies?: Record<string, string> }> };
    const missing: string[] = [];
    for (const [location, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        // Node's resolution: the package's own node_modules, then each enclosing one, then the root's.
        const bases: string[] = [];
        for (let base = location; base; base = base.includes('/node_modules/') ? base.slice(0, base.lastIndexOf('/node_modules/')) : '') bases.push(base);
        bases.push('');
        if (!bases.some((base) => lock.packages[`${base ? `${base}/` : ''}node_modules/${name}`])) missing.push(`${location} -> ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
