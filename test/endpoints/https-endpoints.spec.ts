import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { type AppConfig, emptyApp, HTTPS_ENDPOINTS_FILE, type HttpsEndpointConfig } from '@tessera/app-config';
import { signJwt } from '@tessera/credentials';
import { LogStore } from '@tessera/platform';
import { eventually } from '@tessera/testing';
// The real process host: its HTTP edge, the in-process bus and the function runtime with its sandboxes.
import { startTestHost, type TestHost } from '../support/test-host';
import { httpsEndpoint as endpoint } from './endpoint-config';

// Functions may run 3 s here, so the one that never returns is stopped by the runtime's limit.
const settings = { TESSERA_FUNCTION_TIME_LIMIT_SECONDS: '3' };
const SECRET = 'endpoint-secret-value';

const fn = (name: string, source: string, config: Record<string, unknown> = {}) => ({ config: { name, private: true, ...config }, source });

const functions = [
  fn('echo', `exports = (request, response) => ({
    query: request.query,
    custom: request.headers['X-Custom'],
    contextCustom: context.request.requestHeaders['X-Custom'],
    body: request.body === undefined ? null : request.body.text(),
    method: context.request.httpMethod,
  });`, { run_as_system: true }),
  fn('typed', "exports = () => ({ n: 1, big: 2.5, id: new BSON.ObjectId('5f0c5e0b9d1e8a2b3c4d5e6f'), at: new Date(0) });", { run_as_system: true }),
  fn('custom', `exports = (request, response) => {
    response.setStatusCode(201);
    response.setHeader('X-One', 'a');
    response.addHeader('X-Many', '1');
    response.addHeader('X-Many', '2');
    response.setBody('created ' + request.query.name);
    return 'ignored';
  };`, { run_as_system: true }),
  fn('inject', "exports = (request, response) => { response.setHeader('X-Evil', 'a\\r\\nSet-Cookie: stolen=1'); return 'no'; };", { run_as_system: true }),
  fn('throws', "exports = () => { throw new Error('the endpoint failed on purpose'); };", { run_as_system: true }),
  fn('hangs', 'exports = () => new Promise(() => {});', { run_as_system: true }),
  fn('whoami', 'exports = () => ({ id: context.user.id, system: context.runningAsSystem() });'),
  fn('asSystem', 'exports = () => ({ system: context.runningAsSystem() });', { run_as_system: true }),
];

const endpoints: HttpsEndpointConfig[] = [
  endpoint('/echo', 'echo'),
  endpoint('/any', 'echo', { http_method: '*' }),
  endpoint('/secret', 'echo', { validation_method: 'SECRET_AS_QUERY_PARAM', secret_name: 'hookSecret' }),
  endpoint('/signed', 'echo', { validation_method: 'VERIFY_PAYLOAD', secret_name: 'hookSecret' }),
  endpoint('/json', 'typed', { http_method: 'GET' }),
  endpoint('/ejson', 'typed', { http_method: 'GET', return_type: 'EJSON' }),
  endpoint('/custom', 'custom', { http_method: 'GET' }),
  endpoint('/quiet', 'custom', { http_method: 'GET', respond_result: false }),
  endpoint('/silent', 'echo', { respond_result: false }),
  endpoint('/off', 'echo', { disabled: true }),
  endpoint('/inject', 'inject'),
  endpoint('/throws', 'throws'),
  endpoint('/hangs', 'hangs'),
  endpoint('/nested/route/me', 'whoami', { http_method: 'GET' }),
  endpoint('/me-created', 'whoami', { http_method: 'GET', create_user_on_auth: true }),
  endpoint('/system', 'asSystem', { http_method: 'GET' }),
  endpoint('/as-user', 'whoami-fixed', { http_method: 'GET' }),
  endpoint('/as-script', 'whoami-script', { http_method: 'GET' }),
];

function withEndpoints(app: AppConfig, runAsUser?: string): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' }, { name: 'local-userpass', type: 'local-userpass', config: { autoConfirm: true } });
  app.functions.push(...functions);
  if (runAsUser) {
    app.functions.push(fn('whoami-fixed', 'exports = () => ({ id: context.user.id, system: context.runningAsSystem() });', { run_as_user_id: runAsUser }));
    app.functions.push(fn('whoami-script', 'exports = () => ({ id: context.user.id, system: context.runningAsSystem() });', { run_as_user_id_script_source: `exports = () => '${runAsUser}';` }));
  }
  app.extraFiles.set(HTTPS_ENDPOINTS_FILE, new TextEncoder().encode(JSON.stringify(endpoints)));
}

/** Runs curl with `args`; resolves with its stdout (`-w` puts the status on the last line). */
function curl(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-s', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout }));
  });
}

describe('custom HTTPS endpoints (standalone host over HTTP)', () => {
  let host: TestHost;
  let appId: string;
  let clientAppId: string;
  let base: string;
  let anonUser: { id: string; token: string };

  beforeAll(async () => {
    host = await startTestHost({ settings });
    // The run-as settings name a user of the app: the app is deployed, a user made, then redeployed naming it.
    ({ appId, clientAppId } = await host.createApp('endpoints', (app) => withEndpoints(app)));
    const login = await host.anonymousLogin(clientAppId);
    anonUser = { id: login.userId, token: login.accessToken };
    const config = emptyApp('endpoints');
    withEndpoints(config, anonUser.id);
    await host.redeploy(appId, config);
    await host.secrets.create(appId, 'hookSecret', SECRET);
    base = `${host.url}/app/${clientAppId}/endpoint`;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('gives the function the request: query (first value), canonical header names and the raw body', async () => {
    const response = await fetch(`${base}/echo?a=1&a=2&b=x`, { method: 'POST', headers: { 'x-custom': 'yes', 'content-type': 'text/plain' }, body: 'raw body text' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ query: { a: '1', b: 'x' }, custom: ['yes'], contextCustom: ['yes'], body: 'raw body text', method: 'POST' });
  });

  it("serves every method of a '*' endpoint and only its method otherwise", async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const response = await fetch(`${base}/any`, { method });
      expect(response.status, method).toBe(200);
      expect(((await response.json()) as { method: string }).method).toBe(method);
    }
    const wrong = await fetch(`${base}/echo`, { method: 'GET' });
    expect(wrong.status).toBe(405);
    expect(await wrong.json()).toMatchObject({ error_code: 'MethodNotAllowed' });
  });

  it('checks SECRET_AS_QUERY_PARAM: the right secret runs the function, a wrong or missing one is refused', async () => {
    const ok = await fetch(`${base}/secret?secret=${SECRET}`, { method: 'POST' });
    expect(ok.status).toBe(200);
    for (const query of ['?secret=wrong', '', `?secret=${SECRET}x`]) {
      const refused = await fetch(`${base}/secret${query}`, { method: 'POST' });
      expect(refused.status, query).toBe(401);
      expect(await refused.json()).toEqual({ error: expect.stringMatching(/invalid secret/) as unknown, error_code: 'IncomingWebhookAuthFailed' });
    }
  });

  it('checks VERIFY_PAYLOAD: Endpoint-Signature sha256=<hex HMAC of the raw body>, sent by curl', async () => {
    const body = '{"message":"MESSAGE"}';
    const signature = createHmac('sha256', SECRET).update(body).digest('hex');
    const ok = await curl(['-X', 'POST', '-H', 'Content-Type: application/json', '-H', `Endpoint-Signature: sha256=${signature}`, '-d', body, '-w', '\n%{http_code}', `${base}/signed`]);
    const [okBody, okStatus] = ok.stdout.split('\n');
    expect(okStatus).toBe('200');
    expect(JSON.parse(okBody ?? '')).toMatchObject({ body });
    // The same signature over another body, a signature by another secret, and none at all.
    const forged = createHmac('sha256', 'not-the-secret').update(body).digest('hex');
    for (const [sent, header] of [['{"message":"CHANGED"}', `sha256=${signature}`], [body, `sha256=${forged}`], [body, undefined]] as const) {
      const refused = await curl(['-X', 'POST', '-H', 'Content-Type: application/json', ...(header ? ['-H', `Endpoint-Signature: ${header}`] : []), '-d', sent, '-w', '\n%{http_code}', `${base}/signed`]);
      const [refusedBody, refusedStatus] = refused.stdout.split('\n');
      expect(refusedStatus).toBe('401');
      expect(JSON.parse(refusedBody ?? '')).toMatchObject({ error_code: 'IncomingWebhookAuthFailed', error: expect.stringMatching(/invalid signature/) as unknown });
    }
  });

  it('returns plain JSON or canonical EJSON by return_type', async () => {
    const json = await fetch(`${base}/json`);
    expect(await json.json()).toEqual({ n: 1, big: 2.5, id: '5f0c5e0b9d1e8a2b3c4d5e6f', at: '1970-01-01T00:00:00.000Z' });
    const ejson = await fetch(`${base}/ejson`);
    expect(await ejson.json()).toEqual({ n: { $numberInt: '1' }, big: { $numberDouble: '2.5' }, id: { $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' }, at: { $date: { $numberLong: '0' } } });
  });

  it('lets the Accept header pick JSON or EJSON over the return type, as App Services documented it', async () => {
    const canonical = { n: { $numberInt: '1' }, big: { $numberDouble: '2.5' }, id: { $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' }, at: { $date: { $numberLong: '0' } } };
    const plain = { n: 1, big: 2.5, id: '5f0c5e0b9d1e8a2b3c4d5e6f', at: '1970-01-01T00:00:00.000Z' };
    expect(await (await fetch(`${base}/json`, { headers: { accept: 'application/ejson' } })).json()).toEqual(canonical);
    expect(await (await fetch(`${base}/ejson`, { headers: { accept: 'application/json' } })).json()).toEqual(plain);
    // No valid Accept: the return type decides.
    expect(await (await fetch(`${base}/ejson`, { headers: { accept: 'text/html, */*' } })).json()).toEqual(canonical);
    expect(await (await fetch(`${base}/json`, { headers: { accept: '*/*' } })).json()).toEqual(plain);
  });

  it("answers with what the function set on the response object, and 204 when respond_result is off and it set nothing", async () => {
    const custom = await fetch(`${base}/custom?name=widget`);
    expect(custom.status).toBe(201);
    expect(custom.headers.get('x-one')).toBe('a');
    expect(custom.headers.get('x-many')).toBe('1, 2');
    expect(await custom.text()).toBe('created widget');
    const quiet = await fetch(`${base}/quiet?name=x`);
    expect(quiet.status).toBe(201);
    const silent = await fetch(`${base}/silent`, { method: 'POST', body: 'x' });
    expect(silent.status).toBe(204);
    expect(await silent.text()).toBe('');
  });

  it('does not serve a disabled endpoint, an unknown route or a traversal out of the endpoint prefix', async () => {
    for (const route of ['/off', '/missing', '/echo/extra']) {
      const response = await fetch(`${base}${route}`, { method: 'POST' });
      expect(response.status, route).toBe(404);
      expect(await response.json()).toMatchObject({ error_code: 'IncomingWebhookNotFound' });
    }
    // curl sends the path as written: `..` and its percent-encoded form stay inside the endpoint namespace.
    for (const path of ['/../../api/client/v2.0/app/' + clientAppId + '/location', '/%2e%2e/%2e%2e/api/client/v2.0/app/' + clientAppId + '/location', '/./echo']) {
      const response = await curl(['--path-as-is', '-X', 'POST', '-w', '\n%{http_code}', `${base}${path}`]);
      const [body, status] = response.stdout.split('\n');
      expect(status, path).toBe('404');
      expect(JSON.parse(body ?? '')).toMatchObject({ error_code: 'IncomingWebhookNotFound' });
    }
  });

  it('refuses a header with CR/LF set by the function, and answers a throwing function with its error', async () => {
    const injected = await fetch(`${base}/inject`, { method: 'POST' });
    expect(injected.status).toBe(400);
    expect(injected.headers.get('set-cookie')).toBeNull();
    expect(injected.headers.get('x-evil')).toBeNull();
    expect(await injected.json()).toMatchObject({ error_code: 'FunctionExecutionError', error: expect.stringMatching(/invalid header value/) as unknown });
    const thrown = await fetch(`${base}/throws`, { method: 'POST' });
    expect(thrown.status).toBe(400);
    expect(await thrown.json()).toEqual({ error: 'the endpoint failed on purpose', error_code: 'FunctionExecutionError' });
  });

  it('stops a function that never returns at the time limit', async () => {
    const response = await fetch(`${base}/hangs`, { method: 'POST' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error_code: 'ExecutionTimeLimitExceeded' });
  }, 30_000);

  it('refuses a body over the size limit with App Services’ error', async () => {
    const response = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(19 * 1024 * 1024) });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 'request body too large', error_code: 'RequestTooLarge' });
  });

  it('runs an application-authenticated endpoint as the user of a bearer token, and refuses forged, foreign and missing credentials', async () => {
    const ok = await fetch(`${base}/nested/route/me`, { headers: { authorization: `Bearer ${anonUser.token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ id: anonUser.id, system: false });

    const [, payload] = anonUser.token.split('.');
    const forged = signJwt(JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as Record<string, unknown> & { sub: string; iat: number; exp: number }, Buffer.from('not the app key'));
    const other = await host.createApp('other', (app) => app.authProviders.push({ name: 'anon-user', type: 'anon-user' }));
    const foreign = (await host.anonymousLogin(other.clientAppId)).accessToken;
    for (const token of [forged, foreign, 'not.a.token']) {
      const refused = await fetch(`${base}/nested/route/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error_code: 'InvalidSession' });
    }
    const none = await fetch(`${base}/nested/route/me`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: 'no authentication methods were specified', error_code: 'InvalidSession' });
  });

  it('authenticates email/password headers, creating the user only with create_user_on_auth', async () => {
    const register = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/local-userpass/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', password: 'correct horse' }),
    });
    expect(register.status).toBe(201);
    const headers = { email: 'ada@example.com', password: 'correct horse' };
    const noUser = await fetch(`${base}/nested/route/me`, { headers });
    expect(noUser.status).toBe(401);
    expect(await noUser.json()).toEqual({ error: 'invalid session: error finding user for endpoint', error_code: 'InvalidSession' });
    const created = await fetch(`${base}/me-created`, { headers });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    // The user exists now: the endpoint without create_user_on_auth finds it.
    const again = await fetch(`${base}/nested/route/me`, { headers });
    expect(await again.json()).toEqual({ id, system: false });
    const wrong = await fetch(`${base}/nested/route/me`, { headers: { ...headers, password: 'wrong password' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error_code: 'InvalidPassword' });
  });

  it('runs system, fixed-user and scripted-user functions without credentials, as their run-as setting says', async () => {
    expect(await (await fetch(`${base}/system`)).json()).toEqual({ system: true });
    expect(await (await fetch(`${base}/as-user`)).json()).toEqual({ id: anonUser.id, system: false });
    expect(await (await fetch(`${base}/as-script`)).json()).toEqual({ id: anonUser.id, system: false });
  });

  it('logs each call in the app logs as ENDPOINT, refusals included', async () => {
    await fetch(`${base}/secret?secret=nope`, { method: 'POST' });
    await fetch(`${base}/json`);
    const logs = host.nest.get(LogStore);
    const entries = await eventually(async () => {
      const found = await logs.list(appId, { types: ['ENDPOINT'] });
      expect(found.some((entry) => entry.error_code === 'IncomingWebhookAuthFailed' && entry['request_url'] === '/secret')).toBe(true);
      expect(found.some((entry) => entry.function_name === 'typed' && !entry.error)).toBe(true);
      return found;
    });
    expect(entries.every((entry) => entry.type === 'ENDPOINT')).toBe(true);
  });

  it('logs the request a function got with its credentials redacted: bearer token, email/password headers, query secret', async () => {
    const withToken = await fetch(`${base}/nested/route/me`, { headers: { authorization: `Bearer ${anonUser.token}` } });
    expect(withToken.status).toBe(200);
    const withPassword = await fetch(`${base}/nested/route/me`, { headers: { email: 'ada@example.com', password: 'correct horse' } });
    expect(withPassword.status).toBe(200);
    const withSecret = await fetch(`${base}/secret?secret=${SECRET}&keep=visible`, { method: 'POST', headers: { 'x-custom': 'shown' } });
    expect(withSecret.status).toBe(200);
    const logs = host.nest.get(LogStore);
    const logged = await eventually(async () => {
      const found = JSON.stringify(await logs.list(appId, { types: ['ENDPOINT'] }));
      expect(found).toContain('visible');
      expect(found.match(/<redacted>/g)?.length ?? 0).toBeGreaterThanOrEqual(4);
      return found;
    });
    expect(logged).toContain('shown');
    for (const credential of [anonUser.token, 'correct horse', SECRET]) expect(logged).not.toContain(credential);
  });
});
