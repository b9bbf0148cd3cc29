import { writeAppFiles } from '@tessera/app-config';
import { deriveSigningKey, type JwtClaims, signJwt } from '@tessera/credentials';
import { anonymousLogin, makeTempDir, type ServerProcess, shopApp, startServerProcess } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';

interface Answer {
  status: number;
  contentType: string | null;
  body: string;
}

const signingKey = Buffer.alloc(32, 9);

// The GraphQL endpoint answers a plain JSON POST without yoga's HTTP layer (graphql-direct.ts). Every hostile
// request shape gets, on that path, exactly what yoga's own path answers (a request with an Origin header
// takes yoga's path), the limits and the introspection switch hold on it, and tokens of another app, expired
// or of an admin are refused before any GraphQL runs, with App Services' error body.
describe('the direct GraphQL path under attack', () => {
  const dataDir = makeTempDir('tessera-graphql-attack-');
  let server: ServerProcess;
  let admin: AdminSession;
  let app: { _id: string; client_app_id: string };
  let other: { _id: string; client_app_id: string };
  let token: string;
  let endpoint: string;

  const post = async (body: string, headers: Record<string, string> = {}, url = endpoint): Promise<Answer> => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers }, body });
    return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
  };
  /** The same request on yoga's own path: an Origin header keeps it off the direct path. */
  const viaYoga = (body: string, headers: Record<string, string> = {}) => post(body, { ...headers, origin: 'http://localhost' });

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'gql-attack-password', TESSERA_EXAMPLE_APP: '', TESSERA_SIGNING_KEY: signingKey.toString('base64') } });
    admin = await AdminSession.login(server, 'admin', 'gql-attack-password');
    app = await admin.createApp('gqlattack');
    const files = new Map([...writeAppFiles(shopApp({ introspection: false }))].map(([path, bytes]) => [path, Buffer.from(bytes).toString('utf8')]));
    files.set('config.json', JSON.stringify({ ...JSON.parse(files.get('config.json') ?? '{}'), app_id: app.client_app_id, name: 'gqlattack' }));
    const pushed = await admin.push(app._id, files);
    if (pushed.status >= 300) throw new Error(`push failed: ${pushed.status} ${JSON.stringify(pushed.body)}`);
    other = await admin.createApp('gqlother', { template_id: 'web.mql.todo' });
    token = (await anonymousLogin(server.url, app.client_app_id)).accessToken;
    endpoint = `${server.url}/api/client/v2.0/app/${app.client_app_id}/graphql`;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  const roots = Array.from({ length: 11 }, (_unused, i) => `p${i}: product { name }`).join(' ');
  const shapes: Record<string, string> = {
    'a batch (array body)': JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    'an operationName naming no operation': JSON.stringify({ query: 'query A { __typename }', operationName: 'B' }),
    'an operationName that is an object': JSON.stringify({ query: 'query A { __typename } query B { __typename }', operationName: { $ne: 'A' } }),
    'variables given as a string': JSON.stringify({ query: '{ __typename }', variables: 'x' }),
    'extensions given as a string': JSON.stringify({ query: '{ __typename }', extensions: 'x' }),
    'a query that is a number': JSON.stringify({ query: 1 }),
    'a query that is null': JSON.stringify({ query: null }),
    'eleven root resolvers (App Services allows ten)': JSON.stringify({ query: `{ ${roots} }` }),
    'an introspection query on an app that disables it': JSON.stringify({ query: '{ __schema { types { name } } }' }),
    'a __type lookup on an app that disables introspection': JSON.stringify({ query: '{ __type(name: "Product") { fields { name } } }' }),
    'a syntax error': JSON.stringify({ query: '{ product(' }),
    'a field the schema lacks': JSON.stringify({ query: '{ secrets }' }),
    'a selection nested 3,000 deep (the parser overflows its stack)': JSON.stringify({ query: `{ ${'product { '.repeat(3000)}name${' }'.repeat(3000)} }` }),
    'a list literal nested 20,000 deep': JSON.stringify({ query: `{ product(query: { name_in: ${'['.repeat(20_000)}${']'.repeat(20_000)} }) { name } }` }),
    // Each fragment spreads the next twice: 2^30 paths, which the relationship depth limit walked one by one.
    'a fragment chain that doubles 30 times': JSON.stringify({ query: `{ ...F0 } ${Array.from({ length: 30 }, (_unused, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(' ')} fragment F30 on Query { product { name } }` }),
    'a __proto__ key beside the query': '{"query":"{ __typename }","__proto__":{"query":"{ secrets }"}}',
    'a mutation': JSON.stringify({ query: 'mutation { deleteManyProducts { deletedCount } }' }),
    // Amplification: each alias is answered again (a 128 KB query of aliased __schema answered 9 MB, 0.9 s of the event loop).
    'eleven aliased __schema lookups': JSON.stringify({ query: `{ ${Array.from({ length: 11 }, (_unused, i) => `s${i}: __schema { types { name } }`).join(' ')} }` }),
    '3,000 aliases of one field': JSON.stringify({ query: `{ product { ${Array.from({ length: 3000 }, (_unused, i) => `n${i}: name`).join(' ')} } }` }),
    'a document of 60,000 tokens': JSON.stringify({ query: `{ ${Array.from({ length: 20_000 }, (_unused, i) => `t${i}: __typename`).join(' ')} }` }),
  };

  it.each(Object.entries(shapes))('answers %s on the direct path exactly as on yoga’s path', async (_name, body) => {
    const direct = await post(body);
    const yoga = await viaYoga(body);
    expect({ status: direct.status, contentType: direct.contentType, body: direct.body }).toEqual({ status: yoga.status, contentType: yoga.contentType, body: yoga.body });
    // No engine internals on the wire, whatever the shape.
    expect(direct.body).not.toMatch(/Maximum call stack|RangeError|at [A-Za-z.]+ \(/);
  });

  it('keeps the limits and the introspection switch on the direct path', async () => {
    const tooMany = JSON.parse((await post(shapes['eleven root resolvers (App Services allows ten)'])).body) as { errors: { message: string }[] };
    expect(tooMany.errors[0].message).toBe('max number of queries reached');
    const introspection = JSON.parse((await post(shapes['an introspection query on an app that disables it'])).body) as { data?: unknown; errors: { message: string }[] };
    expect(introspection.data).toBeUndefined();
    expect(introspection.errors[0].message).toMatch(/introspection/i);
    expect(JSON.parse((await post(JSON.stringify({ query: '{ __typename }' }))).body)).toEqual({ data: { __typename: 'Query' } });
    const refused = async (name: string): Promise<string> => {
      const answer = JSON.parse((await post(shapes[name])).body) as { data?: unknown; errors: { message: string }[] };
      expect(answer.data).toBeUndefined();
      return answer.errors[0].message;
    };
    expect(await refused('eleven aliased __schema lookups')).toBe('max number of queries reached');
    expect(await refused('3,000 aliases of one field')).toBe('the operation asks for more than 2000 fields in its response');
    expect(await refused('a document of 60,000 tokens')).toMatch(/Document contains more (than|that) 20000 tokens/);
  });

  it('refuses malformed JSON with the App Services body, on both paths', async () => {
    for (const send of [post, viaYoga]) {
      expect(JSON.parse((await send('{"query":')).body)).toEqual({ error: 'invalid JSON in request body', error_code: 'BadRequest' });
    }
  });

  it.each([
    ['{}', 200, 'Must provide query string.'],
    ['[]', 400, 'Batching is not supported.'],
    ['null', 400, 'POST body is expected to be object but received null'],
    ['1', 400, 'POST body is expected to be object but received number'],
    ['true', 400, 'POST body is expected to be object but received boolean'],
  ])("answers the JSON body %s with yoga's own error for it, not an invalid-JSON error quoting the parser", async (body, status, message) => {
    // yoga read the stream Fastify had consumed for these bodies and answered "POST body sent invalid JSON"
    // with the JSON parser's message as `originalError`.
    for (const send of [post, viaYoga]) {
      const answer = await send(body);
      expect({ status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({ status, body: { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] } });
    }
  });

  it('refuses a text/plain body with 415 and the App Services body (yoga answered it with an empty body)', async () => {
    const answer = await post(JSON.stringify({ query: '{ __typename }' }), { 'content-type': 'text/plain' });
    expect({ status: answer.status, body: JSON.parse(answer.body || '{}') as unknown }).toEqual({ status: 415, body: { error: 'Unsupported Media Type', error_code: 'BadRequest' } });
  });

  it('takes a charset other than utf-8, a query string or a GET through yoga with the same answer', async () => {
    const body = JSON.stringify({ query: '{ __typename }' });
    expect((await post(body, { 'content-type': 'application/json; charset=latin1' })).body).toBe('{"data":{"__typename":"Query"}}');
    expect((await post(body, {}, `${endpoint}?x=1`)).body).toBe('{"data":{"__typename":"Query"}}');
    const get = await fetch(`${endpoint}?query=${encodeURIComponent('mutation { deleteManyProducts { deletedCount } }')}`, { headers: { authorization: `Bearer ${token}` } });
    expect(get.status).toBe(405);
  });

  it("refuses another app's token, an expired one, an admin's and a forged one with 401 InvalidSession", async () => {
    const foreign = (await anonymousLogin(server.url, other.client_app_id)).accessToken;
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as JwtClaims;
    const now = Math.floor(Date.now() / 1000);
    const tokens = {
      foreign,
      expired: signJwt({ ...claims, iat: now - 3600, exp: now - 60 }, deriveSigningKey(signingKey, `app-${app._id}`)),
      otherAppKey: signJwt(claims, deriveSigningKey(signingKey, `app-${other._id}`)),
      admin: admin.accessToken,
      unsigned: `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${token.split('.')[1]}.`,
    };
    for (const [name, bad] of Object.entries(tokens)) {
      const answer = await post(JSON.stringify({ query: '{ __typename }' }), { authorization: `Bearer ${bad}` });
      expect({ name, status: answer.status, code: (JSON.parse(answer.body) as { error_code?: string }).error_code }).toEqual({ name, status: 401, code: 'InvalidSession' });
    }
  });
});
