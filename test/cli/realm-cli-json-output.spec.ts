import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { cliWithApp, enableEmailPassword, tessera, writeAppFile } from './tessera-cli';

const password = 'realm-cli-json-password';

/** A line of realm-cli's `-f json` output (realm-cli 2.6.3 internal/terminal): time and level, then the payload. */
interface LogLine {
  time: string;
  level: 'info' | 'warn' | 'error' | 'debug';
  message?: string;
  data?: unknown;
  headers?: string[];
  doc?: unknown;
  err?: string;
}

/** Every line of the output as a realm-cli log line: each must parse, carry an RFC 3339 time and a level. */
function logLines(output: string): LogLine[] {
  const lines = output.trimEnd().split('\n');
  return lines.map((text) => {
    const line = JSON.parse(text) as LogLine;
    expect(line.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
    expect(['info', 'warn', 'error', 'debug']).toContain(line.level);
    return line;
  });
}

const write = writeAppFile;

// realm-cli scripts read `-f json` as realm-cli printed it: one JSON log line per message, with realm-cli's
// message texts, log kinds, table headers and data shapes; Tessera's own --json stays the bare result.
describe("tessera -f json prints realm-cli's JSON log lines", () => {
  const work = makeTempDir('tessera-realm-cli-json-');
  let host: TestHost;
  let env: Record<string, string>;
  let clientAppId: string;
  const local = join(work.path, 'app');

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    ({ env, clientAppId } = await cliWithApp(host.url, password, work.path, 'jsonlines', local));
    // A function that logs, and email/password users.
    write(join(local, 'functions', 'greet', 'config.json'), `${JSON.stringify({ name: 'greet', private: false }, null, 2)}\n`);
    write(join(local, 'functions', 'greet', 'source.js'), "exports = (name) => { console.log('greeting', name); return { hello: name }; };\n");
    const pushed = await tessera(['push', '--local', local, '--yes'], env);
    if (pushed.code !== 0) throw new Error(`tessera push: ${pushed.stderr}`);
    await enableEmailPassword(host, password, clientAppId);
  }, 90_000);

  afterAll(async () => {
    await host?.close();
    work.remove();
  });

  it('apps list: a list log "Found <n> apps" of "<client app id> (<group id>)"; --json is still the array', async () => {
    const run = await tessera(['apps', 'list', '-f', 'json'], env);
    expect(run.code, run.stderr).toBe(0);
    const lines = logLines(run.stdout);
    expect(lines).toHaveLength(1);
    expect(Object.keys(lines[0])).toEqual(['time', 'level', 'message', 'data']);
    // The test host also holds its sample app.
    const data = lines[0].data as string[];
    expect(lines[0]).toMatchObject({ level: 'info', message: `Found ${data.length} apps` });
    expect(data).toContainEqual(expect.stringMatching(new RegExp(`^${clientAppId} \\([0-9a-f]{24}\\)$`)));
    const own = await tessera(['apps', 'list', '--json'], env);
    expect(JSON.parse(own.stdout)).toHaveLength(data.length);
    expect(JSON.parse(own.stdout)).toContainEqual(expect.objectContaining({ client_app_id: clientAppId }));
    // -o gets the same lines, stdout nothing.
    const file = join(work.path, 'apps.jsonl');
    const target = await tessera(['apps', 'list', '-f', 'json', '-o', file], env);
    expect(target.stdout).toBe('');
    expect(logLines(readFileSync(file, 'utf8')).map(({ message, data }) => ({ message, data }))).toEqual([{ message: lines[0].message, data: lines[0].data }]);
  });

  it('apps describe: a JSON document log "App description"', async () => {
    const run = await tessera(['apps', 'describe', '-a', clientAppId, '-f', 'json'], env);
    expect(run.code, run.stderr).toBe(0);
    const [line, ...rest] = logLines(run.stdout);
    expect(rest).toEqual([]);
    expect(Object.keys(line)).toEqual(['time', 'level', 'message', 'doc']);
    expect(line).toMatchObject({ level: 'info', message: 'App description', doc: { client_app_id: clientAppId, name: 'jsonlines', functions: [expect.objectContaining({ name: 'greet' })] } });
  });

  it('function run: a list log "Logs" with the logs as one item, the error logs and the result as document logs', async () => {
    const run = await tessera(['function', 'run', '-a', clientAppId, '--name', 'greet', '--args', 'Ada', '-f', 'json'], env);
    expect(run.code, run.stderr).toBe(0);
    const lines = logLines(run.stdout);
    // The server answers an empty error_logs list, which realm-cli printed too.
    expect(lines.map((line) => line.message)).toEqual(['Logs', 'Error Logs', 'Result']);
    expect(lines[0]).toMatchObject({ level: 'info', data: ['[greeting Ada]'] });
    expect(lines[1]).toMatchObject({ level: 'info', doc: [] });
    expect(lines[2]).toMatchObject({ level: 'info', doc: { hello: 'Ada' } });
  });

  it('secrets list: a text log when there are none, then a table "Found <n> secrets" with ID and Name', async () => {
    const none = await tessera(['secrets', 'list', '-a', clientAppId, '-f', 'json'], env);
    expect(none.code, none.stderr).toBe(0);
    expect(logLines(none.stdout)).toEqual([expect.objectContaining({ level: 'info', message: 'No available secrets to show' })]);
    const created = await tessera(['secrets', 'create', '-a', clientAppId, '-n', 'token', '-v', 'hidden', '-f', 'json'], env);
    const [createdLine] = logLines(created.stdout);
    const id = /^Successfully created secret, id: ([0-9a-f]{24})$/.exec(createdLine.message ?? '')?.[1];
    expect(id, created.stdout).toBeDefined();
    const run = await tessera(['secrets', 'list', '-a', clientAppId, '-f', 'json'], env);
    const [line, ...rest] = logLines(run.stdout);
    expect(rest).toEqual([]);
    expect(Object.keys(line)).toEqual(['time', 'level', 'message', 'data', 'headers']);
    expect(line).toMatchObject({ level: 'info', message: 'Found 1 secrets', headers: ['ID', 'Name'], data: [{ ID: id, Name: 'token' }] });
    expect(run.stdout).not.toContain('hidden');
    const deleted = await tessera(['secrets', 'delete', '-a', clientAppId, '-s', 'token', '-f', 'json'], env);
    expect(logLines(deleted.stdout)).toEqual([expect.objectContaining({ message: 'Deleted 1 secret(s)', headers: ['ID', 'Name', 'Deleted', 'Details'], data: [{ Deleted: 'true', Details: '', ID: id, Name: 'token' }] })]);
  });

  it('users create and list: a document "Successfully created user", then a table per provider type', async () => {
    const created = await tessera(['users', 'create', '-a', clientAppId, '--email', 'ada@example.com', '--password', 'analytical', '-f', 'json'], env);
    expect(created.code, created.stderr).toBe(0);
    const [createdLine] = logLines(created.stdout);
    expect(createdLine).toMatchObject({ message: 'Successfully created user', doc: { id: expect.stringMatching(/^[0-9a-f]{24}$/), enabled: true, email: 'ada@example.com', type: 'normal' } });
    const id = (createdLine.doc as { id: string }).id;
    const run = await tessera(['users', 'list', '-a', clientAppId, '-f', 'json'], env);
    expect(run.code, run.stderr).toBe(0);
    const [line, ...rest] = logLines(run.stdout);
    expect(rest).toEqual([]);
    expect(line).toMatchObject({
      level: 'info',
      message: 'Provider type: User/Password',
      headers: ['Email', 'ID', 'Type', 'Enabled', 'Last Authenticated'],
      data: [{ Email: 'ada@example.com', Enabled: 'true', ID: id, 'Last Authenticated': 'n/a', Type: 'normal' }],
    });
    const disabled = await tessera(['users', 'disable', '-a', clientAppId, '-u', id, '-f', 'json'], env);
    expect(logLines(disabled.stdout)).toEqual([expect.objectContaining({ message: 'Provider type: User/Password', headers: ['Email', 'ID', 'Type', 'Enabled', 'Details'], data: [expect.objectContaining({ ID: id, Enabled: 'false' })] })]);
  });

  it('whoami: the logged-in user as a text log, the projects as a table; logged out, a text log', async () => {
    const run = await tessera(['whoami', '--show-projects', '-f', 'json'], env);
    expect(run.code, run.stderr).toBe(0);
    const [user, projects] = logLines(run.stdout);
    expect(user).toMatchObject({ level: 'info', message: 'Currently logged in user: admin (profile "default")' });
    expect(projects).toMatchObject({ message: 'Projects available (1)', headers: ['Project ID', 'Project Name'], data: [{ 'Project ID': expect.stringMatching(/^[0-9a-f]{24}$/), 'Project Name': '' }] });
    const nobody = await tessera(['whoami', '-f', 'json'], { TESSERA_CONFIG_DIR: join(work.path, 'nobody') });
    expect(nobody.code).toBe(0);
    expect(logLines(nobody.stdout)).toEqual([expect.objectContaining({ message: 'No user is currently logged in' })]);
  });

  it("an error is realm-cli's error line on stderr, named after realm-cli's command, with nothing on stdout", async () => {
    const run = await tessera(['apps', 'describe', '-a', 'no-such-app', '-f', 'json'], env);
    expect(run.code).toBe(4);
    expect(run.stdout).toBe('');
    const [line, ...rest] = logLines(run.stderr);
    expect(rest).toEqual([]);
    expect(Object.keys(line)).toEqual(['time', 'level', 'err']);
    expect(line.level).toBe('error');
    expect(line.err).toMatch(/^app describe failed: app not found: "no-such-app"/);
    // Tessera's --json error is unchanged.
    const own = await tessera(['apps', 'describe', '-a', 'no-such-app', '--json'], env);
    expect(JSON.parse(own.stderr)).toMatchObject({ error_code: 'AppNotFound', exit_code: 4 });
  });

  it("Tessera's own commands print their result as a JSON document log", async () => {
    const run = await tessera(['triggers', 'list', '--remote', clientAppId, '-f', 'json'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(logLines(run.stdout)).toEqual([expect.objectContaining({ level: 'info', message: 'Triggers', doc: [] })]);
  });
});
