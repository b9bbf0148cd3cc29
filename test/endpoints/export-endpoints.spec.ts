import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { loadValidApp, readDirectoryFiles } from '@tessera/app-config';
import { AppUserStore } from '@tessera/platform';
// The real process host: its HTTP edge, the in-process bus and the function runtime with its sandboxes.
import { startTestHost, type TestHost } from '../support/test-host';

// A realm-cli 20210101 export as App Services wrote it: http_endpoints/config.json (three endpoints, one
// with payload verification), private endpoint functions, and two third-party HTTP services with incoming
// webhooks (X-Hook-Signature, and the secret as a query parameter). Read with the export reader, unedited.
const FIXTURE = join(__dirname, 'fixtures', 'orders-export');

describe('an App Services export with HTTPS endpoints and incoming webhooks', () => {
  let host: TestHost;
  let appId: string;
  let endpointBase: string;
  let webhookBase: string;

  beforeAll(async () => {
    host = await startTestHost();
    const { app, layout } = loadValidApp(await readDirectoryFiles(FIXTURE));
    expect(layout).toBe('export-20210101');
    let clientAppId: string;
    ({ appId, clientAppId } = await host.createApp('orders', app));
    // Exports carry no secret values: the endpoint's secret is created as an operator would, by name.
    await host.secrets.create(appId, 'stripeEndpointSecret', 'whsec_test');
    endpointBase = `${host.url}/app/${clientAppId}/endpoint`;
    webhookBase = `${host.url}/api/client/v2.0/app/${clientAppId}/service`;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('serves the GET endpoint as EJSON, running its private function as system', async () => {
    const response = await fetch(`${endpointBase}/orders?limit=2`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ orders: ['o-1', 'o-2'], asOf: { $date: { $numberLong: String(Date.UTC(2024, 0, 1)) } } });
  });

  it('serves the POST endpoint to an API key user, with the status and body the function set', async () => {
    const users = new AppUserStore(host.dataSources.platform(), appId);
    await users.init();
    const key = await users.createServerApiKey('backend');
    const response = await fetch(`${endpointBase}/orders`, { method: 'POST', headers: { apiKey: key?.secret ?? '', 'content-type': 'application/json' }, body: '{"sku":"A-1"}' });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ created: 'A-1', by: key?.key.userId });
    // A backend's burst of parallel calls with its key: each authenticates, none is taken for a login storm.
    const burst = await Promise.all(Array.from({ length: 25 }, (_, i) => fetch(`${endpointBase}/orders`, { method: 'POST', headers: { apiKey: key?.secret ?? '' }, body: `{"sku":"B-${i}"}` })));
    expect(burst.map((reply) => reply.status)).toEqual(Array.from({ length: 25 }, () => 201));
    const refused = await fetch(`${endpointBase}/orders`, { method: 'POST', headers: { apiKey: 'not-a-key' }, body: '{"sku":"A-1"}' });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error_code: 'AuthError' });
  });

  it('verifies the Stripe-style endpoint with the secret created after the import', async () => {
    const body = '{"type":"payment_intent.succeeded"}';
    const signature = createHmac('sha256', 'whsec_test').update(body).digest('hex');
    const ok = await fetch(`${endpointBase}/stripe/events`, { method: 'POST', headers: { 'Endpoint-Signature': `sha256=${signature}` }, body });
    expect(await ok.json()).toEqual({ handled: 'payment_intent.succeeded' });
    const refused = await fetch(`${endpointBase}/stripe/events`, { method: 'POST', headers: { 'Endpoint-Signature': `sha256=${signature}` }, body: '{"type":"refund"}' });
    expect(refused.status).toBe(401);
  });

  it('serves both incoming webhooks with the validation their options name', async () => {
    const push = '{"ref":"refs/heads/main","commits":[{},{}]}';
    const signature = createHmac('sha1', 'github-hook-secret').update(push).digest('hex');
    const github = await fetch(`${webhookBase}/github/incoming_webhook/push`, { method: 'POST', headers: { 'X-Hook-Signature': `sha1=${signature}` }, body: push });
    expect(github.status).toBe(200);
    expect(await github.json()).toEqual({ ref: 'refs/heads/main', commits: { $numberInt: '2' } });
    const stripe = await fetch(`${webhookBase}/stripe/incoming_webhook/paymentSucceeded?secret=stripe-query-secret&id=pi_1`);
    expect(stripe.status).toBe(200);
    expect(await stripe.text()).toBe('ok pi_1');
    expect((await fetch(`${webhookBase}/stripe/incoming_webhook/paymentSucceeded?id=pi_1`)).status).toBe(401);
  });
});
