import { writeAppFiles } from '@tessera/app-config';
import { anonymousLogin, makeTempDir, type ServerProcess, shopApp, startServerProcess } from '@tessera/testing';
import type { GraphQLClient as GraphqlRequestClient } from 'graphql-request' with { 'resolution-mode': 'import' };
import { AdminSession } from '../admin-api/admin-session';

// The built server as users run it: an app pushed through the admin API, its SDL exported there, and
// its client GraphQL endpoint used with graphql-request by a user who logged in through the client API.
describe('GraphQL on the running server', () => {
  const dataDir = makeTempDir('tessera-graphql-server-');
  let server: ServerProcess;
  let admin: AdminSession;
  let app: { _id: string; client_app_id: string };

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'admin-test-password', TESSERA_EXAMPLE_APP: '' } });
    admin = await AdminSession.login(server, 'admin', 'admin-test-password');
    app = await admin.createApp('graphqlshop');
    const files = new Map([...writeAppFiles(shopApp())].map(([path, bytes]) => [path, Buffer.from(bytes).toString('utf8')]));
    files.set('config.json', JSON.stringify({ ...JSON.parse(files.get('config.json') ?? '{}'), app_id: app.client_app_id, name: 'graphqlshop' }));
    const pushed = await admin.push(app._id, files);
    if (pushed.status >= 300) throw new Error(`push failed: ${pushed.status} ${JSON.stringify(pushed.body)}`);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  it('exports the generated SDL through the admin API, for an admin only', async () => {
    const response = await admin.request('GET', admin.app(app._id, '/graphql/schema'));
    expect(response.status).toBe(200);
    const sdl = Buffer.from(response.bytes).toString('utf8');
    expect(sdl).toContain('type Product {');
    expect(sdl).toContain('insertManyReviews(data: [ReviewInsertInput!]!): InsertManyPayload');
    expect(sdl).toContain('stats: ProductStatsDatum');
    const again = await admin.request('GET', admin.app(app._id, '/graphql/schema'));
    expect(Buffer.from(again.bytes).toString('utf8')).toBe(sdl);
    expect((await admin.request('GET', admin.app(app._id, '/graphql/schema'), undefined, { token: 'not-a-token' })).status).toBe(401);
  });

  it('answers graphql-request for a logged-in user, with the user’s rules', async () => {
    const { accessToken: token, userId } = await anonymousLogin(server.url, app.client_app_id);
    const { GraphQLClient } = await import('graphql-request');
    const client: GraphqlRequestClient = new GraphQLClient(`${server.url}/api/client/v2.0/app/${app.client_app_id}/graphql`, { headers: { authorization: `Bearer ${token}` } });
    const inserted = await client.request<{ insertOneProduct: { name: string; category_code: { label: string } } }>(
      `mutation ($owner: String!) { insertOneProduct(data: { name: "lamp", owner_id: $owner, category_code: { create: { code: "home", label: "Home" } } }) { name category_code { label } } }`,
      { owner: userId },
    );
    expect(inserted.insertOneProduct).toEqual({ name: 'lamp', category_code: { label: 'Home' } });
    const lenient = new GraphQLClient(`${server.url}/api/client/v2.0/app/${app.client_app_id}/graphql`, { headers: { authorization: `Bearer ${token}` }, errorPolicy: 'all' });
    const refused = await lenient.rawRequest(`mutation { insertOneProduct(data: { name: "forged", owner_id: "someone-else", visibility: "public" }) { name } }`);
    expect(refused.errors?.map((e) => e.message)).toEqual(['insert not permitted']);
    const listed = await client.request<{ products: Array<{ name: string }> }>(`{ products(sortBy: NAME_ASC) { name } }`);
    expect(listed.products).toEqual([{ name: 'lamp' }]);
    // Custom resolvers run in the real function runtime here.
    await client.request(`mutation { updateOneProduct(query: { name: "lamp" }, set: { price: 2.25 }) { name } }`);
    const computed = await client.request<{ productCount: number; searchProducts: Array<{ name: string }>; product: { stats: { doubled: number } } }>(`{ productCount searchProducts(input: "desk") { name } product { stats { doubled } } }`);
    expect(computed).toEqual({ productCount: 42, searchProducts: [{ name: 'found desk' }], product: { stats: { doubled: 4.5 } } });
  });
});
