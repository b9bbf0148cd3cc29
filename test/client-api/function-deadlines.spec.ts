import { emptyApp, writeAppFiles } from '@tessera/app-config';
import { Subjects } from '@tessera/contracts';
import { FunctionRuntimeService } from '@tessera/function-runtime';
import { MessageBus } from '@tessera/messaging';
import { AppRegistry, DeploymentStore } from '@tessera/platform';
// The real process host: the HTTP edge, the in-process transport and the function runtime with its sandboxes.
import { startHost, type RunningHost } from '@tessera/server';
import { loadSettings } from '@tessera/settings';
import { eventually, makeTempDir } from '@tessera/testing';

// The bus gives up on a request after 0.5 s unless its subject says otherwise; a function may run 30 s.
// Calls that outlive the bus default prove the deadline follows the function's limit; the 30 s limit is far
// longer than any test here waits, so a slot that comes back quickly came back because its caller left.
const settings = { TESSERA_REQUEST_TIMEOUT_SECONDS: '0.5', TESSERA_FUNCTION_TIME_LIMIT_SECONDS: '30' };

const functions = [
  { config: { name: 'slow', private: false }, source: 'exports = async (ms) => { await new Promise((done) => setTimeout(done, ms)); return `slept ${ms}`; };' },
  { config: { name: 'spin', private: false }, source: 'exports = () => { for (;;) {} };' },
  { config: { name: 'sum', private: false }, source: 'exports = (a, b) => String(a + b);' },
];

describe('function call deadlines and cancellation (standalone host over HTTP)', () => {
  const dir = makeTempDir('tessera-deadlines-');
  let host: RunningHost;

  /** A fresh app (its own sandboxes) with the three functions, and an anonymous user's access token. */
  async function deployApp(name: string): Promise<{ appId: string; call: (fn: string, args?: unknown[], init?: { signal?: AbortSignal }) => Promise<Response> }> {
    const record = await host.nest.get(AppRegistry).create({ name, groupId: '000000000000000000000001' });
    const app = emptyApp(name);
    app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
    app.functions.push(...functions);
    const deployed = await host.nest.get(DeploymentStore).deploy(record._id, writeAppFiles(app), { origin: 'test' });
    await host.nest.get(MessageBus).emit(Subjects.AppsDeploymentChanged, { appId: record._id, deploymentId: deployed._id, version: deployed.version });
    const api = `${host.url}/api/client/v2.0/app/${record.client_app_id}`;
    const login = await fetch(`${api}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const token = ((await login.json()) as { access_token: string }).access_token;
    return {
      appId: record._id,
      call: (fn, args = [], init = {}) =>
        fetch(`${api}/functions/call`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ name: fn, arguments: args }), ...init }),
    };
  }

  beforeAll(async () => {
    host = await startHost(loadSettings({ PORT: '0', HOST: '127.0.0.1', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: '', LOG_LEVEL: 'silent', ...settings }));
  });

  afterAll(async () => {
    await host?.close();
    dir.remove();
  });

  it('answers a function that runs longer than the bus default deadline with its result', async () => {
    const { call } = await deployApp('slowapp');
    const started = Date.now();
    const response = await call('slow', [1_500]);
    expect(await response.json()).toBe('slept 1500');
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
  });

  it('stops a call at the deadline its caller sent with the request', async () => {
    const { appId } = await deployApp('deadline');
    const runtime = host.nest.get(FunctionRuntimeService);
    const bus = host.nest.get(MessageBus);
    const request = { appId, functionName: 'spin', args: [], caller: { type: 'system' as const }, metadata: { origin: 'admin' as const } };
    await expect(bus.request(Subjects.FunctionsExecutionRun, request, { timeoutMs: 1_000 })).rejects.toMatchObject({ errorCode: 'MessagingTimeout' });
    // The runaway's sandbox is terminated well before the 30 s limit.
    expect(runtime.busySandboxCount(appId)).toBe(1);
    await eventually(() => runtime.sandboxCount(appId) === 0, { timeoutMs: 10_000 });
  });

  it('terminates the calls of clients that disconnected, so the next call of the app is served at once', async () => {
    const { appId, call } = await deployApp('spinner');
    const runtime = host.nest.get(FunctionRuntimeService);
    // Four runaway calls take every sandbox of the app (four per app); then their clients disconnect.
    const clients = Array.from({ length: 4 }, () => new AbortController());
    const calls = clients.map((client) => call('spin', [], { signal: client.signal }).catch((error: unknown) => error));
    await eventually(() => runtime.busySandboxCount(appId) === 4, { timeoutMs: 20_000 });
    for (const client of clients) client.abort();
    await Promise.all(calls);
    const started = Date.now();
    const response = await call('sum', [2, 3]);
    expect(await response.json()).toBe('5');
    expect(response.status).toBe(200);
    // Without cancellation the call would wait for a spinning sandbox to reach the 30 s limit.
    expect(Date.now() - started).toBeLessThan(10_000);
    // The runaway calls were stopped, not merely forgotten: only the sandbox that ran `sum` is left.
    await eventually(() => runtime.sandboxCount(appId) === 1 && runtime.busySandboxCount(appId) === 0, { timeoutMs: 10_000 });
  });
});
