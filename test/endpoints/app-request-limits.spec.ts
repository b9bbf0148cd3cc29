import { type AppConfig, HTTPS_ENDPOINTS_FILE } from '@tessera/app-config';
import { eventually } from '@tessera/testing';
import { dataApi, serverApiKey, withDataApiConfig } from '../data-api/data-api-support';
import { curl } from '../hosting/hosting-support';
import { type MetricReader, startMetricReader } from '../support/metric-reader';
import { startTestHost, type TestHost } from '../support/test-host';
import { httpsEndpoint, linkOpenCluster } from './endpoint-config';

// Per-app request budgets over real HTTP on the real host: a small budget (burst 20, one request back every
// 10 s, so nothing refills while a test runs), spent on one surface, refuses every other surface of the same
// app, and one app flooding the server leaves another app's budget untouched.
const BURST = 20;

function withEverySurface(app: AppConfig, domain: string): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' }, { name: 'api-key', type: 'api-key' });
  linkOpenCluster(app);
  app.services.push({ config: { name: 'hooks', type: 'http', config: {} }, collectionRules: [], rules: [], webhooks: [{ config: { name: 'ping', respond_result: true, options: { httpMethod: 'ANY', validationMethod: 'NO_VALIDATION' } }, source: 'exports = () => "pong";' }] });
  app.functions.push({ config: { name: 'hello', private: true, run_as_system: true }, source: 'exports = () => "hello";' });
  app.extraFiles.set(HTTPS_ENDPOINTS_FILE, new TextEncoder().encode(JSON.stringify([httpsEndpoint('/hello', 'hello', { http_method: 'GET' })])));
  withDataApiConfig(app, { disabled: false, versions: ['v1'], return_type: 'JSON', run_as_system: true });
  app.settings.hosting = { enabled: true, custom_domain: domain };
}

describe('per-app request budgets', () => {
  let host: TestHost;
  let meters: MetricReader;

  beforeAll(async () => {
    meters = startMetricReader('app-request-limits-test');
    host = await startTestHost({ settings: { TESSERA_APP_REQUESTS_PER_SECOND: '0.1', TESSERA_APP_REQUEST_BURST: String(BURST) } });
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    await meters?.telemetry.shutdown();
  });

  it('refuses every surface of an app once its budget is spent, with 429 TooManyRequests and Retry-After, and counts the refusals', async () => {
    const app = await host.createApp('spender', (config) => withEverySurface(config, 'spender.example.test'));
    const hostPort = new URL(host.url).host;
    // The site at its own domain is served once the domain table has it (refreshed in the background): until
    // then the request is no app's (the routes' 404, spending nothing); then hosting's own 404 (spending one).
    await eventually(async () => expect((await curl(['-H', 'Host: spender.example.test', `http://${hostPort}/missing.html`])).body).toContain('no hosted file at /missing.html'));
    const login = await host.anonymousLogin(app.clientAppId);
    const { key } = await serverApiKey(host, app.clientAppId, 'spender');
    const endpoint = `${host.url}/app/${app.clientAppId}/endpoint`;
    // Every surface answers while the budget lasts (the two requests above spent two of it).
    expect((await fetch(`${endpoint}/hello`, { headers: { apiKey: key } })).status).toBe(200);
    expect((await dataApi(host, app.clientAppId, 'find', { dataSource: 'mongodb-atlas', database: 'd', collection: 'c', filter: {} })).status).toBe(200);

    // Spend what is left on the client API's location endpoint.
    const statuses = await Promise.all(Array.from({ length: BURST }, async () => (await fetch(`${host.url}/api/client/v2.0/app/${app.clientAppId}/location`)).status));
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);

    const refusedRequests: Array<[string, () => Promise<{ status: number; retryAfter: string | null; body: string }>]> = [
      ['client API', () => fetchAnswer(`${host.url}/api/client/v2.0/app/${app.clientAppId}/functions/call`, { method: 'POST', headers: { authorization: `Bearer ${login.accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'hello', arguments: [] }) })],
      ['client API by token', () => fetchAnswer(`${host.url}/api/client/v2.0/auth/profile`, { headers: { authorization: `Bearer ${login.accessToken}` } })],
      ['GraphQL', () => fetchAnswer(`${host.url}/api/client/v2.0/app/${app.clientAppId}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${login.accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) })],
      ['webhook', () => fetchAnswer(`${host.url}/api/client/v2.0/app/${app.clientAppId}/service/hooks/incoming_webhook/ping`, { method: 'POST', body: '{}' })],
      ['Data API', () => fetchAnswer(`${endpoint}/data/v1/action/find`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dataSource: 'mongodb-atlas', database: 'd', collection: 'c' }) })],
      ['HTTPS endpoint', () => fetchAnswer(`${endpoint}/hello`, { headers: { apiKey: key } })],
      ['hosting by path', () => fetchAnswer(`${host.url}/hosting/${app.clientAppId}/index.html`)],
      // Spelling the app id another way names the same app and the same budget.
      ['HTTPS endpoint, app id percent-encoded', () => fetchAnswer(`${endpoint.replace(app.clientAppId, percentEncoded(app.clientAppId))}/hello`, { headers: { apiKey: key } })],
      ['hosting by domain', async () => {
        const answer = await curl(['-H', 'Host: spender.example.test', `http://${hostPort}/index.html`]);
        return { status: answer.status, retryAfter: answer.headers['retry-after'] ?? null, body: answer.body };
      }],
    ];
    for (const [surface, send] of refusedRequests) {
      const answer = await send();
      expect(answer.status, surface).toBe(429);
      expect(Number(answer.retryAfter), surface).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(answer.body), surface).toEqual({ error: expect.stringMatching(/too many requests/) as unknown, error_code: 'TooManyRequests' });
    }
    const refused = (await meters.points('tessera.http.rate_limited')).filter((point) => point.attributes['app_id'] === app.appId);
    const bySurface = Object.fromEntries(refused.map((point) => [String(point.attributes['surface']), point.value]));
    expect(bySurface).toMatchObject({ 'client-api': expect.any(Number) as unknown, graphql: 1, webhook: 1, 'data-api': 1, endpoint: 2, hosting: 2 });
    expect(bySurface['client-api']).toBeGreaterThanOrEqual(3);
  });

  it('keeps another app served while one app floods the server', async () => {
    const flooder = await host.createApp('flooder', (config) => withEverySurface(config, 'flooder.example.test'));
    const quiet = await host.createApp('quiet', (config) => withEverySurface(config, 'quiet.example.test'));
    const body = { dataSource: 'mongodb-atlas', database: 'd', collection: 'c', filter: {} };
    const flood = Promise.all(Array.from({ length: 300 }, async () => (await dataApi(host, flooder.clientAppId, 'find', body)).status));
    // The quiet app's requests go out while the flood is in flight, spread over its surfaces.
    const quietStatuses = await Promise.all(Array.from({ length: BURST - 2 }, async (_, i) => {
      if (i % 2 === 0) return (await dataApi(host, quiet.clientAppId, 'find', body)).status;
      return (await fetch(`${host.url}/api/client/v2.0/app/${quiet.clientAppId}/location`)).status;
    }));
    const floodStatuses = await flood;
    expect(quietStatuses.every((status) => status === 200)).toBe(true);
    expect(floodStatuses.filter((status) => status === 200).length).toBeLessThanOrEqual(BURST);
    expect(floodStatuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(300 - BURST);
  });

  it('spends no budget on requests for an app that does not exist', async () => {
    const statuses = await Promise.all(Array.from({ length: BURST * 2 }, async () => (await fetch(`${host.url}/app/no-such-app-zzzzz/endpoint/data/v1/action/find`, { method: 'POST', body: '{}' })).status));
    expect(new Set(statuses)).toEqual(new Set([404]));
  });
});

async function fetchAnswer(url: string, init?: RequestInit): Promise<{ status: number; retryAfter: string | null; body: string }> {
  const response = await fetch(url, init);
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
}

/** Every character as %XX, as a client may send a path segment. */
function percentEncoded(text: string): string {
  return [...Buffer.from(text)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}
