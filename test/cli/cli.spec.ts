import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deriveSigningKey, signJwt } from '@tessera/credentials';
import { eventually, makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';
import * as Realm from 'realm-web';
import { snapshot, startTessera, tessera, writeAppFile } from './tessera-cli';

const canonical = (value: unknown): string => {
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : typeof v === 'object' && v !== null ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])])) : v;
  return `${JSON.stringify(sort(value), null, 2)}\n`;
};

const write = writeAppFile;

// The built `tessera` binary, run as a subprocess against the built server, as a user or a CI job runs it.
describe('tessera CLI against a running server', () => {
  const dataDir = makeTempDir('tessera-cli-data-');
  // The server derives its keys from this master key, so the test can sign tokens as the server does.
  const signingKey = Buffer.alloc(32, 21);
  const work = makeTempDir('tessera-cli-work-');
  let server: ServerProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'cli-test-password', TESSERA_SIGNING_KEY: signingKey.toString('base64') } });
    env = { TESSERA_CONFIG_DIR: join(work.path, 'config') };
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
    work.remove();
  });

  it('logs in with a local admin, keeps the session in a private profile and says who you are', async () => {
    const wrong = await tessera(['login', '--url', server.url, '--username', 'admin', '--password', 'wrong-password'], env);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('invalid username/password');
    const login = await tessera(['login', '--url', server.url, '--username', 'admin', '--password', 'cli-test-password'], env);
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${server.url} as admin`);
    const profiles = join(work.path, 'config', 'profiles.json');
    expect(statSync(profiles).mode & 0o777).toBe(0o600);
    const whoami = await tessera(['whoami', '--json'], env);
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ url: server.url, name: 'admin' });
    const missing = await tessera(['apps', 'list'], { TESSERA_CONFIG_DIR: join(work.path, 'nobody') });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('not logged in');
  });

  it('creates an admin API key pair and logs in with it (realm-cli mongodb-cloud login)', async () => {
    const created = await tessera(['admin-keys', 'create', '--name', 'ci', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as { public_key: string; private_key: string };
    const ciEnv = { TESSERA_CONFIG_DIR: join(work.path, 'ci-config') };
    const wrong = await tessera(['login', '--url', server.url, '--api-key', key.public_key, '--private-api-key', 'not-the-key'], ciEnv);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('invalid API key pair');
    const half = await tessera(['login', '--url', server.url, '--api-key', key.public_key], ciEnv);
    expect(half.code).toBe(2);
    const login = await tessera(['login', '--url', server.url, '--api-key', key.public_key, '--private-api-key', key.private_key], ciEnv);
    expect(login.code, login.stderr).toBe(0);
    expect(JSON.parse((await tessera(['whoami', '--json'], ciEnv)).stdout)).toMatchObject({ name: 'admin' });
    const listed = await tessera(['admin-keys', 'list'], env);
    expect(listed.stdout).toContain(key.public_key);
    expect(listed.stdout).not.toContain(key.private_key);
  });

  it('creates an app from each template: backend/ and frontend/, the client preset with the app id', async () => {
    const created: Record<string, { client_app_id: string; local_path: string }> = {};
    for (const [name, template] of [['webtodo', 'web.mql.todo'], ['svc', 'backend'], ['orders', 'triggers']] as const) {
      const run = await tessera(['apps', 'create', '--name', name, '--template', template, '--local', join(work.path, name), '--json'], env);
      expect(run.code, run.stderr).toBe(0);
      created[name] = JSON.parse(run.stdout) as { client_app_id: string; local_path: string };
      const config = JSON.parse(readFileSync(join(work.path, name, 'backend', 'config.json'), 'utf8')) as { app_id: string; name: string };
      expect(config).toMatchObject({ app_id: created[name].client_app_id, name });
    }
    expect(readFileSync(join(work.path, 'webtodo', 'frontend', 'config.js'), 'utf8')).toContain(`appId: '${created['webtodo'].client_app_id}'`);
    expect(readFileSync(join(work.path, 'webtodo', 'frontend', 'config.js'), 'utf8')).toContain(`baseUrl: '${server.url}'`);
    expect(() => statSync(join(work.path, 'orders', 'frontend'))).toThrow();
    expect(readFileSync(join(work.path, 'orders', 'backend', 'triggers', 'onNewOrder.json'), 'utf8')).toContain('"function_name": "recordOrder"');

    const withClient = join(work.path, 'webtodo-again');
    const pulled = await tessera(['pull', '--remote', created['webtodo'].client_app_id, '--local', withClient, '--template', 'web.mql.todo'], env);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(readFileSync(join(withClient, 'frontend', 'web.mql.todo', 'config.js'), 'utf8')).toContain(`appId: '${created['webtodo'].client_app_id}'`);
    expect(JSON.parse(readFileSync(join(withClient, 'backend', 'config.json'), 'utf8'))).toMatchObject({ name: 'webtodo' });

    const plain = await tessera(['apps', 'create', '--name', 'plain', '--local', join(work.path, 'plain')], env);
    expect(plain.code).toBe(0);
    expect(JSON.parse(readFileSync(join(work.path, 'plain', 'config.json'), 'utf8'))).toMatchObject({ name: 'plain' });
    const list = await tessera(['apps', 'list', '--json'], env);
    expect((JSON.parse(list.stdout) as { name: string }[]).map((app) => app.name)).toEqual(expect.arrayContaining(['webtodo', 'svc', 'orders', 'plain']));
    const described = await tessera(['apps', 'describe', '--app', 'orders'], env);
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toContain('Triggers: onNewOrder');
    expect(described.stdout).toContain('Data sources: mongodb-atlas (mongodb-atlas: Cluster0)');
    const table = await tessera(['apps', 'list'], env);
    expect(table.stdout).toMatch(/^App ID\s+Name\s+_id/);
  });

  it('pushes local edits of a function and a rule, and pulls back a byte-identical directory', async () => {
    const backend = join(work.path, 'webtodo', 'backend');
    const source = join(backend, 'functions', 'addItem', 'source.js');
    writeFileSync(source, `${readFileSync(source, 'utf8')}// edited locally\n`);
    const rulePath = join(backend, 'services', 'mongodb-atlas', 'rules', 'todo.items.json');
    const rule = JSON.parse(readFileSync(rulePath, 'utf8')) as { roles: { search: boolean }[] };
    rule.roles[0].search = false;
    writeFileSync(rulePath, canonical(rule));

    const diff = await tessera(['diff', '--local', join(work.path, 'webtodo')], env);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('~ modified functions/addItem/source.js');
    expect(diff.stdout).toContain('+// edited locally');
    expect(diff.stdout).toContain('~ modified services/mongodb-atlas/rules/todo.items.json');

    const dry = await tessera(['push', '--local', join(work.path, 'webtodo'), '--dry-run'], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('Dry run: 2 file(s) would change; nothing was deployed');
    const stillOld = await tessera(['diff', '--local', join(work.path, 'webtodo'), '--json'], env);
    expect(JSON.parse(stillOld.stdout)).toHaveLength(2);

    const push = await tessera(['push', '--local', join(work.path, 'webtodo'), '--yes'], env);
    expect(push.code, push.stderr).toBe(0);
    expect(push.stdout).toMatch(/Deployed 2 changed file\(s\) to webtodo-[a-z]{5}/);

    const pulled = join(work.path, 'pulled');
    const appId = (JSON.parse(readFileSync(join(backend, 'config.json'), 'utf8')) as { app_id: string }).app_id;
    const pull = await tessera(['pull', '--remote', appId, '--local', pulled], env);
    expect(pull.code, pull.stderr).toBe(0);
    expect(await snapshot(pulled)).toEqual(await snapshot(backend));
    const clean = await tessera(['diff', '--local', pulled], env);
    expect(clean.stdout).toContain('No differences');
    const again = await tessera(['push', '--local', pulled], env);
    expect(again.stdout).toContain('nothing to push');
    const occupied = await tessera(['pull', '--remote', appId, '--local', pulled], env);
    expect(occupied.code).toBe(2);
    expect(occupied.stderr).toContain('pass --yes');
  });

  it('pushes an app in the legacy layout and pulls it back in the current layout', async () => {
    const legacy = join(work.path, 'legacy-src');
    write(join(legacy, 'config.json'), canonical({ name: 'legacy', config_version: 20200603 }));
    write(join(legacy, 'data_sources', 'mongodb-atlas', 'config.json'), canonical({ name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } }));
    write(join(legacy, 'data_sources', 'mongodb-atlas', 'shop', 'orders', 'rules.json'), canonical({ database: 'shop', collection: 'orders', roles: [{ name: 'reader', apply_when: {}, read: true, write: false }], filters: [] }));
    write(join(legacy, 'data_sources', 'mongodb-atlas', 'shop', 'orders', 'schema.json'), canonical({ title: 'Order', bsonType: 'object', properties: { _id: { bsonType: 'objectId' }, total: { bsonType: 'double' } } }));
    write(join(legacy, 'data_sources', 'mongodb-atlas', 'shop', 'orders', 'relationships.json'), canonical({}));
    write(join(legacy, 'functions', 'total', 'config.json'), canonical({ name: 'total', private: false }));
    write(join(legacy, 'functions', 'total', 'source.js'), 'exports = (a, b) => a + b;\n');
    const created = await tessera(['apps', 'create', '--name', 'legacy', '--local', join(work.path, 'legacy-empty'), '--json'], env);
    const appId = (JSON.parse(created.stdout) as { client_app_id: string }).client_app_id;
    const push = await tessera(['push', '--remote', appId, '--local', legacy, '--yes'], env);
    expect(push.code, push.stderr).toBe(0);
    const back = join(work.path, 'legacy-current');
    expect((await tessera(['pull', '--remote', appId, '--local', back], env)).code).toBe(0);
    const files = Object.keys(await snapshot(back));
    expect(files.some((path) => path.startsWith('data_sources/'))).toBe(false);
    expect(files).toEqual(expect.arrayContaining(['config.json', 'functions/total/config.json', 'functions/total/source.js', 'services/mongodb-atlas/config.json', 'services/mongodb-atlas/rules/shop.orders.json']));
    const rule = JSON.parse(readFileSync(join(back, 'services', 'mongodb-atlas', 'rules', 'shop.orders.json'), 'utf8')) as Record<string, unknown>;
    expect(rule).toMatchObject({ database: 'shop', collection: 'orders', schema: { title: 'Order' }, roles: [{ name: 'reader' }] });
    expect(JSON.parse(readFileSync(join(back, 'config.json'), 'utf8'))).toMatchObject({ config_version: 20210101, app_id: appId });
  });

  it('refuses an invalid directory with exit 5, every violation with file and path, and changes nothing', async () => {
    const dir = join(work.path, 'svc', 'backend');
    const before = await snapshot(dir);
    write(join(dir, 'services', 'bad name', 'config.json'), canonical({ name: 'bad name', type: 'mongodb-atlas', config: { clusterName: 'C' } }));
    write(join(dir, 'triggers', 'broken.json'), canonical({ name: 'broken', type: 'DATABASE', function_name: 'nowhere', config: {} }));
    write(join(dir, 'values', 'v.json'), '{ "name": ');
    const push = await tessera(['push', '--local', join(work.path, 'svc'), '--yes'], env);
    expect(push.code).toBe(5);
    expect(push.stderr).toContain('services/bad name/config.json at name:');
    expect(push.stderr).toContain('triggers/broken.json at function_name:');
    expect(push.stderr).toMatch(/values\/v\.json.*JSON/i);
    const json = await tessera(['push', '--local', join(work.path, 'svc'), '--yes', '--json'], env);
    const error = JSON.parse(json.stderr) as { exit_code: number; violations: { file: string; path: string }[] };
    expect(error.exit_code).toBe(5);
    expect(error.violations.length).toBeGreaterThanOrEqual(3);
    const pulled = join(work.path, 'svc-after');
    const appId = (JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { app_id: string }).app_id;
    await tessera(['pull', '--remote', appId, '--local', pulled], env);
    expect(await snapshot(pulled)).toEqual(before);
  });

  it('lists logs and follows new ones with --tail', async () => {
    // The server's function runtime writes one FUNCTION entry per run: an app whose functions log and fail.
    const local = join(work.path, 'logged');
    expect((await tessera(['apps', 'create', '--name', 'logged', '--local', local], env)).code).toBe(0);
    write(join(local, 'functions', 'say', 'config.json'), canonical({ name: 'say', private: false }));
    write(join(local, 'functions', 'say', 'source.js'), "exports = () => { console.log('first entry'); };\n");
    write(join(local, 'functions', 'fail', 'config.json'), canonical({ name: 'fail', private: false }));
    write(join(local, 'functions', 'fail', 'source.js'), "exports = () => { throw new Error('boom'); };\n");
    const pushed = await tessera(['push', '--local', local, '--yes'], env);
    expect(pushed.code, pushed.stderr).toBe(0);
    const empty = await tessera(['logs', 'list', '--remote', 'logged', '--json'], env);
    expect(JSON.parse(empty.stdout)).toEqual([]);
    expect((await tessera(['function', 'run', '--remote', 'logged', '--name', 'say'], env)).code).toBe(0);
    await eventually(async () => expect((await tessera(['logs', 'list', '--remote', 'logged'], env)).stdout).toContain('FUNCTION say  first entry'), { timeoutMs: 10_000 });
    const tail = startTessera(['logs', 'list', '--remote', 'logged', '--tail', '--poll-interval', '200'], env);
    try {
      await eventually(() => expect(tail.stdout()).toContain('first entry'), { timeoutMs: 10_000 });
      await tessera(['function', 'run', '--remote', 'logged', '--name', 'fail'], env);
      await eventually(() => expect(tail.stdout()).toContain('error: boom (FunctionExecutionError)'), { timeoutMs: 10_000 });
      expect(tail.stdout().match(/first entry/g)).toHaveLength(1);
    } finally {
      tail.child.kill('SIGTERM');
    }
  });

  it('manages secrets without ever printing a value and runs a function', async () => {
    const create = await tessera(['secrets', 'create', '--remote', 'svc', '--name', 'token', '--value', 'very-secret'], env);
    expect(create.code).toBe(0);
    const list = await tessera(['secrets', 'list', '--remote', 'svc'], env);
    expect(list.stdout).toContain('token');
    expect(list.stdout + list.stderr).not.toContain('very-secret');
    expect((await tessera(['secrets', 'delete', '--remote', 'svc', '--secret', 'token'], env)).code).toBe(0);
    const run = await tessera(['function', 'run', '--remote', 'svc', '--name', 'hello', '--args', '["Ada"]'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('result: "Hello, Ada!"');
    const json = await tessera(['function', 'run', '--remote', 'svc', '--name', 'hello', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ result: 'Hello, stranger!' });
    // The runtime records the run in the app's log, where `logs list` reads it.
    await eventually(async () => {
      const listed = await tessera(['logs', 'list', '--remote', 'svc', '--type', 'FUNCTION', '--json'], env);
      const entries = JSON.parse(listed.stdout) as { function_name?: string; execution_id?: string; error?: string }[];
      expect(entries.some((entry) => entry.function_name === 'hello' && typeof entry.execution_id === 'string' && entry.error === undefined)).toBe(true);
    }, { timeoutMs: 10_000 });
    // A push reaches the runtime at once: the deployment is announced and its cache reloads.
    const fresh = join(work.path, 'svc-fresh');
    expect((await tessera(['pull', '--remote', 'svc', '--local', fresh], env)).code).toBe(0);
    writeFileSync(join(fresh, 'functions', 'hello', 'source.js'), 'exports = (name) => `Bye, ${name}`;\n');
    expect((await tessera(['push', '--local', fresh, '--yes'], env)).code).toBe(0);
    expect((await tessera(['function', 'run', '--remote', 'svc', '--name', 'hello', '--args', '["Ada"]'], env)).stdout).toContain('result: "Bye, Ada"');
    const missing = await tessera(['function', 'run', '--remote', 'svc', '--name', 'nope'], env);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain("function not found: 'nope'");
    const badArgs = await tessera(['function', 'run', '--remote', 'svc', '--name', 'hello', '--args', '{'], env);
    expect(badArgs.code).toBe(2);
  });

  it('manages app users: create, list, disable, enable, revoke and delete, seen by realm-web logins', async () => {
    const created = await tessera(['apps', 'create', '--name', 'people', '--template', 'web.mql.todo', '--local', join(work.path, 'people'), '--json'], env);
    const appId = (JSON.parse(created.stdout) as { client_app_id: string }).client_app_id;
    const user = await tessera(['users', 'create', '--remote', appId, '--email', 'ada@example.com', '--password', 'analytical', '--json'], env);
    expect(user.code, user.stderr).toBe(0);
    const userId = (JSON.parse(user.stdout) as { _id: string })._id;
    expect((await tessera(['users', 'create', '--remote', appId, '--email', 'ada@example.com', '--password', 'analytical'], env)).code).toBe(6);

    const realmApp = new Realm.App({ id: appId, baseUrl: server.url });
    const credentials = Realm.Credentials.emailPassword('ada@example.com', 'analytical');
    expect((await realmApp.logIn(credentials)).id).toBe(userId);

    const listed = await tessera(['users', 'list', '--remote', appId], env);
    expect(listed.stdout).toMatch(new RegExp(`${userId}\\s+normal\\s+local-userpass\\s+ada@example.com\\s+false`));
    expect((await tessera(['users', 'disable', '--remote', appId, '--user', userId], env)).code).toBe(0);
    expect(JSON.parse((await tessera(['users', 'list', '--remote', appId, '--state', 'disabled', '--json'], env)).stdout)).toMatchObject([{ _id: userId, disabled: true }]);
    await expect(realmApp.logIn(credentials)).rejects.toMatchObject({ statusCode: 401 });
    expect((await tessera(['users', 'enable', '--remote', appId, '--user', userId], env)).code).toBe(0);
    const again = await realmApp.logIn(credentials);
    expect((await tessera(['users', 'revoke', '--remote', appId, '--user', userId], env)).code).toBe(0);
    await expect(again.refreshAccessToken()).rejects.toMatchObject({ statusCode: 401 });
    expect((await tessera(['users', 'delete', '--remote', appId, '--user', userId], env)).code).toBe(0);
    expect(JSON.parse((await tessera(['users', 'list', '--remote', appId, '--json'], env)).stdout)).toEqual([]);
    const missing = await tessera(['users', 'delete', '--remote', appId, '--user', userId], env);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain(`user not found: '${userId}'`);
  });

  it('answers bad input with clear messages and exit codes', async () => {
    const badName = await tessera(['apps', 'create', '--name', 'has space', '--local', join(work.path, 'x1')], env);
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('invalid app name "has space"');
    const long = await tessera(['apps', 'create', '--name', 'n'.repeat(33), '--local', join(work.path, 'x2')], env);
    expect(long.stderr).toContain('the limit is 32');
    const template = await tessera(['apps', 'create', '--name', 'x3', '--template', 'nope', '--local', join(work.path, 'x3')], env);
    expect(template.code).toBe(4);
    expect(template.stderr).toContain("template 'nope' not found; available templates: backend, triggers, web.mql.todo");
    const unknown = await tessera(['pull', '--remote', 'no-such-app', '--local', join(work.path, 'x4')], env);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('app not found: "no-such-app"');
    const unreachable = await tessera(['apps', 'list', '--url', 'http://127.0.0.1:9'], env);
    expect(unreachable.code).toBe(8);
    expect(unreachable.stderr).toContain('cannot reach the server at http://127.0.0.1:9');
  });

  it('refreshes an expired access token from the profile, and rejects an expired CI token with exit 3', async () => {
    const key = deriveSigningKey(signingKey, 'admin');
    const profilesPath = join(work.path, 'config', 'profiles.json');
    const profiles = JSON.parse(readFileSync(profilesPath, 'utf8')) as { profiles: { default: { accessToken: string } } };
    // An access token names its session (sid): the fabricated ones belong to the profile's open session.
    const claims = JSON.parse(Buffer.from(profiles.profiles.default.accessToken.split('.')[1], 'base64url').toString()) as { sub: string; sid: string };
    const now = Math.floor(Date.now() / 1000);
    const expired = signJwt({ sub: claims.sub, iat: now - 7200, exp: now - 10, typ: 'access', sid: claims.sid }, key);

    const ci = await tessera(['apps', 'list'], { ...env, TESSERA_ACCESS_TOKEN: expired, TESSERA_URL: server.url });
    expect(ci.code).toBe(3);
    expect(ci.stderr).toContain('invalid session: access token expired');
    const fresh = signJwt({ sub: claims.sub, iat: now, exp: now + 600, typ: 'access', sid: claims.sid }, key);
    expect((await tessera(['apps', 'list', '--json'], { TESSERA_ACCESS_TOKEN: fresh, TESSERA_URL: server.url })).code).toBe(0);

    profiles.profiles.default.accessToken = expired;
    writeFileSync(profilesPath, JSON.stringify(profiles));
    const refreshed = await tessera(['apps', 'list', '--json'], env);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    const saved = JSON.parse(readFileSync(profilesPath, 'utf8')) as { profiles: { default: { accessToken: string } } };
    expect(saved.profiles.default.accessToken).not.toBe(expired);
  });

  it('deletes an app, then logs out', async () => {
    const deleted = await tessera(['apps', 'delete', '--app', 'plain', '--yes'], env);
    expect(deleted.code).toBe(0);
    expect((await tessera(['pull', '--remote', 'plain', '--local', join(work.path, 'x5')], env)).code).toBe(4);
    expect((await tessera(['logout'], env)).code).toBe(0);
    const after = await tessera(['apps', 'list'], env);
    expect(after.code).toBe(3);
  });
});
