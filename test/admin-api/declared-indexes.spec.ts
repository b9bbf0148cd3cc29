import { AdminSession, canonicalJson } from './admin-session';
import { startTestHost, type TestHost } from '../support/test-host';

// Indexes declared beside a collection's rules (`indexes` in its rule file) are made on the app's cluster
// when a push deploys, validated first; one no longer declared is dropped; one that cannot be made refuses
// the push and leaves the deployment as it was.
describe('indexes declared in the app', () => {
  const password = 'declared-indexes-admin';
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  const rulePath = 'services/mongodb-atlas/rules/shop.orders.json';
  const rule = (indexes?: unknown) =>
    canonicalJson({ database: 'shop', collection: 'orders', roles: [{ name: 'all', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }], ...(indexes === undefined ? {} : { indexes }) });

  const pushWith = async (indexes?: unknown) => {
    const files = await admin.pull(appId);
    files.set('services/mongodb-atlas/config.json', canonicalJson({ name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'IndexCluster' } }));
    files.set(rulePath, rule(indexes));
    return admin.push(appId, files);
  };
  const orders = () => host.dataSources.forCluster('IndexCluster').db('shop').collection('orders');
  const indexNames = async () => (await orders().listIndexes().catch(() => [])).map((index) => index.name);

  beforeAll(async () => {
    host = await startTestHost({ services: ['admin-api'], settings: { TESSERA_ADMIN_PASSWORD: password } });
    admin = await AdminSession.login(host, 'admin', password);
    appId = (await admin.createApp('indexed'))._id;
  });

  afterAll(async () => {
    await host?.close();
  });

  it('creates the declared indexes at deploy, and the embedded engine answers from them', async () => {
    const pushed = await pushWith([{ key: { customer: 1, placed: -1 } }, { key: { reference: 1 }, name: 'by_reference', unique: true }]);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    expect(await orders().listIndexes()).toEqual([
      { name: '_id_', key: { _id: 1 } },
      { name: 'customer_1_placed_-1', key: { customer: 1, placed: -1 } },
      { name: 'by_reference', key: { reference: 1 }, unique: true },
    ].map((index) => expect.objectContaining(index)));
    // The unique one holds.
    await orders().insertOne({ reference: 'A-1', customer: 'c1', placed: 1 });
    await expect(orders().insertOne({ reference: 'A-1', customer: 'c2', placed: 2 })).rejects.toMatchObject({ code: 11000 });
    // The pulled app carries them, and pushing it again changes nothing.
    const pulled = await admin.pull(appId);
    expect(JSON.parse(pulled.get(rulePath)!).indexes).toHaveLength(2);
    const again = await admin.push(appId, pulled, true);
    expect(again.status).toBe(200);
    expect(again.body.diffs).toEqual([]);
  });

  it('drops an index the app no longer declares, and leaves indexes made elsewhere alone', async () => {
    await orders().createIndex({ note: 1 }, { name: 'made_by_hand' });
    const pushed = await pushWith([{ key: { reference: 1 }, name: 'by_reference', unique: true }]);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    expect(await indexNames()).toEqual(['_id_', 'by_reference', 'made_by_hand']);
  });

  it('replaces an index whose declaration changed', async () => {
    const pushed = await pushWith([{ key: { reference: 1, customer: 1 }, name: 'by_reference', unique: true }]);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    expect((await orders().listIndexes()).find((index) => index.name === 'by_reference')?.key).toEqual({ reference: 1, customer: 1 });
  });

  it('refuses a push whose unique index the data breaks, and deploys nothing', async () => {
    await orders().insertMany([{ reference: 'B-1', customer: 'dup', placed: 1 }, { reference: 'B-2', customer: 'dup', placed: 2 }]);
    const before = await admin.pull(appId);
    const pushed = await pushWith([{ key: { reference: 1, customer: 1 }, name: 'by_reference', unique: true }, { key: { customer: 1 }, name: 'one_per_customer', unique: true }]);
    expect(pushed.status).toBe(400);
    expect(pushed.body).toMatchObject({ error_code: 'InvalidConfiguration' });
    expect(pushed.body.error).toMatch(/one_per_customer.*shop\.orders.*nothing was deployed/);
    expect(await admin.pull(appId)).toEqual(before);
    expect(await indexNames()).not.toContain('one_per_customer');
  });

  it('refuses invalid declarations at push, naming file, path and rule', async () => {
    const pushed = await pushWith([{ key: { customer: 'text' } }, { key: {} }, { key: { a: 1 }, ttl: 5 }]);
    expect(pushed.status).toBe(400);
    expect(pushed.body.violations?.map((v) => `${v.file}|${v.path}|${v.rule}`)).toEqual([
      `${rulePath}|indexes[0].key.customer|rule.indexes.key.direction`,
      `${rulePath}|indexes[1].key|rule.indexes.key.required`,
      `${rulePath}|indexes[2].ttl|rule.indexes.option`,
    ]);
  });
});
