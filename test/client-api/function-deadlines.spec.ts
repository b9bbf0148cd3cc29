import { Subjects } from '@tessera/contracts';
import { FunctionRuntimeService } from '@tessera/function-runtime';
import { MessageBus } from '@tessera/messaging';
import { eventually } from '@tessera/testing';
// The real process host: the HTTP edge, the in-process transport and the function runtime with its sandboxes.
import { startTestHost, type TestHost } from '../support/test-host';

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
  let host: TestHost;

  /** A fresh app (its own sandboxes) with the three functions, and an anonymous user's access token. */
  async function deployApp(name: string): Promise<{ appId: string; call: (fn: string, args?: unknown[], init?: { signal?: AbortSignal }) => Promise<Response> }> {
    const { appId, clientAppId } = await host.createApp(name, (app) => {
      app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
      app.functions.push(...functions);
    });
    const api = `${host.url}/api/client/v2.0/app/${clientAppId}`;
    const token = (await host.anonymousLogin(clientAppId)).accessToken;
    return {
      appId,
      call: (fn, args = [], init = {}) =>
        fetch(`${api}/functions/call`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ name: fn, arguments: args }), ...init }),
    };
  }

  beforeAll(async () => {
    host = await startTestHost({ settings });
  });

  afterAll(async () => {
    await host?.close();
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
    // Caller and handler hold the same deadline in one process, so either timer may fire first: the caller
    // gives up (MessagingTimeout) or the runtime's cancellation answer arrives just before it. Both end the call.
    const outcome = await bus.request(Subjects.FunctionsExecutionRun, request, { timeoutMs: 1_000 }).then(
      (reply) => reply,
      (error: unknown) => error,
    );
    if (outcome instanceof Error) expect(outcome).toMatchObject({ errorCode: 'MessagingTimeout' });
    else expect(outcome).toMatchObject({ ok: false, error: { errorCode: 'ExecutionCancelled' } });
    // The runaway's sandbox is terminated well before the 30 s limit.
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
