import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, repositoryRoot } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { cliWithApp, enableEmailPassword, tessera, type CliRun } from './tessera-cli';

const password = 'realm-cli-targets-password';

/** realm-cli's `-f json` lines of an output. */
const lines = (output: string): Record<string, unknown>[] => output.trimEnd().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * Runs `tessera` on a pseudo-terminal (util-linux `script`), typing `answer` once the prompt shows: the way a
 * person answers realm-cli's multi-select.
 */
function onTerminal(args: string[], env: Record<string, string>, answer: string): Promise<CliRun> {
  const command = [process.execPath, join(repositoryRoot, 'apps', 'cli', 'dist', 'main.js'), ...args].map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env['PATH'] ?? '', TERM: 'dumb', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let answered = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!answered && stdout.includes('Select by number')) {
        answered = true;
        child.stdin.write(`${answer}\r`);
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr: '' }));
  });
}

// realm-cli's commands that act on several targets: without names they list the candidates and ask (and fail
// with EOF, acting on nothing, without a terminal); with names they go on after a failure and report each one.
describe("realm-cli's multi-target commands", () => {
  const work = makeTempDir('tessera-realm-cli-targets-');
  let host: TestHost;
  let env: Record<string, string>;
  let clientAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    ({ env, clientAppId } = await cliWithApp(host.url, password, work.path, 'targets', join(work.path, 'app')));
    await enableEmailPassword(host, password, clientAppId);
  }, 90_000);

  afterAll(async () => {
    await host?.close();
    work.remove();
  });

  const createUser = async (email: string): Promise<string> => {
    const run = await tessera(['users', 'create', '-a', clientAppId, '--email', email, '--password', 'password1', '--json'], env);
    if (run.code !== 0) throw new Error(run.stderr);
    return (JSON.parse(run.stdout) as { _id: string })._id;
  };
  const userIds = async (): Promise<string[]> => (JSON.parse((await tessera(['users', 'list', '-a', clientAppId, '--json'], env)).stdout) as { _id: string }[]).map((user) => user._id);

  it('users delete, disable, enable, revoke without -u and without a terminal: fail with EOF and act on nobody, -y or not', async () => {
    const id = await createUser('nobody-picked@example.com');
    for (const action of ['delete', 'disable', 'enable', 'revoke']) {
      for (const yes of [[], ['-y']]) {
        const run = await tessera(['users', action, '-a', clientAppId, ...yes], env);
        expect(run.code, `${action} ${yes.join('')}`).toBe(2);
        expect(run.stderr).toContain('EOF: no terminal to ask on; name them with -u, --user');
      }
    }
    const json = await tessera(['users', 'delete', '-a', clientAppId, '-f', 'json'], env);
    expect(lines(json.stderr)).toEqual([expect.objectContaining({ level: 'error', err: 'user delete failed: EOF: no terminal to ask on; name them with -u, --user' })]);
    expect(await userIds()).toContain(id);
    const disabled = JSON.parse((await tessera(['users', 'list', '-a', clientAppId, '--state', 'disabled', '--json'], env)).stdout) as unknown[];
    expect(disabled).toEqual([]);
    // Nothing to pick from: realm-cli asked nothing and said so.
    const none = await tessera(['users', 'delete', '-a', clientAppId, '--state', 'disabled', '-f', 'json'], env);
    expect(none.code, none.stderr).toBe(0);
    expect(lines(none.stdout)).toEqual([expect.objectContaining({ level: 'info', message: 'No users to delete' })]);
    await tessera(['users', 'delete', '-a', clientAppId, '-u', id], env);
  });

  it('users delete on a terminal lists the users as realm-cli did and deletes those picked', async () => {
    const first = await createUser('first@example.com');
    const second = await createUser('second@example.com');
    const run = await onTerminal(['users', 'delete', '-a', clientAppId], env, '2');
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toContain('Which user(s) would you like to delete?');
    expect(run.stdout).toMatch(/1\) User\/Password - (first|second)@example\.com - [0-9a-f]{24}/);
    const listed = /2\) User\/Password - (\S+) - ([0-9a-f]{24})/.exec(run.stdout);
    expect(listed).not.toBeNull();
    const remaining = await userIds();
    expect(remaining).not.toContain(listed![2]);
    expect(remaining).toHaveLength(1);
    expect([first, second]).toContain(remaining[0]);
    await tessera(['users', 'delete', '-a', clientAppId, '-u', remaining[0]], env);
  }, 60_000);

  it('users delete with several users goes on after a missing one, reports each and exits non-zero', async () => {
    const id = await createUser('kept-going@example.com');
    const missing = '0123456789abcdef01234567';
    const run = await tessera(['users', 'delete', '-a', clientAppId, '-u', missing, '-u', id, '-f', 'json'], env);
    expect(run.code).toBe(4);
    expect(lines(run.stdout)).toEqual([expect.objectContaining({ message: 'Provider type: User/Password', headers: ['Email', 'ID', 'Type', 'Deleted', 'Details'], data: [{ Deleted: 'true', Details: '', Email: 'kept-going@example.com', ID: id, Type: 'normal' }] })]);
    expect(lines(run.stderr)).toEqual([expect.objectContaining({ level: 'error', err: expect.stringContaining(`user delete failed: 1 of 2 user(s) not deleted: ${missing}: user not found`) as unknown })]);
    expect(await userIds()).not.toContain(id);
  });

  it('secrets delete: several goes on after a failure with realm-cli\'s Deleted/Details table; none named and no terminal is EOF', async () => {
    for (const name of ['one', 'two']) expect((await tessera(['secrets', 'create', '-a', clientAppId, '-n', name, '-v', 'x'], env)).code).toBe(0);
    const eof = await tessera(['secrets', 'delete', '-a', clientAppId, '-y'], env);
    expect(eof.code).toBe(2);
    expect(eof.stderr).toContain('name them with -s, --secret');
    const run = await tessera(['secrets', 'delete', '-a', clientAppId, '-s', 'one,nope,two', '-f', 'json'], env);
    expect(run.code).toBe(4);
    const [table] = lines(run.stdout);
    expect(table).toMatchObject({ message: 'Deleted 3 secret(s)', headers: ['ID', 'Name', 'Deleted', 'Details'] });
    const rows = table['data'] as Record<string, string>[];
    expect(rows[0]).toMatchObject({ Name: 'nope', Deleted: 'false', Details: expect.stringMatching(/not found/) as unknown });
    expect(rows.slice(1).map((row) => [row['Name'], row['Deleted'], row['Details']])).toEqual([['one', 'true', ''], ['two', 'true', '']]);
    expect(JSON.parse((await tessera(['secrets', 'list', '-a', clientAppId, '--json'], env)).stdout)).toEqual([]);
    const text = await tessera(['secrets', 'delete', '-a', clientAppId, '-s', 'gone'], env);
    expect(text.code).toBe(4);
    expect(text.stdout).toContain('Failed: gone:');
  });

  it('accessList delete: no --ip and no terminal is EOF, an empty list has nothing to delete', async () => {
    expect((await tessera(['accessList', 'delete', '-a', clientAppId], env)).stderr).toContain('no IP addresses or CIDR blocks to delete');
    expect((await tessera(['accessList', 'create', '-a', clientAppId, '--ip', '10.0.0.0/8'], env)).code).toBe(0);
    const eof = await tessera(['accessList', 'delete', '-a', clientAppId], env);
    expect(eof.code).toBe(2);
    expect(eof.stderr).toContain('EOF: no terminal to ask on; name them with --ip');
    const deleted = await tessera(['accessList', 'delete', '-a', clientAppId, '--ip', '10.0.0.0/8', '-f', 'json'], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(lines(deleted.stdout)[0]).toMatchObject({ message: 'Deleted 1 IP address(es) and/or CIDR block(s)', data: [{ 'IP Address': '10.0.0.0/8', Deleted: 'true', Details: '' }] });
  });

  it("apps delete: warns of the apps it cannot find, deletes the others, reports each and exits non-zero; none named and no terminal is EOF", async () => {
    const eof = await tessera(['apps', 'delete', '-y'], env);
    expect(eof.code).toBe(2);
    expect(eof.stderr).toContain('name them with -a, --app');
    const created = await tessera(['apps', 'create', '--name', 'doomed', '--local', join(work.path, 'doomed'), '--json'], env);
    const doomed = (JSON.parse(created.stdout) as { client_app_id: string }).client_app_id;
    const run = await tessera(['apps', 'delete', '-a', `${doomed},no-such-app`, '-y', '-f', 'json'], env);
    expect(run.code).toBe(4);
    const [warning, table] = lines(run.stdout);
    expect(warning).toMatchObject({ level: 'warn', message: 'Unable to delete certain apps because they were not found: no-such-app' });
    expect(table).toMatchObject({ message: 'Successfully deleted 1/1 app(s)', data: [expect.objectContaining({ Name: 'doomed', Deleted: 'true' })] });
    expect(lines(run.stderr)[0]).toMatchObject({ level: 'error', err: expect.stringContaining('app delete failed: 1 of 2 app(s) not deleted: no-such-app: app not found') as unknown });
    expect((await tessera(['apps', 'list', '--json'], env)).stdout).not.toContain(doomed);
  });

  it('pull -t takes several templates, writes each to frontend/<template id>, and refuses one the app is not compatible with before writing', async () => {
    const created = await tessera(['apps', 'create', '--name', 'webapp', '--template', 'web.mql.todo', '--local', join(work.path, 'webapp'), '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const webApp = (JSON.parse(created.stdout) as { client_app_id: string }).client_app_id;
    const refused = join(work.path, 'refused');
    const bad = await tessera(['pull', '--remote', webApp, '--local', refused, '-t', 'web.mql.todo,triggers'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("frontend template 'triggers' is not compatible with this app");
    expect(existsSync(refused)).toBe(false);
    const local = join(work.path, 'pulled');
    const run = await tessera(['pull', '--remote', webApp, '--local', local, '-t', 'web.mql.todo', '-f', 'json'], env, work.path);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(local, 'frontend', 'web.mql.todo', 'config.js'), 'utf8')).toContain(`appId: '${webApp}'`);
    expect(JSON.parse(readFileSync(join(local, 'backend', 'config.json'), 'utf8'))).toMatchObject({ name: 'webapp' });
    expect(lines(run.stdout).map((line) => line['message'])).toEqual(['Saved app to disk', 'Successfully pulled app down: pulled', 'Successfully saved template(s) to disk', 'Navigate to the saved directory to view directions on how to run the template app(s)']);
    expect(lines(run.stdout)[2]['data']).toEqual([expect.stringMatching(/^web\.mql\.todo: /)]);
    // An app not created from a template: realm-cli pulled the app alone.
    const plain = join(work.path, 'plain');
    expect((await tessera(['pull', '--remote', clientAppId, '--local', plain, '-t', 'web.mql.todo'], env)).code).toBe(0);
    expect(existsSync(join(plain, 'frontend'))).toBe(false);
  });

  it("prints commander's parse errors as realm-cli's error line under -f json, and as text otherwise", async () => {
    for (const args of [['apps', 'list', '--bogus', '-f', 'json'], ['--output-format=json', 'secrets', 'create', '-a', clientAppId, '-n', 'x']]) {
      const run = await tessera(args, env);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      const [line, ...rest] = lines(run.stderr);
      expect(rest).toEqual([]);
      expect(Object.keys(line)).toEqual(['time', 'level', 'err']);
      expect(line['level']).toBe('error');
    }
    expect(lines((await tessera(['apps', 'list', '--bogus', '-f', 'json'], env)).stderr)[0]['err']).toBe("unknown option '--bogus'");
    const text = await tessera(['apps', 'list', '--bogus'], env);
    expect(text.stderr).toContain("error: unknown option '--bogus'");
  });
});
