import type { ErrorBody } from '@tessera/domain';
import { AdminSession } from '../admin-api/admin-session';
import { dataApi, serverApiKey } from '../data-api/data-api-support';
import { startTestHost, type TestHost } from '../support/test-host';

// The admin API's Data API configuration resource over real HTTP, on the real host: each change is a
// deployment the edge serves at once, and pull and push carry the file it writes.
describe("the admin API's data_api/config resource", () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;
  const find = { dataSource: 'mongodb-atlas', database: 'admincfg', collection: 'things', filter: {} };

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: 'data-api-config-password' } });
    admin = await AdminSession.login(host, 'admin', 'data-api-config-password');
    const app = await admin.createApp('dataapi-admin');
    appId = app._id;
    clientAppId = app.client_app_id;
    expect((await admin.request('POST', admin.app(appId, '/services'), { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } })).status).toBe(201);
    expect((await admin.request('POST', admin.app(appId, '/auth_providers'), { name: 'api-key', type: 'api-key' })).status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('has no configuration until the Data API is enabled, and lists the versions', async () => {
    const none = await admin.request('GET', admin.app(appId, '/data_api/config'));
    expect(none.status).toBe(200);
    expect(Buffer.from(none.bytes).toString('utf8')).toBe('null');
    expect((await admin.request('GET', admin.app(appId, '/data_api/versions'))).body).toEqual(['v1']);
    expect((await dataApi(host, clientAppId, 'find', find)).body).toMatchObject({ error_code: 'DataApiNotEnabled' });
    const patched = await admin.request<ErrorBody>('PATCH', admin.app(appId, '/data_api/config'), { disabled: true });
    expect(patched.status).toBe(400);
  });

  it('refuses configurations App Services would refuse', async () => {
    const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
      ['a missing required field', { disabled: false, versions: ['v1'], return_type: 'JSON' }, /validation_method/],
      ['an unknown version', { disabled: false, versions: ['v2'], return_type: 'JSON', validation_method: 'NO_VALIDATION' }, /versions/],
      ['an unknown return type', { disabled: false, versions: ['v1'], return_type: 'XML', validation_method: 'NO_VALIDATION' }, /return_type/],
      ['a secret validation without a secret', { disabled: false, versions: ['v1'], return_type: 'JSON', validation_method: 'SECRET_AS_QUERY_PARAM' }, /secret_name/],
      ['a secret that does not exist', { disabled: false, versions: ['v1'], return_type: 'JSON', validation_method: 'SECRET_AS_QUERY_PARAM', secret_name: 'nope' }, /secret not found/],
      ['a string where a boolean goes', { disabled: 'no', versions: ['v1'], return_type: 'JSON', validation_method: 'NO_VALIDATION' }, /disabled/],
      ['a can_evaluate that is no expression', { disabled: false, versions: ['v1'], return_type: 'JSON', validation_method: 'NO_VALIDATION', can_evaluate: 'yes' }, /can_evaluate/],
    ];
    for (const [name, body, message] of refusals) {
      const answer = await admin.request<ErrorBody>('POST', admin.app(appId, '/data_api/config'), body);
      expect(answer.status, name).toBe(400);
      expect(answer.body.error, name).toMatch(message);
    }
    expect((await admin.request('POST', admin.app(appId, '/data_api/config'), [])).status).toBe(400);
    expect((await fetch(`${host.url}/api/admin/v3.0${admin.app(appId, '/data_api/config')}`)).status).toBe(401);
    expect((await admin.request('GET', admin.app(appId, '/data_api/config'))).bytes.length).toBe(4);
  });

  it('enables, changes and disables the Data API, and the edge serves each state', async () => {
    const { key } = await serverApiKey(host, clientAppId, 'admin-config');
    const created = await admin.request<Record<string, unknown>>('POST', admin.app(appId, '/data_api/config'), { disabled: false, versions: ['v1'], return_type: 'JSON', validation_method: 'NO_VALIDATION', run_as_system: true });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ disabled: false, versions: ['v1'], return_type: 'JSON', validation_method: 'NO_VALIDATION', run_as_system: true, create_user_on_auth: false, run_as_user_id: '', run_as_user_id_script_source: '', secret_name: '' });
    expect(await dataApi(host, clientAppId, 'insertOne', { ...find, document: { n: 1 } })).toMatchObject({ status: 201 });

    // PATCH changes what it names and keeps the rest.
    expect((await admin.request('PATCH', admin.app(appId, '/data_api/config'), { return_type: 'EJSON' })).status).toBe(204);
    const read = await admin.request<Record<string, unknown>>('GET', admin.app(appId, '/data_api/config'));
    expect(read.body).toMatchObject({ return_type: 'EJSON', run_as_system: true, versions: ['v1'], disabled: false });
    // Answers are EJSON by default now.
    expect((await dataApi(host, clientAppId, 'find', { ...find, projection: { _id: 0 } }, { headers: { accept: '' } })).body).toEqual({ documents: [{ n: { $numberInt: '1' } }] });
    // No longer as system: credentials are required.
    expect((await admin.request('PATCH', admin.app(appId, '/data_api/config'), { run_as_system: false })).status).toBe(204);
    expect((await dataApi(host, clientAppId, 'find', find)).body).toMatchObject({ error_code: 'InvalidParameter', error: 'no authentication methods were specified' });

    expect((await admin.request('PATCH', admin.app(appId, '/data_api/config'), { disabled: true })).status).toBe(204);
    expect((await dataApi(host, clientAppId, 'find', find, { headers: { apiKey: key } })).body).toMatchObject({ error_code: 'DataApiNotEnabled' });
    expect((await admin.request('PATCH', admin.app(appId, '/data_api/config'), { versions: 'v1' })).status).toBe(400);
  });

  it('round-trips through pull and push', async () => {
    const pulled = await admin.pull(appId);
    const file = pulled.get('http_endpoints/data_api_config.json');
    expect(file).toBeDefined();
    expect(JSON.parse(file ?? '{}')).toMatchObject({ disabled: true, return_type: 'EJSON', versions: ['v1'] });
    pulled.set('http_endpoints/data_api_config.json', JSON.stringify({ ...JSON.parse(file ?? '{}'), disabled: false, run_as_system: true, return_type: 'JSON' }));
    const pushed = await admin.push(appId, pulled);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    expect((await admin.request<Record<string, unknown>>('GET', admin.app(appId, '/data_api/config'))).body).toMatchObject({ disabled: false, run_as_system: true, return_type: 'JSON' });
    expect(await dataApi(host, clientAppId, 'find', { ...find, projection: { _id: 0 } })).toMatchObject({ status: 200, body: { documents: [{ n: 1 }] } });
    // A pushed file App Services would refuse is refused, naming the file.
    pulled.set('http_endpoints/data_api_config.json', JSON.stringify({ disabled: false, versions: ['v3'], return_type: 'JSON', validation_method: 'NO_VALIDATION' }));
    const refused = await admin.push(appId, pulled);
    expect(refused.status).toBe(400);
    expect(refused.body.violations?.map((violation) => violation.file)).toContain('http_endpoints/data_api_config.json');
  });
});
