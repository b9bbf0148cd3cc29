import { randomUUID } from 'node:crypto';
import { type AppConfig, emptyApp } from '@tessera/app-config';
import { DeployedApps, LogStore } from '@tessera/platform';
import { eventually } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { dataApi, ownedItemsAndCatalog, serverApiKey, withDataApiConfig } from './data-api-support';

// The Data API configuration's `run_as_user_id_script_source` and `can_evaluate` over real HTTP, with the
// real function runtime running the script in its sandbox: the script reads the request (`context.request`)
// and names the user the call runs as, under that user's rules.
describe('Data API run-as script and can_evaluate', () => {
  let host: TestHost;
  const items = { dataSource: 'mongodb-atlas', database: 'shop', collection: 'items' };

  const appConfig = (name: string, dataApiConfig: Record<string, unknown>): AppConfig => {
    const config = emptyApp(name);
    config.authProviders.push({ name: 'anon-user', type: 'anon-user' }, { name: 'api-key', type: 'api-key' });
    config.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } }, defaultRule: { roles: [] }, collectionRules: ownedItemsAndCatalog(), rules: [], webhooks: [] });
    withDataApiConfig(config, { disabled: false, versions: ['v1'], return_type: 'JSON', ...dataApiConfig });
    return config;
  };

  beforeAll(async () => {
    host = await startTestHost();
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it("runs each request as the user the script picks from the request, under that user's rules", async () => {
    const app = await host.createApp('scripted', appConfig('scripted', {}));
    const alpha = await host.anonymousLogin(app.clientAppId);
    const beta = await host.anonymousLogin(app.clientAppId);
    // The tenant header names the user; an unknown tenant gives no user.
    const script = `exports = function () {
      const tenants = { alpha: '${alpha.userId}', beta: '${beta.userId}', ghost: '000000000000000000000000' };
      const tenant = (context.request.requestHeaders['X-Tenant'] || [])[0];
      if (tenant === 'boom') throw new Error('no tenant for you');
      if (tenant === 'number') return 42;
      return tenants[tenant];
    };`;
    await host.redeploy(app.appId, appConfig('scripted', { run_as_user_id_script_source: script }));
    const asTenant = (tenant: string, action: string, body: Record<string, unknown>) => dataApi(host, app.clientAppId, action, body, { headers: { 'x-tenant': tenant } });

    expect(await asTenant('alpha', 'insertOne', { ...items, document: { owner: alpha.userId, name: 'a1' } })).toMatchObject({ status: 201 });
    expect(await asTenant('beta', 'insertOne', { ...items, document: { owner: beta.userId, name: 'b1' } })).toMatchObject({ status: 201 });
    // A user may not write a document it does not own.
    expect((await asTenant('beta', 'insertOne', { ...items, document: { owner: alpha.userId, name: 'forged' } })).status).toBeGreaterThanOrEqual(400);
    expect(await asTenant('alpha', 'find', { ...items, filter: {}, projection: { _id: 0, name: 1 } })).toMatchObject({ status: 200, body: { documents: [{ name: 'a1' }] } });
    expect(await asTenant('beta', 'find', { ...items, filter: {}, projection: { _id: 0, name: 1 } })).toMatchObject({ status: 200, body: { documents: [{ name: 'b1' }] } });

    // A script naming a user that does not exist is answered as a fixed run_as_user_id naming nobody is.
    const ghost = await asTenant('ghost', 'find', { ...items, filter: {} });
    const fixed = await host.createApp('fixedghost', appConfig('fixedghost', { run_as_user_id: '000000000000000000000000' }));
    const fixedGhost = await dataApi(host, fixed.clientAppId, 'find', { ...items, filter: {} });
    expect(fixedGhost).toMatchObject({ status: 401, body: { error_code: 'InvalidSession' } });
    expect(ghost.status).toBe(fixedGhost.status);
    expect(ghost.body['error']).toBe(fixedGhost.body['error']);
    expect(ghost.body['error_code']).toBe(fixedGhost.body['error_code']);
    expect(Object.keys(ghost.body).sort()).toEqual(Object.keys(fixedGhost.body).sort());

    // A script naming nobody, a non-string, or failing refuses the request.
    for (const tenant of ['nobody', 'number']) {
      const refused = await asTenant(tenant, 'find', { ...items, filter: {} });
      expect(refused.status, tenant).toBeGreaterThanOrEqual(400);
      expect(refused.status, tenant).toBeLessThan(500);
      expect(refused.body, tenant).not.toHaveProperty('documents');
    }
    const failed = await asTenant('boom', 'find', { ...items, filter: {} });
    expect(failed).toMatchObject({ status: 400, body: { error_code: 'FunctionExecutionError' } });
    expect(String(failed.body['error'])).toContain('no tenant for you');

    // A refused request is in the app's logs, as an ENDPOINT entry of the Data API's route with its error.
    await eventually(async () => {
      const entries = await host.nest.get(LogStore).list(app.appId, { types: ['ENDPOINT'] });
      expect(entries.some((entry) => entry['endpoint_route'] === '/data/v1/action/find' && entry.error !== undefined)).toBe(true);
    });
  });

  it("shows the script the authenticated caller as context.user, and still checks the caller's credentials", async () => {
    const app = await host.createApp('scriptcaller', appConfig('scriptcaller', { run_as_user_id_script_source: 'exports = () => context.user.id;' }));
    const { key, userId } = await serverApiKey(host, app.clientAppId, 'caller');
    const deployed = (await host.nest.get(DeployedApps).byId(app.appId)).config;
    await host.dataSources.forService(deployed, 'mongodb-atlas').client.db('shop').collection('items').insertMany([{ owner: userId, name: 'keyed' }, { owner: 'other', name: 'not mine' }]);
    expect(await dataApi(host, app.clientAppId, 'find', { ...items, filter: {}, projection: { _id: 0, name: 1 } }, { headers: { apiKey: key } })).toMatchObject({ status: 200, body: { documents: [{ name: 'keyed' }] } });
    // Without credentials the script runs as system, whose id is no app user: refused as a missing user is.
    const asSystem = await dataApi(host, app.clientAppId, 'find', { ...items, filter: {} });
    expect(asSystem).toMatchObject({ status: 401, body: { error_code: 'InvalidSession' } });
    expect((await dataApi(host, app.clientAppId, 'find', { ...items, filter: {} }, { headers: { apiKey: 'not-a-key' } })).status).toBe(401);
  });

  it("writes one ENDPOINT entry per request, holding the script's log lines", async () => {
    const script = `exports = function () { console.log('picking', (context.request.requestHeaders['X-Tenant'] || [])[0]); return (context.request.requestHeaders['X-Tenant'] || [])[0] === 'ghost' ? '000000000000000000000000' : context.user.id; };`;
    const app = await host.createApp('onelog', appConfig('onelog', { run_as_user_id_script_source: script }));
    const { key } = await serverApiKey(host, app.clientAppId, 'logger');
    const served = randomUUID();
    const refused = randomUUID();
    expect(await dataApi(host, app.clientAppId, 'find', { ...items, filter: {} }, { headers: { apiKey: key, 'x-tenant': 'keyed', 'x-request-id': served } })).toMatchObject({ status: 200 });
    expect(await dataApi(host, app.clientAppId, 'find', { ...items, filter: {} }, { headers: { 'x-tenant': 'ghost', 'x-request-id': refused } })).toMatchObject({ status: 401 });
    const logs = host.nest.get(LogStore);
    await eventually(async () => {
      expect(await logs.list(app.appId, { coId: served })).toHaveLength(1);
      expect(await logs.list(app.appId, { coId: refused })).toHaveLength(1);
    });
    // Give a second entry (the runtime's, written after a short buffer) time to appear, then count again.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [entry] = await logs.list(app.appId, { coId: served });
    expect(await logs.list(app.appId, { coId: served })).toHaveLength(1);
    expect(await logs.list(app.appId, { coId: refused })).toHaveLength(1);
    expect(entry).toMatchObject({ type: 'ENDPOINT', status: 200, endpoint_route: '/data/v1/action/find' });
    expect(entry?.messages.join('\n')).toContain('picking keyed');
    const [refusedEntry] = await logs.list(app.appId, { coId: refused });
    expect(refusedEntry).toMatchObject({ type: 'ENDPOINT', status: 401, error_code: 'InvalidSession' });
    expect(refusedEntry?.messages.join('\n')).toContain('picking ghost');
  });

  it('serves a request only when can_evaluate holds for %%request and %%user', async () => {
    const app = await host.createApp('guarded', appConfig('guarded', { run_as_system: true, can_evaluate: { '%%request.httpUserAgent': 'allowed-agent' } }));
    expect(await dataApi(host, app.clientAppId, 'find', { ...items, filter: {} }, { headers: { 'user-agent': 'allowed-agent' } })).toMatchObject({ status: 200 });
    expect(await dataApi(host, app.clientAppId, 'find', { ...items, filter: {} }, { headers: { 'user-agent': 'curl/8' } })).toMatchObject({ status: 403, body: { error_code: 'NotCallable' } });

    const byUser = await host.createApp('guardeduser', appConfig('guardeduser', {}));
    const allowed = await serverApiKey(host, byUser.clientAppId, 'allowed');
    const denied = await serverApiKey(host, byUser.clientAppId, 'denied');
    await host.redeploy(byUser.appId, appConfig('guardeduser', { can_evaluate: { '%%user.id': allowed.userId } }));
    expect((await dataApi(host, byUser.clientAppId, 'find', { ...items, filter: {} }, { headers: { apiKey: allowed.key } })).status).toBe(200);
    expect(await dataApi(host, byUser.clientAppId, 'find', { ...items, filter: {} }, { headers: { apiKey: denied.key } })).toMatchObject({ status: 403, body: { error_code: 'NotCallable' } });
  });
});
