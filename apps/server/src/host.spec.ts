import { Subjects } from '@tessera/contracts';
import { FunctionRuntimeService } from '@tessera/function-runtime';
import { MessageBus } from '@tessera/messaging';
import { type AppConfig, emptyApp, writeAppFiles } from '@tessera/app-config';
import { hashPassword } from '@tessera/credentials';
import { AppRegistry, AppUserStore, DataSources, DeployedApps, DeploymentStore, LogStore, newObjectIdHex, PlatformDatabase } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';
import { deployTestApp, eventually, makeTempDir, repositoryRoot } from '@tessera/testing';
import { join } from 'node:path';
import { startHost, type RunningHost } from './host';

// The standalone host in one process: the gateway's path to the runtime goes over the in-process transport,
// and the runtime reaches the datastore through the rules layer.
describe('standalone host', () => {
  const dir = makeTempDir('tessera-host-');
  let host: RunningHost;
  let bus: MessageBus;
  let appId: string;

  beforeAll(async () => {
    host = await startHost(loadSettings({ PORT: '0', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: join(repositoryRoot, 'examples/todo'), LOG_LEVEL: 'warn', TESSERA_ADMIN_PASSWORD: 'host-test-password' }));
    bus = host.nest.get(MessageBus);
    appId = host.bootstrap.createdExample!._id;
  });

  afterAll(async () => {
    await host?.close();
    dir.remove();
  });

  /** An app deployed in the bootstrap group, which the admin user reaches. */
  const deploy = (name: string, app: AppConfig) => deployTestApp({ apps: host.nest.get(AppRegistry), deployments: host.nest.get(DeploymentStore) }, name, app, { groupId: host.bootstrap.groupId });

  const run = (functionName: string, args: unknown[], caller: { type: 'system' } | { type: 'user'; user: { id: string } }) =>
    bus.request(Subjects.FunctionsExecutionRun, { appId, functionName, args: args as never, caller, metadata: { origin: 'client' } });

  it('runs an example function through the transport and the runtime', async () => {
    expect(await run('sum', [{ $numberInt: '2' }, { $numberInt: '3' }], { type: 'user', user: { id: 'u1' } })).toMatchObject({ ok: true, result: { $numberInt: '5' } });
    expect(await run('greet', ['Ada'], { type: 'system' })).toMatchObject({ ok: true, result: expect.stringContaining('Ada') });
  });

  it('writes and reads through the data-access API under the example rules', async () => {
    const added = await run('addItem', ['buy milk'], { type: 'user', user: { id: 'u1' } });
    expect(added).toMatchObject({ ok: true, result: { $oid: expect.stringMatching(/^[0-9a-f]{24}$/) } });
    const mine = await run('listMyItems', [], { type: 'user', user: { id: 'u1' } });
    expect(mine).toMatchObject({ ok: true, result: [{ summary: 'buy milk', owner_id: 'u1' }] });
    const theirs = await run('listMyItems', [], { type: 'user', user: { id: 'u2' } });
    expect(theirs).toMatchObject({ ok: true, result: [] });
  });

  it('records each call in the app logs the admin API reads', async () => {
    await run('greet', ['Logs'], { type: 'user', user: { id: 'u7' } });
    // The runtime records the call after answering it.
    const logs = await eventually(async () => {
      const entries = await host.nest.get(LogStore).list(appId, { types: ['FUNCTION'] });
      expect(entries.find((entry) => entry.user_id === 'u7')).toMatchObject({ type: 'FUNCTION', function_name: 'greet', messages: [] });
      return entries;
    });
    expect(logs.some((entry) => entry.function_name === 'sum')).toBe(true);
  });

  it('serves execution logs through the admin API, without arguments where disable_arg_logs is set', async () => {
    const app = emptyApp('logged');
    app.functions.push(
      { config: { name: 'open', private: false }, source: 'exports = (x) => { console.log("open", x); return x; };' },
      { config: { name: 'quiet', private: false, disable_arg_logs: true }, source: 'exports = (x) => { console.log("quiet"); return x; };' },
    );
    const { appId: loggedId, groupId } = await deploy('logged', app);
    const call = (functionName: string) =>
      bus.request(Subjects.FunctionsExecutionRun, { appId: loggedId, functionName, args: ['s3cret'], caller: { type: 'system' }, metadata: { origin: 'admin' } });
    expect(await call('open')).toMatchObject({ ok: true, result: 's3cret' });
    expect(await call('quiet')).toMatchObject({ ok: true, result: 's3cret' });

    const port = (host.nest.getHttpServer().address() as { port: number }).port;
    const login = await fetch(`http://127.0.0.1:${port}/api/admin/v3.0/auth/providers/local-userpass/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'host-test-password' }) });
    const { access_token } = (await login.json()) as { access_token: string };
    const logs = await eventually(async () => {
      const response = await fetch(`http://127.0.0.1:${port}/api/admin/v3.0/groups/${groupId}/apps/${loggedId}/logs?type=FUNCTION`, { headers: { authorization: `Bearer ${access_token}` } });
      const body = (await response.json()) as { logs: Record<string, unknown>[] };
      expect(body.logs).toHaveLength(2);
      return body.logs;
    });
    const open = logs.find((entry) => entry['function_name'] === 'open')!;
    const quiet = logs.find((entry) => entry['function_name'] === 'quiet')!;
    expect(open).toMatchObject({ type: 'FUNCTION', messages: ['open s3cret'], arguments_omitted: false });
    expect(String(open['arguments'])).toContain('s3cret');
    expect(quiet).toMatchObject({ type: 'FUNCTION', messages: ['quiet'], arguments_omitted: true });
    expect(quiet).not.toHaveProperty('arguments');
  });

  it('runs a run_as_user_id function as that app user, looked up in the user store', async () => {
    const { appId: runasId } = await deploy('runas', emptyApp('runas'));
    const grace = await new AppUserStore(host.nest.get(DataSources).platform(), runasId).createUser('normal', { name: 'Grace' });
    const app = emptyApp('runas');
    app.functions.push({ config: { name: 'whoami', private: false, run_as_user_id: grace._id }, source: 'exports = () => ({ id: context.user.id, name: context.user.data.name });' });
    await host.nest.get(DeploymentStore).deploy(runasId, writeAppFiles(app), { origin: 'test' });
    // Deployed behind the admin API's back: the deployment event reaches the runtime later, so drop the cached app now.
    host.nest.get(DeployedApps).invalidate(runasId);
    const result = await bus.request(Subjects.FunctionsExecutionRun, { appId: runasId, functionName: 'whoami', args: [], caller: { type: 'system' }, metadata: { origin: 'admin' } });
    expect(result).toMatchObject({ ok: true, result: { id: grace._id, name: 'Grace' } });
  });

  it('starts a sandbox for a deployed app before its first call', async () => {
    const app = emptyApp('warmed');
    app.functions.push({ config: { name: 'hello', private: false }, source: 'exports = () => "hello";' });
    const { appId: warmedId } = await deploy('warmed', app);
    const runtime = host.nest.get(FunctionRuntimeService);
    expect(runtime.sandboxCount(warmedId)).toBe(0);
    const deployment = await host.nest.get(DeploymentStore).deploy(warmedId, writeAppFiles(app), { origin: 'test' });
    await bus.emit(Subjects.AppsDeploymentChanged, { appId: warmedId, deploymentId: deployment._id, version: deployment.version });
    await eventually(() => expect(runtime.sandboxCount(warmedId)).toBe(1));
    expect(await bus.request(Subjects.FunctionsExecutionRun, { appId: warmedId, functionName: 'hello', args: [], caller: { type: 'system' }, metadata: { origin: 'admin' } })).toMatchObject({ ok: true, result: 'hello' });
    expect(runtime.sandboxCount(warmedId)).toBe(1);
  });

  it('evaluates %function and %%values in rules for user data access', async () => {
    const app = emptyApp('ruled');
    app.values.push({ name: 'openToAll', value: false, from_secret: false });
    app.functions.push(
      { config: { name: 'isBoss', private: true }, source: 'exports = (id) => id === "boss";' },
      { config: { name: 'list', private: false }, source: 'exports = () => context.services.get("mongodb-atlas").db("r").collection("c").find({}).toArray();' },
      { config: { name: 'seed', private: false, run_as_system: true }, source: 'exports = () => context.services.get("mongodb-atlas").db("r").collection("c").insertOne({ _id: 1, x: 1 });' },
    );
    app.services.push({
      config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'RuledCluster' } },
      collectionRules: [
        {
          database: 'r',
          collection: 'c',
          roles: [
            { name: 'everyone', apply_when: { '%%values.openToAll': true }, read: true },
            { name: 'boss', apply_when: { '%%true': { '%function': { name: 'isBoss', arguments: ['%%user.id'] } } }, read: true },
          ],
        },
      ],
      rules: [],
      webhooks: [],
    });
    const { appId: ruledId } = await deploy('ruled', app);
    const as = (functionName: string, id: string) => bus.request(Subjects.FunctionsExecutionRun, { appId: ruledId, functionName, args: [], caller: { type: 'user', user: { id } }, metadata: { origin: 'client' } });
    const seeded = await as('seed', 'boss');
    // The whole answer in the message: a refusal's error is otherwise shown only as `{ …(2) }`.
    expect(seeded, JSON.stringify(seeded)).toMatchObject({ ok: true });
    expect(await as('list', 'boss')).toMatchObject({ ok: true, result: [{ x: { $numberInt: '1' } }] });
    expect(await as('list', 'peon')).toMatchObject({ ok: true, result: [] });
    app.values[0].value = true;
    await host.nest.get(DeploymentStore).deploy(ruledId, writeAppFiles(app), { origin: 'test' });
    host.nest.get(DeployedApps).invalidate(ruledId);
    expect(await as('list', 'peon')).toMatchObject({ ok: true, result: [{ x: { $numberInt: '1' } }] });
  });

  it('reports a missing function as FunctionNotFound', async () => {
    expect(await run('nope', [], { type: 'system' })).toMatchObject({ ok: false, error: { errorCode: 'FunctionNotFound' } });
  });
});

interface Explained {
  allowed?: boolean;
  role?: string | null;
  document?: Record<string, unknown> | null;
  trace: { withheldFields: string[] };
  error_code?: string;
}

describe('rules evaluation endpoint', () => {
  const dir = makeTempDir('tessera-explain-');
  let host: RunningHost;
  let token: string;
  let base: string;

  beforeAll(async () => {
    host = await startHost(loadSettings({ PORT: '0', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: join(repositoryRoot, 'examples/todo'), LOG_LEVEL: 'warn', TESSERA_ADMIN_PASSWORD: 'host-test-password' }));
    const address = host.nest.getHttpServer().address() as { port: number };
    const login = await fetch(`http://127.0.0.1:${address.port}/api/admin/v3.0/auth/providers/local-userpass/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'host-test-password' }) });
    token = ((await login.json()) as { access_token: string }).access_token;
    const app = host.bootstrap.createdExample!;
    base = `http://127.0.0.1:${address.port}/api/admin/v3.0/groups/${app.group_id}/apps/${app._id}/rules/evaluate`;
  });

  afterAll(async () => {
    await host?.close();
    dir.remove();
  });

  const evaluate = async (body: unknown) => {
    const response = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Explained };
  };

  it('refuses an administrator of another group, whatever group the path names', async () => {
    // The rules may call the app's functions as system: explaining them is for the app's own group only.
    const db = host.nest.get(PlatformDatabase);
    const otherGroup = newObjectIdHex();
    await (await db.collection('admin_users')).insertOne({ _id: newObjectIdHex(), username: 'explain-intruder', passwordHash: await hashPassword('intruder-password'), groupIds: [otherGroup], created: new Date().toISOString() });
    const origin = new URL(base).origin;
    const login = await fetch(`${origin}/api/admin/v3.0/auth/providers/local-userpass/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'explain-intruder', password: 'intruder-password' }) });
    const intruder = ((await login.json()) as { access_token: string }).access_token;
    const app = host.bootstrap.createdExample!;
    const body = JSON.stringify({ user: { id: 'u1' }, operation: 'read', namespace: { database: 'todo', collection: 'items' }, document: { _id: 1, owner_id: 'u1' } });
    for (const groupId of [app.group_id, otherGroup]) {
      const response = await fetch(`${origin}/api/admin/v3.0/groups/${groupId}/apps/${app._id}/rules/evaluate`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${intruder}` }, body });
      expect(response.status, groupId).toBe(404);
      expect(((await response.json()) as { error_code: string }).error_code).toBe('GroupNotFound');
    }
  });

  it('explains a read of the deployed rules: the role, the deciding expression and the visible document', async () => {
    const own = await evaluate({ user: { id: 'u1' }, operation: 'read', namespace: { database: 'todo', collection: 'items' }, document: { _id: 1, owner_id: 'u1', summary: 's' } });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ allowed: true, document: { owner_id: 'u1', summary: 's' } });
    expect(own.body['role']).toEqual(expect.any(String));
    expect(own.body['trace']).toMatchObject({ operation: 'read', namespace: 'todo.items' });
  });

  it('explains an inline rule with withheld fields and a refused write', async () => {
    const rule = { roles: [{ name: 'viewer', apply_when: {}, fields: { title: { read: true } }, additional_fields: { read: false } }] };
    const read = await evaluate({ user: { id: 'u9' }, operation: 'read', rule, document: { _id: 1, title: 't', secret: 's' } });
    expect(read.body).toMatchObject({ allowed: true, role: 'viewer', document: { title: 't' } });
    expect(read.body['document']).not.toHaveProperty('secret');
    expect(read.body.trace.withheldFields).toContain('secret');
    const write = await evaluate({ user: { id: 'u9' }, operation: 'insert', rule, document: { _id: 2, title: 't' } });
    expect(write.body).toMatchObject({ allowed: false, role: 'viewer', error: { error_code: 'SchemaValidationFailedWrite' } });
  });

  it('explains partition permissions and refuses malformed requests', async () => {
    const permissions = { read: { '%%partition': 'PUBLIC' }, write: { '%%partition': '%%user.id' } };
    expect((await evaluate({ user: { id: 'u1' }, operation: 'sync_write', partition: 'u1', permissions })).body).toMatchObject({ allowed: true });
    expect((await evaluate({ user: { id: 'u1' }, operation: 'sync_write', partition: 'PUBLIC', permissions })).body).toMatchObject({ allowed: false });
    expect((await evaluate({ user: { id: 'u1' }, operation: 'sync_read', partition: 'PUBLIC', permissions })).body).toMatchObject({ allowed: true });
    const bad = await evaluate({ operation: 'read' });
    expect(bad.status).toBe(400);
    expect(bad.body.error_code).toBe('InvalidParameter');
  });
});

describe('the first app of an empty platform', () => {
  const dir = makeTempDir('tessera-host-example-');
  afterAll(() => dir.remove());

  it('is refused with the setting named when TESSERA_EXAMPLE_APP names no directory, and is none with TESSERA_EXAMPLE_APP=none', async () => {
    const settings = (example: string, data: string) => loadSettings({ PORT: '0', TESSERA_DATA_DIR: join(dir.path, data), TESSERA_EXAMPLE_APP: example, LOG_LEVEL: 'silent', TESSERA_ADMIN_PASSWORD: 'host-test-password' });
    await expect(startHost(settings(join(dir.path, 'missing-app'), 'a'))).rejects.toThrow(/^TESSERA_EXAMPLE_APP: no app directory at .*missing-app/);
    const host = await startHost(settings('none', 'b'));
    try {
      expect(host.bootstrap.createdExample).toBeUndefined();
      expect(await host.nest.get(AppRegistry).list()).toEqual([]);
    } finally {
      await host.close();
    }
  });
});
