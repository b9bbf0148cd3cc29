import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession } from './admin-session';

type ErrorBody = { error: string; error_code: string };

const PASSWORD = 'multi-data-sources-password';

// `POST .../multi_data_sources` over HTTP against the real host: the data sources link in one deployment with
// App Services' ReadAndWrite default rule, and a client reads and writes through them at once.
describe('admin API: multi_data_sources', () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: PASSWORD } });
    admin = await AdminSession.login(host, 'admin', PASSWORD);
    ({ _id: appId, client_app_id: clientAppId } = await admin.createApp('multi-links'));
    expect((await admin.request('POST', admin.app(appId, '/auth_providers'), { name: 'anon-user', type: 'anon-user' })).status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const link = (body: unknown) => admin.request<ErrorBody>('POST', admin.app(appId, '/multi_data_sources'), body);
  const serviceNames = async () => (await admin.request<{ name: string; type: string }[]>('GET', admin.app(appId, '/services'))).body.map((s) => `${s.name}:${s.type}`).sort();

  it('links every data source in one go, each readable and writable by users under the ReadAndWrite rule', async () => {
    const response = await link([
      { name: 'orders-db', type: 'mongodb-atlas', config: { clusterName: 'OrdersCluster' } },
      { name: 'analytics', type: 'mongodb-atlas', config: { clusterName: 'Analytics_2' } },
    ]);
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(await serviceNames()).toEqual(['analytics:mongodb-atlas', 'orders-db:mongodb-atlas']);
    const services = (await admin.request<{ _id: string; name: string }[]>('GET', admin.app(appId, '/services'))).body;
    const orders = services.find((s) => s.name === 'orders-db');
    const rule = await admin.request<{ roles: { name: string; read: boolean; write: boolean }[] }>('GET', admin.app(appId, `/services/${orders?._id}/default_rule`));
    expect(rule.body.roles).toMatchObject([{ name: 'readAndWriteAll', read: true, write: true }]);

    const { accessToken } = await host.anonymousLogin(clientAppId);
    const call = async (name: string, args: Record<string, unknown>) => {
      const reply = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
        body: JSON.stringify({ name, service: 'orders-db', arguments: [{ database: 'shop', collection: 'orders', ...args }] }),
      });
      return { status: reply.status, body: (await reply.json()) as unknown };
    };
    expect((await call('insertOne', { document: { sku: 'A-1', qty: { $numberInt: '2' } } })).status).toBe(200);
    expect((await call('find', { query: {}, project: { _id: 0 } })).body).toEqual([{ sku: 'A-1', qty: { $numberInt: '2' } }]);
  });

  it('links none when one cannot be linked, and refuses bad bodies with App Services errors', async () => {
    const taken = await link([
      { name: 'fresh-one', type: 'mongodb-atlas', config: { clusterName: 'Fresh' } },
      { name: 'orders-db', type: 'mongodb-atlas', config: { clusterName: 'Other' } },
    ]);
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatch(/"orders-db" already exists/);
    expect(await serviceNames()).toEqual(['analytics:mongodb-atlas', 'orders-db:mongodb-atlas']);

    const many = Array.from({ length: 26 }, (_, i) => ({ name: `db-${i}`, type: 'mongodb-atlas', config: { clusterName: `C${i}` } }));
    for (const body of [
      [],
      {},
      many,
      [{ name: 'x', type: 'http', config: { clusterName: 'C' } }],
      [{ name: 'x', type: 'mongodb-atlas', config: {} }],
      [{ name: 'x', type: 'mongodb-atlas', config: { clusterName: 'has spaces' } }],
      [{ name: 'x', type: 'mongodb-atlas', config: { clusterName: 'c'.repeat(65) } }],
      [{ type: 'mongodb-atlas', config: { clusterName: 'C' } }],
      [
        { name: 'twice', type: 'mongodb-atlas', config: { clusterName: 'A' } },
        { name: 'twice', type: 'mongodb-atlas', config: { clusterName: 'B' } },
      ],
    ]) {
      const refused = await link(body);
      expect(refused.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(refused.body.error_code).toMatch(/BadRequest|InvalidParameter/);
    }
    expect(await serviceNames()).toEqual(['analytics:mongodb-atlas', 'orders-db:mongodb-atlas']);
    const foreign = await admin.request('POST', `/groups/another-group/apps/${appId}/multi_data_sources`, [{ name: 'y', type: 'mongodb-atlas', config: { clusterName: 'Y' } }]);
    expect([403, 404]).toContain(foreign.status);
  });
});
