import { request as httpRequest } from 'node:http';
// The real process host: the HTTP edge exactly as `npm start` configures it (Fastify options, filters, hooks).
import { startTestHost, type TestHost } from '../support/test-host';

interface Probe {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  status: number;
  errorCode?: string;
}

/** One raw HTTP exchange (fetch refuses some of what these probes send, such as oversized headers). */
function exchange(url: string, probe: Probe): Promise<{ status: number; type: string | undefined; text: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}${probe.path}`, { method: probe.method, headers: { ...(probe.body !== undefined ? { 'content-length': String(Buffer.byteLength(probe.body)) } : {}), ...probe.headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, type: response.headers['content-type'], text, headers: response.headers }));
    });
    request.on('error', reject);
    if (probe.body !== undefined) request.write(probe.body);
    request.end();
  });
}

// Every error the HTTP edge gives, from the framework as from our handlers, carries App Services' body
// `{ error, error_code }` with Content-Type exactly application/json: the probes walk the edge's routes
// with bad input of every kind.
describe('HTTP edge errors', () => {
  let host: TestHost;
  let clientAppId: string;
  let token: string;
  const probes: Probe[] = [];
  const json = { 'content-type': 'application/json' };

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: 'edge-test-password' } });
    ({ clientAppId } = await host.createApp('edge', (app) => {
      app.authProviders.push({ name: 'anon-user', type: 'anon-user' }, { name: 'local-userpass', type: 'local-userpass', config: { autoConfirm: true, resetPasswordUrl: 'https://example.com/reset' } });
      app.functions.push({ config: { name: 'echo', private: false }, source: 'exports = (x) => x;' });
    }));
    token = (await host.anonymousLogin(clientAppId)).accessToken;
  });

  afterAll(async () => {
    await host?.close();
  });

  const client = (rest: string) => `/api/client/v2.0/app/${clientAppId}${rest}`;
  const call = (args: string): Probe => ({ name: '', method: 'POST', path: client('/functions/call'), headers: { ...json, authorization: `Bearer ${token}` }, body: `{"name":"echo","arguments":[${args}]}`, status: 400, errorCode: 'BadRequest' });
  const register = (email: string): Probe => ({ name: '', method: 'POST', path: client('/auth/providers/local-userpass/register'), headers: json, body: JSON.stringify({ email, password: 'password-1' }), status: 400, errorCode: 'BadRequest' });

  function cases(): Probe[] {
    return [
      { name: 'unknown route', method: 'GET', path: '/no/such/route', status: 404, errorCode: 'NotFound' },
      { name: 'unknown admin route', method: 'GET', path: '/api/admin/v3.0/no-such-thing', status: 404, errorCode: 'NotFound' },
      { name: 'wrong method on a known route', method: 'DELETE', path: client('/location'), status: 405, errorCode: 'MethodNotAllowed' },
      { name: 'wrong method on an admin route', method: 'PUT', path: '/api/admin/v3.0/auth/providers/local-userpass/login', headers: json, body: '{}', status: 405, errorCode: 'MethodNotAllowed' },
      { name: 'malformed JSON', method: 'POST', path: client('/auth/providers/anon-user/login'), headers: json, body: '{"oops"', status: 400, errorCode: 'BadRequest' },
      { name: 'malformed JSON to the admin API', method: 'POST', path: '/api/admin/v3.0/auth/providers/local-userpass/login', headers: json, body: '{"username":', status: 400, errorCode: 'BadRequest' },
      { name: 'wrong content type', method: 'POST', path: client('/auth/providers/anon-user/login'), headers: { 'content-type': 'text/xml' }, body: '<login/>', status: 415 },
      { name: 'body too large (18 MB limit)', method: 'POST', path: client('/auth/providers/anon-user/login'), headers: json, body: `"${'a'.repeat(19 * 1024 * 1024)}"`, status: 413, errorCode: 'RequestTooLarge' },
      { name: 'headers too large', method: 'GET', path: client('/location'), headers: { 'x-padding': 'a'.repeat(64 * 1024) }, status: 431, errorCode: 'RequestHeaderFieldsTooLarge' },
      { name: 'no access token', method: 'POST', path: client('/functions/call'), headers: json, body: '{"name":"echo","arguments":[]}', status: 401 },
      { name: 'unknown app', method: 'GET', path: '/api/client/v2.0/app/missing-abcde/location', status: 404 },
      { ...call('{"$binary":{"base64":"!!not base64!!","subType":"00"}}'), name: '$binary with bad base64' },
      { ...call('{"$binary":{"base64":"AAAA","subType":"zz"}}'), name: '$binary with a bad subType' },
      { ...call('{"$binary":"AAA","$type":"00"}'), name: 'legacy $binary with truncated base64' },
      { ...call('{"nested":[{"$binary":{"base64":"AAAA"}}]}'), name: 'nested $binary without subType' },
      { ...register(`${'a'.repeat(10_000)}@example.com`), name: 'register with a 10,000-character email' },
      { ...register('nul\u0000@example.com'), name: 'register with an email holding NUL' },
      { ...register('line\nbreak@example.com'), name: 'register with an email holding a newline' },
      { ...register('no-at-sign'), name: 'register with something that is not an email' },
    ];
  }

  it('answers each bad request with its status and an App Services error body', async () => {
    probes.push(...cases());
    const failures: string[] = [];
    for (const probe of probes) {
      const response = await exchange(host.url, probe);
      let body: unknown;
      try {
        body = JSON.parse(response.text);
      } catch {
        body = response.text;
      }
      const shaped = typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string' && typeof (body as { error_code?: unknown }).error_code === 'string';
      const ok = response.status === probe.status && response.type === 'application/json' && shaped && (probe.errorCode === undefined || (body as { error_code: string }).error_code === probe.errorCode);
      if (!ok) failures.push(`${probe.name}: ${response.status} ${response.type ?? '(no type)'} ${response.text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });

  it('names the methods a known path serves when refusing another', async () => {
    const response = await exchange(host.url, { name: '', method: 'DELETE', path: client('/location'), status: 405 });
    expect(response.headers['allow']).toContain('GET');
  });

  it('still takes well-formed input on the same routes', async () => {
    const echoed = await exchange(host.url, { ...call('{"$binary":{"base64":"AAECAw==","subType":"00"}}'), name: '' });
    expect(echoed.status).toBe(200);
    expect(JSON.parse(echoed.text)).toEqual({ $binary: { base64: 'AAECAw==', subType: '00' } });
    expect((await exchange(host.url, { ...register('ada@example.com'), name: '' })).status).toBe(201);
  });
});
