import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { type CliRun, tessera } from './tessera-cli';

const password = 'app-init-password';
// Each test starts the CLI several times; on a loaded machine one start can take seconds.
const CLI_TIMEOUT_MS = 120_000;

interface ListedApp {
  client_app_id: string;
  name: string;
  location?: string;
  deployment_model?: string;
  environment?: string;
}

interface Description {
  data_sources: { name: string; type: string; data_source: string }[];
  auth_providers: { name: string; type: string; enabled: boolean }[];
  functions: { name: string }[];
}

const readJson = (path: string): Record<string, unknown> => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

// realm-cli's `app init` and `app create` on the built `tessera` binary, run as a subprocess against a real
// host: init writes a directory and creates nothing; push creates the app from it (as realm-cli's push did)
// and the server's validator accepts it; create links data sources, copies apps and says what a dry run would do.
describe('tessera app init and app create, as realm-cli runs them', () => {
  const work = makeTempDir('tessera-app-init-');
  let host: TestHost;
  let env: Record<string, string>;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    env = { TESSERA_CONFIG_DIR: join(work.path, 'config') };
    const login = await tessera(['login', '--url', host.url, '--username', 'admin', '--password', password], env);
    expect(login.code, login.stderr).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    work.remove();
  });

  const run = async (args: string[], cwd?: string): Promise<CliRun> => tessera(args, env, cwd);
  const ok = async (args: string[], cwd?: string): Promise<CliRun> => {
    const result = await run(args, cwd);
    expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
    return result;
  };
  const apps = async (): Promise<ListedApp[]> => JSON.parse((await ok(['apps', 'list', '--json'])).stdout) as ListedApp[];
  const appIds = async (): Promise<string[]> => (await apps()).map((app) => app.client_app_id).sort();
  const describeApp = async (appId: string): Promise<Description> => JSON.parse((await ok(['apps', 'describe', '--app', appId, '--json'])).stdout) as Description;

  it("writes realm-cli's app directory in the current directory, with no app id, and creates nothing on the server", async () => {
    const before = await appIds();
    const dir = join(work.path, 'notes');
    mkdirSync(dir);
    // realm-cli's spelling, run where realm-cli runs it: inside the new app's directory.
    const init = await ok(['app', 'init', '--name', 'notes', '-l', 'ie', '-d', 'local', '-e', 'production'], dir);
    expect(init.stdout).toContain(`Initialized app notes in ${dir}`);
    expect(readJson(join(dir, 'realm_config.json'))).toEqual({ config_version: 20210101, name: 'notes', location: 'IE', deployment_model: 'LOCAL', environment: 'production' });
    expect(readJson(join(dir, 'auth', 'providers.json'))).toEqual({ 'api-key': { name: 'api-key', type: 'api-key', disabled: true } });
    expect(readJson(join(dir, 'auth', 'custom_user_data.json'))).toEqual({ enabled: false });
    expect(readJson(join(dir, 'sync', 'config.json'))).toEqual({ development_mode_enabled: false });
    expect(readJson(join(dir, 'graphql', 'config.json'))).toEqual({ use_natural_pluralization: true });
    expect(JSON.parse(readFileSync(join(dir, 'functions', 'config.json'), 'utf8'))).toEqual([]);
    expect(readdirSync(join(dir, 'environments')).sort()).toEqual(['development.json', 'no-environment.json', 'production.json', 'qa.json', 'testing.json']);
    for (const empty of ['data_sources', 'services', 'values', 'graphql/custom_resolvers']) expect(statSync(join(dir, empty)).isDirectory()).toBe(true);
    expect(await appIds()).toEqual(before);
  }, CLI_TIMEOUT_MS);

  it('pushes the directory app init wrote: the app is created from it, its id written back, and it deploys', async () => {
    const dir = join(work.path, 'greeter');
    await ok(['app', 'initialize', '--name', 'greeter', '--local', dir]);
    writeFileSync(join(dir, 'functions', 'config.json'), JSON.stringify([{ name: 'hello', private: false }], null, 4));
    writeFileSync(join(dir, 'functions', 'hello.js'), 'exports = (name) => `Hello, ${name}!`;\n');

    // A dry run validates and creates nothing.
    const dry = await ok(['push', '--local', dir, '--dry-run']);
    expect(dry.stdout).toContain('This is a new app (realm_config.json has no app_id)');
    expect((await apps()).map((app) => app.name)).not.toContain('greeter');

    // Without a terminal push does not ask, as for any push.
    const push = await ok(['push', '--local', dir]);
    const created = (await apps()).find((app) => app.name === 'greeter');
    expect(created).toMatchObject({ location: 'US-VA', deployment_model: 'GLOBAL' });
    expect(push.stderr).toContain(`Created app greeter (app id ${created!.client_app_id})`);
    expect(push.stdout).toContain(`to ${created!.client_app_id} (deployment`);
    expect(readJson(join(dir, 'realm_config.json'))).toEqual({ config_version: 20210101, app_id: created!.client_app_id, name: 'greeter', location: 'US-VA', deployment_model: 'GLOBAL' });

    // The directory now names its app: diff and push find it, and nothing is left to deploy.
    expect((await ok(['diff', '--local', dir])).stdout.trim()).toBe(`No differences with ${created!.client_app_id}`);
    expect((await ok(['push', '--local', dir, '--yes'])).stdout).toContain('is up to date: nothing to push');
    const result = JSON.parse((await ok(['function', 'run', '--name', 'hello', '--args', 'Ada', '--json'], dir)).stdout) as { result: unknown };
    expect(result.result).toBe('Hello, Ada!');
    expect((await describeApp(created!.client_app_id)).auth_providers).toEqual([expect.objectContaining({ name: 'api-key', type: 'api-key', enabled: false })]);
  }, CLI_TIMEOUT_MS);

  it('refuses to push an invalid new app before creating it, and diff says a new app is not on the server yet', async () => {
    const dir = join(work.path, 'unfinished');
    await ok(['app', 'init', '--name', 'unfinished', '--local', dir]);
    const diff = await run(['diff', '--local', dir]);
    expect(diff.code).toBe(2);
    expect(diff.stderr).toContain('is not on the server yet (realm_config.json has no app_id)');

    const before = await appIds();
    writeFileSync(join(dir, 'functions', 'config.json'), JSON.stringify([{ name: 'broken', private: false }]));
    writeFileSync(join(dir, 'functions', 'broken.js'), 'exports = function ( {');
    const push = await run(['push', '--local', dir, '--yes']);
    expect(push.code).toBe(5);
    expect(push.stderr).toContain('is invalid; nothing was created');
    expect(push.stderr).toContain('does not compile');
    expect(await appIds()).toEqual(before);
    expect(readJson(join(dir, 'realm_config.json'))).not.toHaveProperty('app_id');
  }, CLI_TIMEOUT_MS);

  it('starts from an existing app with --remote: its configuration without its app id, under a new name', async () => {
    const source = (await apps()).find((app) => app.name === 'greeter')!;
    const dir = join(work.path, 'greeter-copy');
    await ok(['app', 'init', '--remote', source.client_app_id, '--name', 'greeter-copy', '--local', dir]);
    const settings = readJson(join(dir, 'realm_config.json'));
    expect(settings).toMatchObject({ name: 'greeter-copy', location: 'US-VA' });
    expect(settings).not.toHaveProperty('app_id');
    expect(existsSync(join(dir, 'functions', 'hello.js'))).toBe(true);
    expect((await apps()).map((app) => app.name)).not.toContain('greeter-copy');

    await ok(['push', '--local', dir, '--yes']);
    const copy = (await apps()).find((app) => app.name === 'greeter-copy')!;
    expect(copy.client_app_id).not.toBe(source.client_app_id);
    expect(JSON.parse((await ok(['function', 'run', '--app', copy.client_app_id, '--name', 'hello', '--args', 'Grace', '--json'])).stdout)).toMatchObject({ result: 'Hello, Grace!' });

    // A copy that keeps the source's name cannot be created beside it; the directory is left as it was.
    const same = join(work.path, 'greeter-same');
    await ok(['app', 'init', '--remote', source.client_app_id, '--local', same]);
    const clash = await run(['push', '--local', same, '--yes']);
    expect(clash.code).toBe(6);
    expect(clash.stderr).toContain('an app named "greeter" already exists');
    expect(clash.stderr).toContain('rename the app in realm_config.json');
    expect(readJson(join(same, 'realm_config.json'))).not.toHaveProperty('app_id');
  }, CLI_TIMEOUT_MS);

  it('refuses bad input with a clear message and exit code 2, writing nothing', async () => {
    const full = join(work.path, 'full');
    mkdirSync(full);
    writeFileSync(join(full, 'notes.txt'), 'mine');
    const refusals: Array<[string[], string]> = [
      [['--name', 'x', '--local', full], `directory ${full} is not empty`],
      [['--name', 'x', '--local', join(work.path, 'notes', 'functions', 'nested')], `an app already exists at ${join(work.path, 'notes', 'realm_config.json')}`],
      [['--name', 'my app', '--local', join(work.path, 'n1')], 'invalid app name "my app": use only ASCII letters, digits, underscores and hyphens'],
      [['--name', 'x'.repeat(33), '--local', join(work.path, 'n1')], 'it has 33 characters, the limit is 32'],
      [['--local', join(work.path, 'n1')], '--name is required'],
      [['--name', 'x', '--local', join(work.path, 'n1'), '--location', 'moon'], 'unsupported --location "MOON": use one of US-VA'],
      [['--name', 'x', '--local', join(work.path, 'n1'), '--template', 'web.mql.todo'], 'app init does not take --template'],
    ];
    for (const [args, message] of refusals) {
      const refused = await run(['app', 'init', ...args]);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain(message);
      expect(refused.stdout).toBe('');
    }
    expect(existsSync(join(work.path, 'n1'))).toBe(false);
    expect(existsSync(join(work.path, 'notes', 'functions', 'nested'))).toBe(false);
    expect(readdirSync(full)).toEqual(['notes.txt']);
    const json = await run(['app', 'init', '--name', 'bad!', '--local', join(work.path, 'n1'), '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toMatchObject({ error_code: 'InvalidAppName', exit_code: 2 });

    // --yes writes the app beside what the directory holds.
    await ok(['app', 'init', '--name', 'beside', '--local', full, '--yes']);
    expect(readFileSync(join(full, 'notes.txt'), 'utf8')).toBe('mine');
    expect(readJson(join(full, 'realm_config.json'))).toMatchObject({ name: 'beside' });
  }, CLI_TIMEOUT_MS);

  it("takes realm-cli's app create flags: a dry run changes nothing; data sources are linked under their service names", async () => {
    const local = join(work.path, 'linked');
    const flags = ['--name', 'linked', '--local', local, '-l', 'us-or', '-d', 'LOCAL', '-e', 'qa', '--cluster', 'Cluster0', '--cluster-service-name', 'atlas', '--cluster', 'Reports', '--datalake', 'Lake'];
    const dry = await ok(['app', 'create', ...flags, '--dry-run']);
    expect(dry.stdout).toContain(`A minimal app named linked would be created at ${local}`);
    expect(dry.stdout).toContain("The cluster 'Cluster0' would be linked as data source 'atlas'");
    expect(dry.stdout).toContain("The data lake 'Lake' would be linked as data source 'Lake'");
    expect(dry.stdout).toContain(`To create this app run: tessera app create --name linked --local ${local} --location US-OR --deployment-model LOCAL --environment qa --cluster Cluster0 --cluster-service-name atlas --cluster Reports --datalake Lake`);
    expect(existsSync(local)).toBe(false);
    expect((await apps()).map((app) => app.name)).not.toContain('linked');

    const created = JSON.parse((await ok(['app', 'create', ...flags, '--json'])).stdout) as { client_app_id: string; filepath: string; clusters: { name: string }[]; datalakes: { name: string }[] };
    expect(created).toMatchObject({ filepath: local, clusters: [{ name: 'atlas' }, { name: 'Reports' }], datalakes: [{ name: 'Lake' }] });
    expect((await apps()).find((app) => app.name === 'linked')).toMatchObject({ location: 'US-OR', deployment_model: 'LOCAL', environment: 'qa' });
    const sources = (await describeApp(created.client_app_id)).data_sources.map((source) => [source.name, source.type, source.data_source]);
    expect(sources.sort()).toEqual([
      ['Lake', 'datalake', 'Lake'],
      ['Reports', 'mongodb-atlas', 'Reports'],
      ['atlas', 'mongodb-atlas', 'Cluster0'],
    ]);
    // The local directory is the new app as deployed.
    expect(readJson(join(local, 'config.json'))).toMatchObject({ app_id: created.client_app_id, name: 'linked' });
    expect((await ok(['diff', '--local', local])).stdout.trim()).toBe(`No differences with ${created.client_app_id}`);
  }, CLI_TIMEOUT_MS);

  it('copies an app with app create --remote, and deletes the new app again when a data source cannot be linked', async () => {
    const source = (await apps()).find((app) => app.name === 'greeter')!;
    const local = join(work.path, 'greeter-two');
    const created = JSON.parse((await ok(['app', 'create', '--remote', source.client_app_id, '--name', 'greeter-two', '--local', local, '--json'])).stdout) as { client_app_id: string };
    expect((await describeApp(created.client_app_id)).functions.map((fn) => fn.name)).toEqual(['hello']);
    expect(existsSync(join(local, 'functions', 'hello'))).toBe(true);

    const before = await appIds();
    const refused = await run(['app', 'create', '--name', 'broken', '--local', join(work.path, 'broken'), '--cluster', 'Cluster0', '--cluster-service-name', 'bad name']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(/app broken-\w+ was deleted again: nothing was created/);
    expect(refused.stderr).toContain('may contain only ASCII letters, digits, underscores and hyphens');
    expect(await appIds()).toEqual(before);
    expect(existsSync(join(work.path, 'broken'))).toBe(false);

    const usage = await run(['app', 'create', '--name', 'x', '--template', 'web.mql.todo', '--cluster', 'A', '--cluster', 'B']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('a template app links one cluster');
  }, CLI_TIMEOUT_MS);
});
