import { createHmac } from 'node:crypto';
import { type AppConfig, emptyApp, type WebhookConfig } from '@tessera/app-config';
import { LogStore } from '@tessera/platform';
import { eventually } from '@tessera/testing';
// The real process host: its HTTP edge, the in-process bus and the function runtime with its sandboxes.
import { startTestHost, type TestHost } from '../support/test-host';

const SECRET = 'webhook-secret';
const ECHO = `exports = function (payload, response) {
  return { query: payload.query, body: payload.body === undefined ? null : payload.body.text(), type: payload.headers['Content-Type'], method: context.request.httpMethod, system: context.runningAsSystem() };
};`;

const hook = (name: string, options: WebhookConfig['options'], extra: Partial<WebhookConfig> = {}, source = ECHO) => ({ config: { name, respond_result: true, options, ...extra }, source });

function withWebhooks(app: AppConfig, runAsUser?: string): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.services.push({
    config: { name: 'github', type: 'http', config: {} },
    collectionRules: [],
    rules: [],
    webhooks: [
      ...['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((method) => hook(`on${method}`, { httpMethod: method, validationMethod: 'NO_VALIDATION' })),
      hook('anyMethod', { httpMethod: 'ANY', validationMethod: 'NO_VALIDATION' }),
      hook('querySecret', { httpMethod: 'POST', validationMethod: 'SECRET_AS_QUERY_PARAM', secret: SECRET }),
      hook('signed', { httpMethod: 'POST', validationMethod: 'VERIFY_PAYLOAD', secret: SECRET }),
      // Stitch's exports (and App Services' admin API v3) said the same with secretAsQueryParam.
      hook('stitchQuerySecret', { httpMethod: 'POST', secret: SECRET, secretAsQueryParam: true }),
      hook('stitchSigned', { httpMethod: 'POST', secret: SECRET, secretAsQueryParam: false }),
      hook('authed', { httpMethod: 'GET', validationMethod: 'NO_VALIDATION' }, { run_as_authed_user: true }, 'exports = () => ({ id: context.user.id });'),
      hook('fixedUser', { httpMethod: 'GET', validationMethod: 'NO_VALIDATION' }, runAsUser ? { run_as_user_id: runAsUser } : {}, 'exports = () => ({ id: context.user.id, system: context.runningAsSystem() });'),
      hook('scriptedUser', { httpMethod: 'GET', validationMethod: 'NO_VALIDATION' }, runAsUser ? { run_as_user_id_script_source: `exports = () => '${runAsUser}';` } : {}, 'exports = () => ({ id: context.user.id });'),
      hook('guarded', { httpMethod: 'GET', validationMethod: 'NO_VALIDATION' }, { can_evaluate: { '%%request.httpUserAgent': 'allowed-agent' } }, 'exports = () => "let in";'),
      hook('responder', { httpMethod: 'POST', validationMethod: 'NO_VALIDATION' }, { respond_result: false }, `exports = (payload, response) => {
        response.setStatusCode(202);
        response.setHeader('Content-Type', 'application/json');
        response.setBody(JSON.stringify({ received: JSON.parse(payload.body.text()).event }));
      };`),
    ],
  });
}

describe('incoming webhooks (standalone host over HTTP)', () => {
  let host: TestHost;
  let appId: string;
  let base: string;
  let user: { id: string; token: string };

  beforeAll(async () => {
    host = await startTestHost();
    let clientAppId: string;
    ({ appId, clientAppId } = await host.createApp('webhooks', (app) => withWebhooks(app)));
    const login = await host.anonymousLogin(clientAppId);
    user = { id: login.userId, token: login.accessToken };
    const config = emptyApp('webhooks');
    withWebhooks(config, user.id);
    await host.redeploy(appId, config);
    base = `${host.url}/api/client/v2.0/app/${clientAppId}/service/github/incoming_webhook`;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('serves a webhook per HTTP method with (payload, response), as system, and refuses the other methods', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const withBody = method !== 'GET';
      const response = await fetch(`${base}/on${method}?x=1`, { method, ...(withBody ? { headers: { 'content-type': 'application/json' }, body: '{"a":1}' } : {}) });
      expect(response.status, method).toBe(200);
      expect(await response.json()).toEqual({ query: { x: '1' }, body: withBody ? '{"a":1}' : null, type: withBody ? ['application/json'] : null, method, system: true });
      const other = method === 'GET' ? 'POST' : 'GET';
      const refused = await fetch(`${base}/on${method}`, { method: other });
      expect(refused.status, `${other} to on${method}`).toBe(405);
      expect(await refused.json()).toMatchObject({ error_code: 'MethodNotAllowed' });
    }
    for (const method of ['GET', 'DELETE']) expect((await fetch(`${base}/anyMethod`, { method })).status).toBe(200);
  });

  it('checks the secret query parameter', async () => {
    expect((await fetch(`${base}/querySecret?secret=${SECRET}`, { method: 'POST' })).status).toBe(200);
    const refused = await fetch(`${base}/querySecret?secret=guess`, { method: 'POST' });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error_code: 'IncomingWebhookAuthFailed' });
  });

  it("checks X-Hook-Signature: sha256=<hex HMAC-SHA256 of the raw body> (App Services' documented example), or sha1=", async () => {
    const body = '{"ref":"refs/heads/main"}';
    for (const algorithm of ['sha256', 'sha1']) {
      const good = createHmac(algorithm, SECRET).update(body).digest('hex');
      const ok = await fetch(`${base}/signed`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hook-signature': `${algorithm}=${good}` }, body });
      expect(ok.status, algorithm).toBe(200);
      expect(await ok.json()).toMatchObject({ body });
    }
    const sha256 = createHmac('sha256', SECRET).update(body).digest('hex');
    const sha1 = createHmac('sha1', SECRET).update(body).digest('hex');
    for (const signature of [`sha256=${createHmac('sha256', 'other').update(body).digest('hex')}`, `sha1=${sha256}`, `sha256=${sha1}`, `sha512=${sha256}`, sha256, '']) {
      const refused = await fetch(`${base}/signed`, { method: 'POST', headers: { 'x-hook-signature': signature }, body });
      expect(refused.status, signature).toBe(401);
      expect(await refused.json()).toMatchObject({ error_code: 'IncomingWebhookAuthFailed' });
    }
  });

  it("checks Stitch's secretAsQueryParam: true wants the secret query parameter, false a payload signature", async () => {
    expect((await fetch(`${base}/stitchQuerySecret?secret=${SECRET}`, { method: 'POST' })).status).toBe(200);
    for (const query of ['', '?secret=guess']) {
      const refused = await fetch(`${base}/stitchQuerySecret${query}`, { method: 'POST' });
      expect(refused.status, query).toBe(401);
      expect(await refused.json()).toMatchObject({ error_code: 'IncomingWebhookAuthFailed' });
    }
    const body = '{"event":"push"}';
    const signature = createHmac('sha256', SECRET).update(body).digest('hex');
    expect((await fetch(`${base}/stitchSigned`, { method: 'POST', headers: { 'x-hook-signature': `sha256=${signature}` }, body })).status).toBe(200);
    const unsigned: Record<string, string> = {};
    for (const headers of [unsigned, { 'x-hook-signature': `sha256=${createHmac('sha256', 'other').update(body).digest('hex')}` }]) {
      const refused = await fetch(`${base}/stitchSigned?secret=${SECRET}`, { method: 'POST', headers, body });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error_code: 'IncomingWebhookAuthFailed' });
    }
  });

  it('applies the function settings: the authenticated user, a fixed user, a scripted user, can_evaluate', async () => {
    const authed = await fetch(`${base}/authed`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(await authed.json()).toEqual({ id: user.id });
    const anonymous = await fetch(`${base}/authed`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error_code: 'InvalidSession' });
    expect(await (await fetch(`${base}/fixedUser`)).json()).toEqual({ id: user.id, system: false });
    expect(await (await fetch(`${base}/scriptedUser`)).json()).toEqual({ id: user.id });
    expect(await (await fetch(`${base}/guarded`, { headers: { 'user-agent': 'allowed-agent' } })).json()).toBe('let in');
    const denied = await fetch(`${base}/guarded`, { headers: { 'user-agent': 'curl/8' } });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ error_code: 'NotCallable' });
  });

  it('answers with the response object when respond_result is off', async () => {
    const response = await fetch(`${base}/responder`, { method: 'POST', body: '{"event":"push"}' });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ received: 'push' });
  });

  it('answers an unknown webhook or service with IncomingWebhookNotFound', async () => {
    for (const url of [`${base}/nope`, base.replace('/github/', '/gitlab/') + '/onGET']) {
      const response = await fetch(url);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error_code: 'IncomingWebhookNotFound' });
    }
  });

  it('logs calls and refusals in the app logs as WEBHOOK', async () => {
    await fetch(`${base}/querySecret?secret=nope`, { method: 'POST' });
    await fetch(`${base}/onGET`);
    const logs = host.nest.get(LogStore);
    await eventually(async () => {
      const found = await logs.list(appId, { types: ['WEBHOOK'] });
      expect(found.some((entry) => entry.error_code === 'IncomingWebhookAuthFailed')).toBe(true);
      expect(found.some((entry) => entry.function_name === 'onGET' && !entry.error)).toBe(true);
    });
  });
});
