import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { cliWithApp, enableEmailPassword, snapshot, tessera } from './tessera-cli';

const password = 'realm-cli-flags-password';

/**
 * Every flag realm-cli v2 takes, command by command, as its source declares them: each command's Flags()
 * under internal/commands/ and the global flags of cmd/root.go (internal/cli/command_factory.go
 * SetGlobalFlags), read at 10gen/realm-cli commit f1b19833a7266061e835b923c4c420596e270d78 (v2.6.3).
 * `<v>` marks a flag that takes a value; hidden flags are included, as scripts may use them. Plus the
 * App Services CLI's `push -n, --deployment-name` (its push reference page).
 */
const REALM_CLI_FLAGS: Readonly<Record<string, readonly string[]>> = {
  login: ['--api-key <v>', '--private-api-key <v>', '--browser', '--auth-type <v>', '--username <v>', '--password <v>'],
  logout: [],
  whoami: ['--show-projects'],
  push: ['--local <v>', '--remote <v>', '--include-node-modules', '--include-package-json', '-d, --include-dependencies', '-s, --include-hosting', '-c, --reset-cdn-cache', '-x, --dry-run', '--project <v>', '-n, --deployment-name <v>'],
  pull: ['--local <v>', '--remote <v>', '--include-node-modules', '--include-package-json', '-d, --include-dependencies', '-s, --include-hosting', '-x, --dry-run', '-t, --template <v>', '--project <v>', '--config-version <v>'],
  'apps init': ['--remote <v>', '-n, --name <v>', '-l, --location <v>', '-d, --deployment-model <v>', '-e, --environment <v>', '--project <v>', '--config-version <v>'],
  'apps create': ['--remote <v>', '--local <v>', '-n, --name <v>', '-l, --location <v>', '-d, --deployment-model <v>', '-e, --environment <v>', '--cluster <v>', '--cluster-service-name <v>', '--serverless-instance <v>', '--serverless-instance-service-name <v>', '--datalake <v>', '--datalake-service-name <v>', '--template <v>', '-x, --dry-run', '--project <v>', '--config-version <v>'],
  'apps list': ['-a, --app <v>', '--project <v>', '--product <v>'],
  'apps delete': ['-a, --app <v>', '--project <v>'],
  'apps diff': ['--local <v>', '--remote <v>', '--include-node-modules', '--include-package-json', '-d, --include-dependencies', '-s, --include-hosting', '--project <v>'],
  'apps describe': ['-a, --app <v>', '--project <v>', '--product <v>'],
  'users create': ['-a, --app <v>', '--project <v>', '--product <v>', '--type <v>', '--name <v>', '--email <v>', '--password <v>'],
  'users list': ['-a, --app <v>', '--project <v>', '--product <v>', '-u, --user <v>', '--pending', '--state <v>', '--provider <v>'],
  'users disable': ['-a, --app <v>', '--project <v>', '--product <v>', '-u, --user <v>'],
  'users enable': ['-a, --app <v>', '--project <v>', '--product <v>', '-u, --user <v>'],
  'users revoke': ['-a, --app <v>', '--project <v>', '--product <v>', '-u, --user <v>', '--pending', '--state <v>', '--provider <v>'],
  'users delete': ['-a, --app <v>', '--project <v>', '--product <v>', '-u, --user <v>', '--pending', '--state <v>', '--provider <v>'],
  'secrets create': ['-a, --app <v>', '--project <v>', '--product <v>', '-n, --name <v>', '-v, --value <v>'],
  'secrets list': ['-a, --app <v>', '--project <v>', '--product <v>'],
  'secrets update': ['-a, --app <v>', '--project <v>', '--product <v>', '-s, --secret <v>', '-n, --name <v>', '-v, --value <v>'],
  'secrets delete': ['-a, --app <v>', '--project <v>', '--product <v>', '-s, --secret <v>'],
  'function run': ['-a, --app <v>', '--project <v>', '--product <v>', '--name <v>', '--args <v>', '--user <v>'],
  'logs list': ['-a, --app <v>', '--project <v>', '--product <v>', '--type <v>', '--errors', '--start <v>', '--end <v>', '--tail'],
  'schema datamodels': ['-a, --app <v>', '--project <v>', '--product <v>', '-l, --language <v>', '--flat', '--no-imports', '--name <v>'],
  'accessList create': ['-a, --app <v>', '--project <v>', '--product <v>', '--ip <v>', '--comment <v>', '--use-current', '--allow-all'],
  'accessList list': ['-a, --app <v>', '--project <v>', '--product <v>'],
  'accessList update': ['-a, --app <v>', '--project <v>', '--product <v>', '--ip <v>', '--new-ip <v>', '--comment <v>'],
  'accessList delete': ['-a, --app <v>', '--project <v>', '--product <v>', '--ip <v>'],
  'profiles list': [],
};

/** realm-cli's persistent flags on its root command: every command takes them, before or after its name. */
const REALM_CLI_GLOBAL_FLAGS = ['--profile <v>', '--telemetry <v>', '-o, --output-target <v>', '-f, --output-format <v>', '--disable-colors', '-y, --yes', '--atlas-url <v>', '--realm-url <v>'];

/** A value each flag accepts (the ones Tessera checks need a valid one; the rest take any text). */
const VALUES: Readonly<Record<string, string>> = {
  '--location': 'US-VA',
  '--deployment-model': 'GLOBAL',
  '--environment': 'development',
  '--state': 'enabled',
  '--type': 'function',
  '--start': '2021-06-22',
  '--end': '2021-06-23',
  '--language': 'javascript',
  '--telemetry': 'off',
  '--output-format': 'json',
  '--ip': '10.0.0.1',
  '--new-ip': '10.0.0.2',
  '--config-version': '20210101',
  '--product': 'standard',
  '--profile': 'default',
};

interface Flag {
  long: string;
  short?: string;
  takesValue: boolean;
}

const parseFlag = (spec: string): Flag => {
  const match = /^(?:(-\w), )?(--[\w-]+)( <v>)?$/.exec(spec);
  if (!match) throw new Error(`bad flag spec ${spec}`);
  return { long: match[2], ...(match[1] ? { short: match[1] } : {}), takesValue: match[3] !== undefined };
};

/** The command line giving every flag once, by its short name where it has one when `short` is set. */
const argumentsFor = (specs: readonly string[], short: boolean, outputFile: string): string[] =>
  specs.map(parseFlag).flatMap((flag) => {
    const name = short && flag.short ? flag.short : flag.long;
    if (!flag.takesValue) return [name];
    return [name, flag.long === '--output-target' ? outputFile : (VALUES[flag.long] ?? 'x')];
  });

/** Commander's own refusals of a command line (a CliError prints "Error: ...", after parsing succeeded). */
const PARSE_ERROR = /^error: /m;

// realm-cli scripts on the built `tessera` binary: its short flags and its global options where its users
// put them (after the command, or before it), with their effects; and a table test that every flag
// realm-cli's source declares parses on the matching Tessera command.
describe("tessera takes realm-cli's flags as its scripts write them", () => {
  const work = makeTempDir('tessera-realm-cli-flags-');

  describe('every flag of realm-cli v2.6.3 parses on the matching command', () => {
    // Nothing answers on port 1: a command that parsed ends at its first request with "cannot reach the
    // server" (or earlier, on a value it checks), never with commander's "error: unknown option".
    const offline = { TESSERA_CONFIG_DIR: join(work.path, 'offline-config'), TESSERA_ACCESS_TOKEN: 'token', TESSERA_URL: 'http://127.0.0.1:1' };

    it.each(Object.entries(REALM_CLI_FLAGS))('%s', async (command, specs) => {
      const scratch = join(work.path, 'parse', command.replace(/ /g, '-'));
      mkdirSync(scratch, { recursive: true });
      const words = command.split(' ');
      for (const short of [false, true]) {
        const flags = argumentsFor([...specs, ...REALM_CLI_GLOBAL_FLAGS], short, join(scratch, 'out.txt'));
        const run = await tessera([...words, ...flags], offline, scratch);
        expect(run.stderr, `${words.join(' ')} ${flags.join(' ')}`).not.toMatch(PARSE_ERROR);
        // realm-cli's inherited flags before the command name parse too.
        const before = await tessera([...argumentsFor(REALM_CLI_GLOBAL_FLAGS, short, join(scratch, 'out.txt')), ...words, ...argumentsFor(specs, short, '')], offline, scratch);
        expect(before.stderr, `global flags before ${command}`).not.toMatch(PARSE_ERROR);
      }
    }, 30_000);

    it('still refuses a flag realm-cli does not have, and a value its global flags do not take', async () => {
      const unknown = await tessera(['push', '--local', '.', '-q'], offline);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain("unknown option '-q'");
      const format = await tessera(['apps', 'list', '-f', 'yaml'], offline);
      expect(format.code).toBe(2);
      expect(format.stderr).toContain('Allowed choices are , json');
      const telemetry = await tessera(['whoami', '--telemetry', 'maybe'], offline);
      expect(telemetry.code).toBe(2);
    });
  });

  describe('against a running server', () => {
    let host: TestHost;
    let env: Record<string, string>;
    let clientAppId: string;
    const local = join(work.path, 'app');

    beforeAll(async () => {
      host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
      ({ env, clientAppId } = await cliWithApp(host.url, password, work.path, 'flags', local));
    }, 60_000);

    afterAll(async () => {
      await host?.close();
    });

    it('whoami takes --disable-colors and --telemetry off and says the same as without them', async () => {
      const plain = await tessera(['whoami'], env);
      const styled = await tessera(['whoami', '--disable-colors', '--telemetry', 'off'], env);
      expect(styled.code, styled.stderr).toBe(0);
      expect(styled.stdout).toBe(plain.stdout);
      expect(styled.stdout).toContain(`Logged in to ${host.url} as admin`);
      const projects = await tessera(['--telemetry', 'on', 'whoami', '--show-projects'], env);
      expect(projects.code, projects.stderr).toBe(0);
      expect(projects.stdout).toMatch(/Projects: [0-9a-f]{24}/);
    });

    it("apps list -f json -o <file> writes realm-cli's JSON log line into the file and nothing on stdout; -a filters by app id", async () => {
      const file = join(work.path, 'apps.json');
      const listed = await tessera(['apps', 'list', '-f', 'json', '-o', file], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toBe('');
      const [line, ...rest] = readFileSync(file, 'utf8').trimEnd().split('\n').map((text) => JSON.parse(text) as { message: string; data: string[] });
      expect(rest).toEqual([]);
      expect(line).toMatchObject({ level: 'info', message: `Found ${line.data.length} apps` });
      expect(line.data).toContainEqual(expect.stringMatching(new RegExp(`^${clientAppId} \\([0-9a-f]{24}\\)$`)));
      // -f with a blank value is text, as realm-cli's default; the global flags also parse before the command.
      const text = await tessera(['-f', '', '--output-target', join(work.path, 'apps.txt'), 'app', 'ls', '-a', clientAppId.slice(0, 6)], env);
      expect(text.code, text.stderr).toBe(0);
      expect(readFileSync(join(work.path, 'apps.txt'), 'utf8')).toMatch(new RegExp(`^App ID +Name +_id\\n${clientAppId} +flags `));
      const none = await tessera(['apps', 'list', '-a', 'no-such-app', '--output-format', 'json'], env);
      expect(JSON.parse(none.stdout)).toMatchObject({ level: 'info', message: 'No available apps to show' });
      const products = await tessera(['apps', 'list', '--product', 'atlas', '--json'], env);
      expect(JSON.parse(products.stdout)).toEqual([]);
    });

    it('pull -x writes nothing and says what it would write; pull -s -y writes the app', async () => {
      const target = join(work.path, 'pulled');
      const dry = await tessera(['pull', '--remote', clientAppId, '--local', target, '-x'], env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(existsSync(target)).toBe(false);
      expect(dry.stdout).toContain(`Dry run: nothing was written. Pulling ${clientAppId} would write`);
      expect(dry.stdout).toContain(target);
      const dryJson = await tessera(['export', '--remote', clientAppId, '--local', target, '--dry-run', '--json'], env);
      expect(JSON.parse(dryJson.stdout)).toMatchObject({ dry_run: true, app_id: clientAppId, local_path: target, files: expect.arrayContaining(['config.json']) as unknown });
      expect(existsSync(target)).toBe(false);
      const pulled = await tessera(['pull', '--remote', clientAppId, '--local', target, '-s', '-y'], env);
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(JSON.parse(readFileSync(join(target, 'config.json'), 'utf8'))).toMatchObject({ app_id: clientAppId });
    });

    it('push -s -c -y -n deploys the hosted files under the deployment name; push -x changes nothing', async () => {
      const config = JSON.parse(readFileSync(join(local, 'config.json'), 'utf8')) as Record<string, unknown>;
      writeFileSync(join(local, 'config.json'), `${JSON.stringify({ ...config, hosting: { enabled: true } }, null, 2)}\n`);
      mkdirSync(join(local, 'hosting', 'files'), { recursive: true });
      writeFileSync(join(local, 'hosting', 'files', 'index.html'), '<h1>flags</h1>\n');
      const before = await snapshot(local);

      const dry = await tessera(['push', '--remote', clientAppId, '--local', local, '-s', '-x'], env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toContain('nothing was deployed');
      expect((await fetch(`${host.url}/hosting/${clientAppId}/index.html`)).status).toBe(404);

      const push = await tessera(['push', '--remote', clientAppId, '--local', local, '-s', '-c', '-y', '-n', 'release-1', '--json'], env);
      expect(push.code, push.stderr).toBe(0);
      expect(JSON.parse(push.stdout)).toMatchObject({ deployed: true, deployment: { name: 'release-1' } });
      const page = await fetch(`${host.url}/hosting/${clientAppId}/index.html`);
      expect(page.status).toBe(200);
      expect(await page.text()).toBe('<h1>flags</h1>\n');
      expect(await snapshot(local)).toEqual(before);

      // realm-cli's flag cluster (`-sy`), and an unnamed deployment keeps the name the server makes.
      writeFileSync(join(local, 'hosting', 'files', 'index.html'), '<h1>again</h1>\n');
      const again = await tessera(['import', '--remote', clientAppId, '--local', local, '-sy', '--json'], env);
      expect(again.code, again.stderr).toBe(0);
      expect((JSON.parse(again.stdout) as { deployment: { name: string } }).deployment.name).toMatch(/^flags-\d+$/);
    });

    it('secrets and users take their short flags: -n/-v, -s, -u', async () => {
      expect((await tessera(['secrets', 'create', '-a', clientAppId, '-n', 'token', '-v', 'one'], env)).code).toBe(0);
      expect((await tessera(['secrets', 'update', '-a', clientAppId, '-s', 'token', '-v', 'two'], env)).code).toBe(0);
      const deleted = await tessera(['secrets', 'delete', '-a', clientAppId, '-s', 'token', '--json'], env);
      expect(deleted.code, deleted.stderr).toBe(0);
      expect(JSON.parse(deleted.stdout)).toEqual({ deleted: ['token'] });
      await enableEmailPassword(host, password, clientAppId);
      const created = await tessera(['users', 'create', '-a', clientAppId, '--email', 'ada@example.com', '--password', 'analytical', '--json'], env);
      expect(created.code, created.stderr).toBe(0);
      const id = (JSON.parse(created.stdout) as { _id: string })._id;
      const listed = await tessera(['users', 'ls', '-a', clientAppId, '-u', id, '--provider', 'local-userpass', '--json'], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout) as { _id: string }[]).map((user) => user._id)).toEqual([id]);
      // --state filters the --user users: an enabled user is not disabled, so nothing matches.
      const none = await tessera(['users', 'revoke', '-a', clientAppId, '-u', id, '--state', 'disabled'], env);
      expect(none.code).toBe(4);
      expect(none.stderr).toContain('no users found');
      const disabled = await tessera(['users', 'disable', '-a', clientAppId, '-u', id], env);
      expect(disabled.code, disabled.stderr).toBe(0);
      const removed = await tessera(['users', 'delete', '-a', clientAppId, '-u', id, '--state', 'disabled', '--json'], env);
      expect(removed.code, removed.stderr).toBe(0);
      expect(JSON.parse(removed.stdout)).toEqual({ delete: [id] });
    });
  });

  afterAll(() => work.remove());
});
