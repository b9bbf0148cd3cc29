import type { ErrorBody } from '@tessera/domain';
import { AdminSession } from '../admin-api/admin-session';
// The real process host: the admin API and the client edge in one process.
import { startTestHost, type TestHost } from '../support/test-host';

interface EndpointWire {
  _id: string;
  route: string;
  http_method: string;
  function_name: string;
  function_id: string;
  validation_method: string;
  secret_id?: string;
  return_type: string;
  respond_result: boolean;
  disabled: boolean;
}

describe("the admin API's endpoints resource", () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;
  let functionId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: 'endpoints-test-password' } });
    admin = await AdminSession.login(host, 'admin', 'endpoints-test-password');
    const app = await admin.createApp('endpoints-admin');
    appId = app._id;
    clientAppId = app.client_app_id;
    const created = await admin.request<{ _id: string }>('POST', admin.app(appId, '/functions'), { name: 'hello', private: true, run_as_system: true, source: 'exports = (request) => `hello ${request.query.name}`;' });
    expect(created.status).toBe(201);
    functionId = created.body._id;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('creates, lists, reads, changes and deletes an endpoint, and the edge serves each state', async () => {
    const secret = await admin.request<{ _id: string }>('POST', admin.app(appId, '/secrets'), { name: 'helloSecret', value: 's3cret' });
    const created = await admin.request<EndpointWire>('POST', admin.app(appId, '/endpoints'), {
      route: '/hello',
      http_method: 'GET',
      function_id: functionId,
      validation_method: 'SECRET_AS_QUERY_PARAM',
      secret_id: secret.body._id,
      respond_result: true,
      return_type: 'JSON',
      disabled: false,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ route: '/hello', http_method: 'GET', function_id: functionId, function_name: 'hello', validation_method: 'SECRET_AS_QUERY_PARAM', secret_id: secret.body._id });
    const id = created.body._id;
    const url = `${host.url}/app/${clientAppId}/endpoint/hello?name=ada`;
    expect(await (await fetch(`${url}&secret=s3cret`)).json()).toBe('hello ada');
    expect((await fetch(url)).status).toBe(401);

    const list = await admin.request<EndpointWire[]>('GET', admin.app(appId, '/endpoints'));
    expect(list.body.map((endpoint) => endpoint._id)).toEqual([id]);
    expect((await admin.request<EndpointWire>('GET', admin.app(appId, `/endpoints/${id}`))).body.route).toBe('/hello');

    const changed = await admin.request<EndpointWire>('PUT', admin.app(appId, `/endpoints/${id}`), { route: '/hello', http_method: 'GET', function_name: 'hello', validation_method: 'NO_VALIDATION', respond_result: true, return_type: 'EJSON', disabled: false });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ _id: id, validation_method: 'NO_VALIDATION', return_type: 'EJSON' });
    expect(await (await fetch(url)).json()).toBe('hello ada');

    expect((await admin.request('DELETE', admin.app(appId, `/endpoints/${id}`))).status).toBe(200);
    expect((await fetch(url)).status).toBe(404);
    expect((await admin.request<ErrorBody>('GET', admin.app(appId, `/endpoints/${id}`))).body).toMatchObject({ error_code: 'EndpointNotFound' });
  });

  it('refuses an endpoint App Services would refuse, and changes nothing', async () => {
    const bad: Array<[Record<string, unknown>, number, string]> = [
      [{ route: '/../admin', http_method: 'GET', function_name: 'hello' }, 400, 'InvalidParameter'],
      [{ route: 'no-slash', http_method: 'GET', function_name: 'hello' }, 400, 'InvalidParameter'],
      [{ route: '/x', http_method: 'TRACE', function_name: 'hello' }, 400, 'InvalidParameter'],
      [{ route: '/x', http_method: 'GET', function_name: 'hello', validation_method: 'VERIFY_PAYLOAD' }, 400, 'InvalidParameter'],
      [{ route: '/x', http_method: 'GET', function_name: 'hello', return_type: 'XML' }, 400, 'InvalidParameter'],
      [{ route: '/data/v1/action/find', http_method: 'POST', function_name: 'hello' }, 400, 'InvalidParameter'],
      [{ route: '/x', http_method: 'GET', function_name: 'missing' }, 404, 'FunctionNotFound'],
    ];
    for (const [body, status, code] of bad) {
      const response = await admin.request<ErrorBody>('POST', admin.app(appId, '/endpoints'), body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(response.body.error_code).toBe(code);
    }
    await admin.request('POST', admin.app(appId, '/endpoints'), { route: '/twice', http_method: '*', function_name: 'hello' });
    const clash = await admin.request<ErrorBody>('POST', admin.app(appId, '/endpoints'), { route: '/twice', http_method: 'GET', function_name: 'hello' });
    expect(clash.status).toBe(400);
    expect(clash.body.error).toMatch(/already answers GET \/twice/);
    expect((await admin.request<EndpointWire[]>('GET', admin.app(appId, '/endpoints'))).body.map((endpoint) => endpoint.route)).toEqual(['/twice']);
  });
});
