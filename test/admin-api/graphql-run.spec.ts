import { shopApp } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession } from './admin-session';

type ErrorBody = { error: string; error_code: string };
type GraphqlBody = { data: Record<string, unknown> | null; errors?: { message: string }[] };

const PASSWORD = 'graphql-run-password';

// `POST .../graphql` of the admin API over HTTP against the real host: the operation goes over the bus to the
// gateway, which runs it as the system user against the app's generated schema (rules bypassed), while a
// user's request to the client endpoint still sees only what the rules let through.
describe('admin API: POST .../graphql runs an operation as the system user', () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: PASSWORD }, fakes: { functions: { countProducts: () => 7 } } });
    admin = await AdminSession.login(host, 'admin', PASSWORD);
    ({ appId, clientAppId } = await host.createApp('graphql-run-shop', shopApp(), { groupId: admin.groupId }));
    await host.dataSources
      .forService(shopApp(), 'mongodb-atlas')
      .client.db('shop')
      .collection('products')
      .insertMany([
        { name: 'a private one', owner_id: 'someone', visibility: 'private', secret: 's1' },
        { name: 'a public one', owner_id: 'someone', visibility: 'public', secret: 's2' },
      ]);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const run = (body: unknown) => admin.request<GraphqlBody & ErrorBody>('POST', admin.app(appId, '/graphql'), body);

  it('reads what no user may: private documents and hidden fields', async () => {
    const response = await run({ query: 'query { products(sortBy: NAME_ASC) { name secret } }' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ data: { products: [{ name: 'a private one', secret: 's1' }, { name: 'a public one', secret: 's2' }] } });
    // A user through the client endpoint sees the public one, without its secret.
    const { accessToken } = await host.anonymousLogin(clientAppId);
    const user = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ query: 'query { products(sortBy: NAME_ASC) { name secret } }' }),
    });
    expect(await user.json()).toEqual({ data: { products: [{ name: 'a public one', secret: null }] } });
  });

  it('writes as the system in a transaction, with variables as JSON text and a chosen operation', async () => {
    const query = `
      mutation Add($name: String!) { insertOneProduct(data: { name: $name, owner_id: "nobody", visibility: "private" }) { name owner_id } }
      query Count { productCount }`;
    const added = await run({ query, variables: JSON.stringify({ name: 'made by the admin' }), operationName: 'Add' });
    expect(added.body).toEqual({ data: { insertOneProduct: { name: 'made by the admin', owner_id: 'nobody' } } });
    const stored = await host.dataSources.forService(shopApp(), 'mongodb-atlas').client.db('shop').collection('products').findOne({ name: 'made by the admin' });
    expect(stored).toMatchObject({ owner_id: 'nobody', visibility: 'private' });

    const counted = await run({ query, operationName: 'Count' });
    expect(counted.body).toEqual({ data: { productCount: 7 } });
    expect(host.runs.at(-1)).toMatchObject({ functionName: 'countProducts', caller: { type: 'system' }, metadata: { origin: 'admin' } });
  });

  it('answers a failing operation with its GraphQL errors, and a bad body with App Services errors', async () => {
    const unknown = await run({ query: 'query { noSuchField }' });
    expect(unknown.status).toBe(200);
    expect(unknown.body.errors?.[0]?.message).toMatch(/noSuchField/);
    const twoOps = await run({ query: 'query A { productCount } query B { productCount }' });
    expect(twoOps.status).toBe(200);
    expect(twoOps.body.errors?.length).toBeGreaterThan(0);
    for (const body of [{}, { query: '' }, { query: 42 }, { query: '{ productCount }', variables: '{oops' }, { query: '{ productCount }', variables: '[1]' }, { query: '{ productCount }', operationName: 7 }, ['query']]) {
      const refused = await run(body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error_code).toMatch(/BadRequest|InvalidParameter/);
    }
    const foreign = await admin.request('POST', `/groups/another-group/apps/${appId}/graphql`, { query: '{ productCount }' });
    expect([403, 404]).toContain(foreign.status);
    const anonymous = await fetch(`${host.url}/api/admin/v3.0${admin.app(appId, '/graphql')}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ productCount }"}' });
    expect(anonymous.status).toBe(401);
  });
});
