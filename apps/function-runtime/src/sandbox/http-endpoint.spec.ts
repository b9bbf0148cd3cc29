import { Binary } from 'bson';
import { FunctionRuntimeErrorCode } from '../function-runtime.error';
import { APP, makeRuntime } from '../testing/runtime-fixture';

const endpoint = { kind: 'endpoint' as const, route: '/r' };
const request = (body?: string) => ({ query: { q: '1' }, headers: { 'Content-Type': ['text/plain'] }, ...(body === undefined ? {} : { body: new Binary(Buffer.from(body)) }) });

describe("the sandbox's HTTP request and response objects", () => {
  let rt: ReturnType<typeof makeRuntime>;

  beforeEach(() => {
    rt = makeRuntime();
  });

  afterEach(async () => {
    await rt.runtime.close();
  });

  const run = (source: string, body?: string, config: Record<string, unknown> = {}) => {
    rt.functions.deploy(APP, { fn: { source, config } });
    return rt.call('fn', [request(body)], { origin: 'http', http: endpoint });
  };

  it('gives the body as Binary with text(), and returns what the function set on the response', async () => {
    const result = await run(
      `exports = (request, response) => {
        response.setStatusCode(418);
        response.setHeader('X-Set', 'first');
        response.setHeader('x-set', 'replaced');
        response.addHeader('X-Add', 'a');
        response.addHeader('X-Add', 'b');
        response.setBody(request.body.text() + '!');
        return request.body instanceof BSON.Binary;
      };`,
      'hello',
    );
    expect(result.result).toBe(true);
    expect(result.http).toEqual({ statusCode: 418, headers: { 'x-set': ['replaced'], 'X-Add': ['a', 'b'] }, bodyBase64: Buffer.from('hello!').toString('base64') });
  });

  it('reports an untouched response as nothing set, and gives no response object to other calls', async () => {
    expect((await run('exports = () => 1;')).http).toEqual({ headers: {} });
    rt.functions.deploy(APP, { plain: 'exports = (...args) => args.length;' });
    const plain = await rt.call('plain', [1]);
    expect(plain.result).toBe(1);
    expect(plain.http).toBeUndefined();
  });

  it.each([
    ["response.setHeader('X-A', 'v\\r\\nSet-Cookie: x=1')", /invalid header value/],
    ["response.addHeader('X-A', 'v\\nx')", /invalid header value/],
    ["response.setHeader('Bad Name', 'v')", /invalid header name/],
    ['response.setStatusCode(99)', /invalid status code/],
    ['response.setStatusCode(600)', /invalid status code/],
    ['response.setBody({ not: "bytes" })', /must be a string or binary/],
  ])('refuses %s', async (statement, message) => {
    await expect(run(`exports = (request, response) => { ${statement}; return 'no'; };`)).rejects.toMatchObject({ errorCode: FunctionRuntimeErrorCode.FunctionExecutionError, message: expect.stringMatching(message) as unknown });
  });

  it('lets a private function serve an endpoint, but not an SDK call', async () => {
    rt.functions.deploy(APP, { hidden: { source: 'exports = () => "served";', config: { private: true } } });
    expect((await rt.call('hidden', [request()], { origin: 'http', http: endpoint })).result).toBe('served');
    await expect(rt.call('hidden', [])).rejects.toMatchObject({ errorCode: FunctionRuntimeErrorCode.NotCallable });
  });

  it("runs a webhook's own source, found by service and name", async () => {
    rt.functions.deploy(APP, {});
    const apps = rt.functions as unknown as { getFunctions(appId: string): Promise<{ webhooks?: Map<string, unknown> } | null> };
    const deployed = await apps.getFunctions(APP);
    (deployed as { webhooks: Map<string, unknown> }).webhooks = new Map([['github/push', { source: 'exports = (payload, response) => payload.query.q;', config: { name: 'push' } }]]);
    const result = await rt.call('push', [request()], { origin: 'http', caller: { type: 'system' }, http: { kind: 'webhook', route: '/w', service: 'github', webhook: 'push' } });
    expect(result.result).toBe('1');
    await expect(rt.call('push', [request()], { origin: 'http', http: { kind: 'webhook', route: '/w', service: 'gitlab', webhook: 'push' } })).rejects.toMatchObject({ errorCode: FunctionRuntimeErrorCode.FunctionNotFound });
  });
});
