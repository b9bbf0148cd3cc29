import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '@tessera/app-config';
import * as Realm from 'realm-web';
// The real process host: realm-web over HTTP, the function runtime's sandbox, its outbound HTTP client.
import { startTestHost, type TestHost } from '../support/test-host';

const functions: Record<string, string> = {
  // Stitch-era apps call their third-party HTTP service as a service, not through context.http.
  useService: `exports = async (base, method, path) => {
    const http = context.services.get('myHttp');
    try {
      const response = await http[method]({ url: base + path, body: method === 'get' || method === 'head' ? undefined : 'payload' });
      return { status: response.statusCode, body: response.body ? response.body.text() : '' };
    } catch (e) {
      return { error: e.message };
    }
  };`,
  wrongService: `exports = async (base) => {
    try {
      await context.services.get('mongodb-atlas').get({ url: base + '/open' });
      return 'sent';
    } catch (e) {
      return e.message;
    }
  };`,
};

function httpServiceApp(app: AppConfig): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'HttpCluster' } }, collectionRules: [], rules: [], webhooks: [] });
  app.services.push({
    config: { name: 'myHttp', type: 'http', config: {} },
    collectionRules: [],
    rules: [
      // GETs of the open paths only, as Stitch's rules named them: %%args.url in parts.
      { name: 'readOpen', actions: ['get'], when: { '%%args.url.path': { $in: ['/open', '/open/more'] } } },
      // PUTs anywhere: an empty `when` always holds.
      { name: 'putAnything', actions: ['put'], when: {} },
    ],
    webhooks: [],
  });
  for (const [name, source] of Object.entries(functions)) app.functions.push({ config: { name, private: false }, source });
}

// Stitch's third-party HTTP service (`services/<name>/config.json` of type `http`, with service rules): a
// function calls `context.services.get(name).get(...)`, and the request leaves only when a rule allows it.
describe('the HTTP service of Stitch-era apps (standalone, through realm-web)', () => {
  let host: TestHost;
  let target: Server;
  let base: string;
  let user: Realm.User;
  const received: string[] = [];

  beforeAll(async () => {
    target = createServer((request, response) => {
      received.push(`${request.method} ${request.url}`);
      response.end(`answered ${request.method} ${request.url}`);
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    host = await startTestHost({ settings: { TESSERA_FUNCTION_HTTP_ALLOW: '127.0.0.1' } });
    const { clientAppId } = await host.createApp('http-service', httpServiceApp);
    user = await new Realm.App({ id: clientAppId, baseUrl: host.url }).logIn(Realm.Credentials.anonymous(false));
  });

  afterAll(async () => {
    await host?.close();
    await new Promise((resolve) => target?.close(resolve));
  });

  it('sends the actions a service rule allows, with what the target answered', async () => {
    expect(await user.callFunction('useService', base, 'get', '/open')).toEqual({ status: 200, body: 'answered GET /open' });
    expect(await user.callFunction('useService', base, 'put', '/anywhere?x=1')).toEqual({ status: 200, body: 'answered PUT /anywhere?x=1' });
  });

  it('refuses, without sending it, an action no rule lists or whose rule does not hold', async () => {
    received.length = 0;
    expect(await user.callFunction('useService', base, 'get', '/closed')).toEqual({ error: 'action "get" of service "myHttp" is not permitted: no service rule allows it' });
    expect(await user.callFunction('useService', base, 'post', '/open')).toEqual({ error: 'action "post" of service "myHttp" is not permitted: no service rule allows it' });
    expect(await user.callFunction('useService', base, 'delete', '/open')).toMatchObject({ error: expect.stringMatching(/not permitted/) });
    expect(received).toEqual([]);
  });

  it('answers an HTTP action on a service that is not an HTTP service with an error', async () => {
    expect(await user.callFunction('wrongService', base)).toBe('service "mongodb-atlas" is not an HTTP service of this app');
  });
});
