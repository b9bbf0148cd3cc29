import { createSchema, createYoga } from 'graphql-yoga';
import { GraphQLError } from 'graphql/index.js';
import { directCall, runDirect } from './graphql-direct';

const endpoint = '/api/client/v2.0/app/app-abcde/graphql';

function makeYoga() {
  const schema = createSchema<{ tag: string }>({
    typeDefs: 'type Item { name: String, n: Int } type Query { items(limit: Int): [Item], refused: String, broken: String, seen: String } type Mutation { touch: Int }',
    resolvers: {
      Query: {
        items: (_: unknown, args: { limit?: number }) => Array.from({ length: args.limit ?? 2 }, (_unused, n) => ({ name: `item ${n}`, n })),
        refused: () => {
          throw new GraphQLError('not allowed', { extensions: { code: 'NoMatchingRuleFound' } });
        },
        broken: () => {
          throw new Error('internal detail');
        },
        seen: (_: unknown, _args: unknown, context: { tag: string }) => context.tag,
      },
      Mutation: { touch: () => 1 },
    },
  });
  return createYoga<{ tag: string }>({ schema, graphqlEndpoint: endpoint, graphiql: false, landingPage: false, logging: false, parserAndValidationCache: true });
}

/** yoga's own answer to the request, through its whole fetch-API path. */
async function throughYoga(yoga: ReturnType<typeof makeYoga>, body: string, headers: Record<string, string>): Promise<{ status: number; contentType: string | null; body: string }> {
  const response = await yoga.fetch(`http://localhost${endpoint}`, { method: 'POST', headers, body }, { tag: 'server context' });
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

async function direct(yoga: ReturnType<typeof makeYoga>, body: string, headers: Record<string, string>): Promise<{ status: number; contentType: string | null; body: string } | undefined> {
  const call = directCall({ method: 'POST', url: endpoint, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, body: JSON.parse(body) as unknown }, endpoint);
  if (!call) return undefined;
  const answer = await runDirect(yoga, call, { tag: 'server context' });
  if (!answer) return undefined;
  if ('body' in answer) return answer;
  return { status: answer.response.status, contentType: answer.response.headers.get('content-type'), body: await answer.response.text() };
}

describe('the direct GraphQL path', () => {
  const json = { 'content-type': 'application/json' };
  const bodies = {
    list: JSON.stringify({ query: '{ items(limit: 20) { name n } }' }),
    variables: JSON.stringify({ query: 'query Q($l: Int) { items(limit: $l) { n } }', variables: { l: 3 }, operationName: 'Q' }),
    context: JSON.stringify({ query: '{ seen }' }),
    mutation: JSON.stringify({ query: 'mutation { touch }' }),
    ruleError: JSON.stringify({ query: '{ refused items { n } }' }),
    masked: JSON.stringify({ query: '{ broken }' }),
    invalid: JSON.stringify({ query: '{ nope }' }),
    syntax: JSON.stringify({ query: '{ items(' }),
  };
  const accepts = [undefined, '*/*', 'application/json', 'application/graphql-response+json, application/json', 'application/graphql-response+json', 'application/json;charset=utf-8, */*;q=0.5'];

  it.each(Object.entries(bodies))('answers %s exactly as yoga does, for every JSON media type a client asks for', async (_name, body) => {
    const yoga = makeYoga();
    for (const accept of accepts) {
      const headers = accept === undefined ? json : { ...json, accept };
      const answer = await direct(yoga, body, headers);
      expect(answer).toBeDefined();
      expect(answer).toEqual(await throughYoga(yoga, body, headers));
    }
  });

  it('leaves to yoga the requests it does not take: streaming media types, CORS, other paths and content types, odd parameters', async () => {
    const yoga = makeYoga();
    const body = bodies.list;
    expect(await direct(yoga, body, { ...json, accept: 'text/event-stream' })).toBeUndefined();
    expect(await direct(yoga, body, { ...json, accept: 'multipart/mixed' })).toBeUndefined();
    expect(await direct(yoga, body, { ...json, accept: 'application/json; charset=latin1' })).toBeUndefined();
    expect(await direct(yoga, body, { ...json, origin: 'https://example.com' })).toBeUndefined();
    expect(await direct(yoga, body, { 'content-type': 'application/graphql+json' })).toBeUndefined();
    const params = { method: 'POST', headers: { ...json, 'content-length': '10' }, body: JSON.parse(body) as unknown };
    expect(directCall({ ...params, url: `${endpoint}?x=1` }, endpoint)).toBeUndefined();
    expect(directCall({ ...params, method: 'GET', url: endpoint }, endpoint)).toBeUndefined();
    expect(directCall({ ...params, url: endpoint, body: [{ query: '{ seen }' }] }, endpoint)).toBeUndefined();
    // Parameters yoga refuses before running anything are left to yoga, which answers its own error.
    const refused = JSON.stringify({ query: '{ seen }', unknownParam: 1 });
    expect(await direct(yoga, refused, json)).toBeUndefined();
    expect((await throughYoga(yoga, refused, json)).status).toBe(400);
  });
});
