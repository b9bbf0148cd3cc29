import { type AppConfig, HTTPS_ENDPOINTS_FILE } from '@tessera/app-config';
import { dataApi, serverApiKey, withDataApiConfig } from '../data-api/data-api-support';
import { startTestHost, type TestHost } from '../support/test-host';
import { httpsEndpoint, linkOpenCluster } from './endpoint-config';

// CORS of `/app/<client app id>/endpoint/*` over real HTTP: an app listing `allowed_request_origins` gets
// preflights answered and its origins allowed on the Data API and its custom endpoints, any other origin is
// refused before anything runs; an app with no list is served as App Services served it, with no CORS headers.
const GOOD = 'https://good.example';
const EVIL = 'https://evil.example';
const notes = { dataSource: 'mongodb-atlas', database: 'cors', collection: 'notes' };

function withEndpoints(app: AppConfig, origins?: string[]): void {
  if (origins) app.settings.security = { allowed_request_origins: origins };
  app.authProviders.push({ name: 'api-key', type: 'api-key' });
  linkOpenCluster(app);
  app.functions.push({ config: { name: 'hello', private: true, run_as_system: true }, source: 'exports = () => ({ hello: "world" });' });
  app.extraFiles.set(HTTPS_ENDPOINTS_FILE, new TextEncoder().encode(JSON.stringify([httpsEndpoint('/hello', 'hello', { http_method: 'GET' })])));
  withDataApiConfig(app, { disabled: false, versions: ['v1'], return_type: 'JSON' });
}

describe('CORS of the endpoint tree', () => {
  let host: TestHost;
  let listed: { appId: string; clientAppId: string };
  let unlisted: { appId: string; clientAppId: string };
  let listedKey: string;

  beforeAll(async () => {
    host = await startTestHost();
    listed = await host.createApp('corslisted', (config) => withEndpoints(config, [`${GOOD}/`]));
    unlisted = await host.createApp('corsopen', (config) => withEndpoints(config));
    ({ key: listedKey } = await serverApiKey(host, listed.clientAppId, 'cors'));
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const preflight = (clientAppId: string, path: string, origin: string) =>
    fetch(`${host.url}/app/${clientAppId}/endpoint/${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'apikey, content-type' } });

  it('answers a preflight from a listed origin for the Data API and for a custom endpoint', async () => {
    for (const path of ['data/v1/action/insertOne', 'hello']) {
      const answer = await preflight(listed.clientAppId, path, GOOD);
      expect(answer.status, path).toBe(204);
      expect(answer.headers.get('access-control-allow-origin'), path).toBe(GOOD);
      expect(answer.headers.get('access-control-allow-methods'), path).toContain('POST');
      expect(answer.headers.get('access-control-allow-headers'), path).toBe('apikey, content-type');
      expect(answer.headers.get('vary'), path).toContain('Origin');
    }
  });

  it("gives a listed origin's requests Access-Control-Allow-Origin", async () => {
    const inserted = await dataApi(host, listed.clientAppId, 'insertOne', { ...notes, document: { text: 'from good' } }, { headers: { apiKey: listedKey, origin: GOOD } });
    expect(inserted.status).toBe(201);
    const found = await fetch(`${host.url}/app/${listed.clientAppId}/endpoint/data/v1/action/find`, { method: 'POST', headers: { apiKey: listedKey, origin: GOOD, 'content-type': 'application/json' }, body: JSON.stringify({ ...notes, filter: {} }) });
    expect(found.headers.get('access-control-allow-origin')).toBe(GOOD);
    expect(((await found.json()) as { documents: unknown[] }).documents).toHaveLength(1);
    const hello = await fetch(`${host.url}/app/${listed.clientAppId}/endpoint/hello`, { headers: { apiKey: listedKey, origin: GOOD } });
    expect(hello.status).toBe(200);
    expect(hello.headers.get('access-control-allow-origin')).toBe(GOOD);
    expect(await hello.json()).toEqual({ hello: 'world' });
  });

  it('refuses an origin the app does not list, preflight or not, before the request runs', async () => {
    const refusedPreflight = await preflight(listed.clientAppId, 'data/v1/action/insertOne', EVIL);
    expect(refusedPreflight.status).toBe(403);
    expect(refusedPreflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(await refusedPreflight.json()).toMatchObject({ error_code: 'DomainNotAllowed' });
    const refusedInsert = await dataApi(host, listed.clientAppId, 'insertOne', { ...notes, document: { text: 'from evil' } }, { headers: { apiKey: listedKey, origin: EVIL } });
    expect(refusedInsert).toMatchObject({ status: 403, body: { error_code: 'DomainNotAllowed' } });
    const refusedEndpoint = await fetch(`${host.url}/app/${listed.clientAppId}/endpoint/hello`, { headers: { apiKey: listedKey, origin: EVIL } });
    expect(refusedEndpoint.status).toBe(403);
    expect(refusedEndpoint.headers.get('access-control-allow-origin')).toBeNull();
    // The refused insert never reached the collection.
    const all = await dataApi(host, listed.clientAppId, 'find', { ...notes, filter: { text: 'from evil' } }, { headers: { apiKey: listedKey } });
    expect(all.body).toEqual({ documents: [] });
  });

  it('adds no CORS headers for an app without a list, as App Services did, and still serves non-browser clients', async () => {
    const { key } = await serverApiKey(host, unlisted.clientAppId, 'open');
    const answer = await preflight(unlisted.clientAppId, 'data/v1/action/find', GOOD);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    expect(answer.status).not.toBe(204);
    const found = await fetch(`${host.url}/app/${unlisted.clientAppId}/endpoint/data/v1/action/find`, { method: 'POST', headers: { apiKey: key, origin: GOOD, 'content-type': 'application/json' }, body: JSON.stringify({ ...notes, filter: {} }) });
    expect(found.status).toBe(200);
    expect(found.headers.get('access-control-allow-origin')).toBeNull();
  });
});
