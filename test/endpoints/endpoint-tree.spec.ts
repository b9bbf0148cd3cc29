import { createHmac } from 'node:crypto';
import { type AppConfig, HTTPS_ENDPOINTS_FILE, type HttpsEndpointConfig } from '@tessera/app-config';
import { dataApi, serverApiKey, withDataApiConfig } from '../data-api/data-api-support';
import { startTestHost, type TestHost } from '../support/test-host';
import { httpsEndpoint } from './endpoint-config';

// The Data API and custom HTTPS endpoints share `/app/<client app id>/endpoint/`: the real host (every
// service, as standalone mode runs) starts with both, and each serves its paths, one app beside the other.
const SECRET = 'tree-secret-value';

const endpoint = (route: string, function_name: string, extra: Partial<HttpsEndpointConfig> = {}): HttpsEndpointConfig => httpsEndpoint(route, function_name, { http_method: 'GET', ...extra });

function withBoth(app: AppConfig, dataApiValidation: Record<string, unknown> = {}): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' }, { name: 'api-key', type: 'api-key' });
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } },
    defaultRule: { roles: [] },
    collectionRules: [{ database: 'tree', collection: 'notes', roles: [{ name: 'owner', apply_when: {}, document_filters: { read: { owner: '%%user.id' }, write: { owner: '%%user.id' } }, read: true, write: true, insert: true, delete: true, search: true }] }],
    rules: [],
    webhooks: [],
  });
  app.functions.push({ config: { name: 'whoami', private: true }, source: 'exports = () => ({ id: context.user.id });' });
  app.functions.push({ config: { name: 'signedEcho', private: true, run_as_system: true }, source: 'exports = (request) => ({ got: request.body.text() });' });
  const endpoints = [
    endpoint('/whoami', 'whoami'),
    // A route beginning with "data" that is not the Data API's `data/...` is a custom endpoint.
    endpoint('/datasets', 'whoami'),
    endpoint('/signed', 'signedEcho', { http_method: 'POST', validation_method: 'VERIFY_PAYLOAD', secret_name: 'treeSecret' }),
    endpoint('/by-secret', 'signedEcho', { http_method: 'POST', validation_method: 'SECRET_AS_QUERY_PARAM', secret_name: 'treeSecret' }),
  ];
  app.extraFiles.set(HTTPS_ENDPOINTS_FILE, new TextEncoder().encode(JSON.stringify(endpoints)));
  withDataApiConfig(app, { disabled: false, versions: ['v1'], return_type: 'JSON', ...dataApiValidation });
}

describe('the endpoint tree: the Data API and HTTPS endpoints on one host', () => {
  let host: TestHost;
  let app: { appId: string; clientAppId: string };
  let guarded: { appId: string; clientAppId: string };
  let base: string;
  const notes = { dataSource: 'mongodb-atlas', database: 'tree', collection: 'notes' };

  beforeAll(async () => {
    host = await startTestHost();
    app = await host.createApp('tree', (config) => withBoth(config));
    guarded = await host.createApp('guarded', (config) => withBoth(config, { validation_method: 'SECRET_AS_QUERY_PARAM', secret_name: 'treeSecret' }));
    await host.secrets.create(app.appId, 'treeSecret', SECRET);
    await host.secrets.create(guarded.appId, 'treeSecret', SECRET);
    base = `${host.url}/app/${app.clientAppId}/endpoint`;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('serves a Data API action and a custom endpoint to the same API key user', async () => {
    const { key, userId } = await serverApiKey(host, app.clientAppId, 'tree-backend');
    const inserted = await dataApi(host, app.clientAppId, 'insertOne', { ...notes, document: { owner: userId, text: 'hello' } }, { headers: { apiKey: key } });
    expect(inserted.status).toBe(201);
    const found = await dataApi(host, app.clientAppId, 'find', { ...notes, filter: {}, projection: { _id: 0 } }, { headers: { apiKey: key } });
    expect(found).toMatchObject({ status: 200, body: { documents: [{ owner: userId, text: 'hello' }] } });
    for (const route of ['/whoami', '/datasets']) {
      const response = await fetch(`${base}${route}`, { headers: { apiKey: key } });
      expect(response.status, route).toBe(200);
      expect(await response.json()).toEqual({ id: userId });
    }
  });

  it('answers the Data API paths the Data API does not serve with its own codes, and every other unknown route alike', async () => {
    const { key } = await serverApiKey(host, app.clientAppId, 'tree-unknown');
    expect(await dataApi(host, app.clientAppId, 'find', notes, { version: 'v9', headers: { apiKey: key } })).toMatchObject({ status: 404, body: { error_code: 'DataApiNotEnabled' } });
    expect(await dataApi(host, app.clientAppId, 'explode', notes, { headers: { apiKey: key } })).toMatchObject({ status: 404, body: { error_code: 'ActionNotFound' } });
    for (const route of ['/missing', '/whoami/extra', '/']) {
      const response = await fetch(`${base}${route}`, { headers: { apiKey: key } });
      expect(response.status, route).toBe(404);
      expect(await response.json(), route).toEqual({ error: `no endpoint is configured for route ${route}`, error_code: 'IncomingWebhookNotFound' });
    }
    // A method the route does not serve, on a custom endpoint and on the Data API.
    expect((await fetch(`${base}/whoami`, { method: 'DELETE', headers: { apiKey: key } })).status).toBe(405);
    expect(await dataApi(host, app.clientAppId, 'find', undefined, { method: 'GET', headers: { apiKey: key } })).toMatchObject({ status: 405, body: { error_code: 'MethodNotAllowed' } });
  });

  it('checks secrets and payload signatures with one implementation for both surfaces', async () => {
    const body = '{"n":1}';
    const signature = createHmac('sha256', SECRET).update(body).digest('hex');
    const signed = await fetch(`${base}/signed`, { method: 'POST', headers: { 'Endpoint-Signature': `sha256=${signature}` }, body });
    expect(await signed.json()).toEqual({ got: body });
    const forged = await fetch(`${base}/signed`, { method: 'POST', headers: { 'Endpoint-Signature': `sha256=${signature}` }, body: '{"n":2}' });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ error: 'invalid signature: the payload signature does not match', error_code: 'IncomingWebhookAuthFailed' });
    const bySecret = await fetch(`${base}/by-secret?secret=${SECRET}`, { method: 'POST', body });
    expect(await bySecret.json()).toEqual({ got: body });
    const wrongSecret = await fetch(`${base}/by-secret?secret=nope`, { method: 'POST', body });
    expect(await wrongSecret.json()).toEqual({ error: 'invalid secret: the secret query parameter does not match', error_code: 'IncomingWebhookAuthFailed' });

    // The Data API of the guarded app: the same check and message, under the Data API's own code.
    const { key } = await serverApiKey(host, guarded.clientAppId, 'guarded-backend');
    const refused = await dataApi(host, guarded.clientAppId, 'find', { ...notes, filter: {} }, { headers: { apiKey: key }, query: 'secret=nope' });
    expect(refused).toMatchObject({ status: 401, body: { error: 'invalid secret: the secret query parameter does not match', error_code: 'AuthError' } });
    const allowed = await dataApi(host, guarded.clientAppId, 'find', { ...notes, filter: {} }, { headers: { apiKey: key }, query: `secret=${encodeURIComponent(SECRET)}` });
    expect(allowed).toMatchObject({ status: 200, body: { documents: [] } });
  });

  it('authenticates both surfaces by one credential check: a burst with one API key is not a login storm, a bad key is refused', async () => {
    const { key, userId } = await serverApiKey(host, app.clientAppId, 'tree-burst');
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 2 === 0 ? fetch(`${base}/whoami`, { headers: { apiKey: key } }).then((response) => response.status) : dataApi(host, app.clientAppId, 'find', { ...notes, filter: {} }, { headers: { apiKey: key } }).then((answer) => answer.status),
      ),
    );
    expect(burst).toEqual(Array.from({ length: 30 }, () => 200));
    const me = await fetch(`${base}/whoami`, { headers: { 'api-key': key } });
    expect(await me.json()).toEqual({ id: userId });
    const refusedCredentials: Array<Record<string, string>> = [{ apiKey: 'not-a-key' }, { email: 'only@example.com' }];
    for (const headers of refusedCredentials) {
      const endpointAnswer = await fetch(`${base}/whoami`, { headers });
      const dataApiAnswer = await dataApi(host, app.clientAppId, 'find', { ...notes, filter: {} }, { headers });
      expect(endpointAnswer.status).toBe(dataApiAnswer.status);
      expect(await endpointAnswer.json()).toEqual({ error: dataApiAnswer.body['error'], error_code: dataApiAnswer.body['error_code'] });
    }
  });
});
