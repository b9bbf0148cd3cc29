import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession } from './admin-session';

type ErrorBody = { error: string; error_code: string };
type RunBody = { result: unknown; logs: string[]; stats: { execution_time: string } };

const PASSWORD = 'execute-function-source-password';

// The console's "Run" of unsaved source (`POST .../debug/execute_function_source`), over HTTP against the real
// host: the real function runtime runs the source as the system or as a user, nothing is deployed, and the
// client API cannot make the runtime run source of its own.
describe('admin API: debug/execute_function_source', () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;
  let foreignAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: PASSWORD } });
    admin = await AdminSession.login(host, 'admin', PASSWORD);
    ({ _id: appId, client_app_id: clientAppId } = await admin.createApp('debug-source'));
    expect((await admin.request('POST', admin.app(appId, '/auth_providers'), { name: 'anon-user', type: 'anon-user' })).status).toBe(201);
    expect((await admin.request('POST', admin.app(appId, '/functions'), { name: 'debug_source', private: false, source: 'exports = () => "the deployed one";' })).status).toBe(201);
    foreignAppId = (await host.createApp('foreign-debug-source', (app) => app, { groupId: 'another-group' })).appId;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const run = (query: string, body: unknown, app = appId) => admin.request<RunBody & ErrorBody>('POST', admin.app(app, `/debug/execute_function_source?${query}`), body);

  it('runs source as the system user and answers its result and logs, deploying nothing', async () => {
    const response = await run('run_as_system=true', { source: 'exports = function() { console.log("adding", 2, 3); return { sum: 2 + 3, user: context.user.type }; };' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.result).toEqual({ sum: { $numberInt: '5' }, user: 'system' });
    expect(response.body.logs).toEqual(['adding 2 3']);
    expect(response.body.stats.execution_time).toMatch(/^\d+ms$/);
    const listed = (await admin.request<{ name: string }[]>('GET', admin.app(appId, '/functions'))).body.map((fn) => fn.name);
    expect(listed).toEqual(['debug_source']);
    // The deployed function of the name the runtime gives unsaved source is untouched, and still served to clients.
    const login = await host.anonymousLogin(clientAppId);
    const call = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${login.accessToken}` },
      body: JSON.stringify({ name: 'debug_source', arguments: [], source: { text: 'exports = () => "injected";' } }),
    });
    expect(await call.json()).toBe('the deployed one');
  });

  it('runs as an app user, and eval_source decides whether it may run', async () => {
    const { userId } = await host.anonymousLogin(clientAppId);
    const source = 'exports = () => context.user.id;';
    expect((await run(`user_id=${userId}`, { source })).body.result).toBe(userId);
    expect((await run(`user_id=${userId}`, { source, eval_source: JSON.stringify({ '%%user.id': userId }) })).body.result).toBe(userId);
    expect((await run(`user_id=${userId}`, { source, eval_source: '' })).body.result).toBe(userId);
    const denied = await run(`user_id=${userId}`, { source, eval_source: JSON.stringify({ '%%user.id': 'someone-else' }) });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatch(/can_evaluate denied/);
  });

  it("answers a failing or broken source with the runtime's error", async () => {
    const thrown = await run('run_as_system=true', { source: 'exports = () => { throw new Error("boom"); };' });
    expect(thrown.status).toBe(400);
    expect(thrown.body).toMatchObject({ error_code: 'FunctionExecutionError' });
    expect(thrown.body.error).toMatch(/boom/);
    const broken = await run('run_as_system=true', { source: 'exports = () => {' });
    expect(broken.status).toBe(400);
    expect(broken.body.error_code).toBe('FunctionExecutionError');
  });

  it('refuses a run that names no identity or two, no source, a bad eval_source, and another group', async () => {
    for (const [query, body] of [
      ['', { source: 'exports = () => 1;' }],
      ['run_as_system=true&user_id=abc', { source: 'exports = () => 1;' }],
      ['run_as_system=yes', { source: 'exports = () => 1;' }],
      ['run_as_system=true', {}],
      ['run_as_system=true', { source: '   ' }],
      ['run_as_system=true', { source: 42 }],
      ['run_as_system=true', { source: 'exports = () => 1;', eval_source: '{not json' }],
      ['run_as_system=true', { source: 'exports = () => 1;', eval_source: '[1]' }],
    ] as const) {
      const response = await run(query, body);
      expect(response.status, `${query} ${JSON.stringify(body)}`).toBe(400);
      expect(response.body.error_code).toBe('InvalidParameter');
    }
    const foreign = await admin.request<ErrorBody>('POST', `/groups/another-group/apps/${foreignAppId}/debug/execute_function_source?run_as_system=true`, { source: 'exports = () => 1;' });
    expect(foreign.status).toBe(404);
    const unauthenticated = await fetch(`${host.url}/api/admin/v3.0${admin.app(appId, '/debug/execute_function_source?run_as_system=true')}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"source":"exports = () => 1;"}' });
    expect(unauthenticated.status).toBe(401);
  });
});
