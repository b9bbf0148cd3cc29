import { appEnvironment, emptyApp, readAppFiles } from '@tessera/app-config';
import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession } from './admin-session';

type Described = { _id: string; name: string };
type ErrorBody = { error: string; error_code: string };

describe('admin API: environment, environment values, security settings, deployment configuration', () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let foreignAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: 'environment-security-password' } });
    admin = await AdminSession.login(host, 'admin', 'environment-security-password');
    appId = (await admin.createApp('env-app'))._id;
    foreignAppId = (await host.createApp('foreign-env-app', emptyApp('foreign-env-app'), { groupId: 'another-group' })).appId;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const pulledJson = async (path: string): Promise<Record<string, unknown> | undefined> => {
    const text = (await admin.pull(appId)).get(path);
    return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
  };

  it('sets the environment in the root settings and answers the app', async () => {
    const set = await admin.request<{ _id: string; environment: string }>('PUT', admin.app(appId, '/environment'), { environment: 'qa' });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ _id: appId, environment: 'qa' });
    expect(await pulledJson('config.json')).toMatchObject({ environment: 'qa' });
    expect((await admin.request<{ environment: string }>('GET', admin.app(appId, '/description'))).body.environment).toBe('qa');
    const cleared = await admin.request('PUT', admin.app(appId, '/environment'), { environment: '' });
    expect(cleared.status).toBe(200);
    expect(await pulledJson('config.json')).toMatchObject({ environment: '' });
  });

  it('refuses an unknown environment or a bad body', async () => {
    for (const body of [{ environment: 'staging' }, { environment: 3 }, {}, ['qa']]) {
      const response = await admin.request<ErrorBody>('PUT', admin.app(appId, '/environment'), body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error_code).toMatch(/BadRequest|InvalidParameter/);
    }
  });

  it('creates, reads, lists, updates and deletes environment values in environments/*.json', async () => {
    const created = await admin.request<Described>('POST', admin.app(appId, '/environment_values'), { name: 'clusterName', values: { none: 'local', production: 'Prod0', qa: { nested: true } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.name).toBe('clusterName');
    expect(created.body._id).toMatch(/^[0-9a-f]{24}$/);
    const id = created.body._id;

    expect(await pulledJson('environments/production.json')).toEqual({ values: { clusterName: 'Prod0' } });
    expect(await pulledJson('environments/qa.json')).toEqual({ values: { clusterName: { nested: true } } });
    expect(await pulledJson('environments/no-environment.json')).toEqual({ values: { clusterName: 'local' } });

    const listed = await admin.request<Described[]>('GET', admin.app(appId, '/environment_values'));
    expect(listed.body).toEqual([{ _id: id, name: 'clusterName' }]);
    const read = await admin.request('GET', admin.app(appId, `/environment_values/${id}`));
    expect(read.body).toEqual({ _id: id, name: 'clusterName', values: { none: 'local', production: 'Prod0', qa: { nested: true } } });

    const duplicate = await admin.request<ErrorBody>('POST', admin.app(appId, '/environment_values'), { name: 'clusterName', values: {} });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error_code).toBe('EnvironmentValueAlreadyExists');

    const updated = await admin.request<Described>('PUT', admin.app(appId, `/environment_values/${id}`), { name: 'clusterName', values: { development: 'Dev0' } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toEqual({ _id: id, name: 'clusterName' });
    expect(await pulledJson('environments/development.json')).toEqual({ values: { clusterName: 'Dev0' } });
    expect(await pulledJson('environments/production.json')).toEqual({ values: {} });

    const removed = await admin.request('DELETE', admin.app(appId, `/environment_values/${id}`));
    expect(removed.status).toBe(204);
    expect(await pulledJson('environments/development.json')).toEqual({ values: {} });
    const gone = await admin.request<ErrorBody>('GET', admin.app(appId, `/environment_values/${id}`));
    expect(gone.status).toBe(404);
    expect(gone.body.error_code).toBe('EnvironmentValueNotFound');
  });

  it('resolves %%environment.values against the selected environment once values and environment are set', async () => {
    const created = await admin.request<Described>('POST', admin.app(appId, '/environment_values'), { name: 'region', values: { testing: 'eu' } });
    expect(created.status).toBe(201);
    expect((await admin.request('PUT', admin.app(appId, '/environment'), { environment: 'testing' })).status).toBe(200);
    const files = new Map([...(await admin.pull(appId))].map(([path, text]) => [path, new TextEncoder().encode(text)]));
    expect(appEnvironment(readAppFiles(files).app)).toEqual({ tag: 'testing', values: { region: 'eu' } });
  });

  it('refuses bad environment values and unknown ids', async () => {
    for (const body of [{ values: {} }, { name: 'a.b' }, { name: 7 }, { name: 'x', values: { staging: 1 } }, { name: 'x', values: [1] }, 'text']) {
      const response = await admin.request<ErrorBody>('POST', admin.app(appId, '/environment_values'), body);
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await admin.request<ErrorBody>(method, admin.app(appId, '/environment_values/000000000000000000000000'), method === 'PUT' ? { values: {} } : undefined);
      expect(response.status, method).toBe(404);
      expect(response.body.error_code).toBe('EnvironmentValueNotFound');
    }
  });

  it('sets and lists the allowed request origins in the app settings', async () => {
    const set = await admin.request('POST', admin.app(appId, '/security/allowed_request_origins'), ['https://shop.example.com', 'http://localhost:3000', 'https://shop.example.com']);
    expect(set.status, JSON.stringify(set.body)).toBe(204);
    const listed = await admin.request('GET', admin.app(appId, '/security/allowed_request_origins'));
    expect(listed.body).toEqual(['https://shop.example.com', 'http://localhost:3000']);
    expect(await pulledJson('config.json')).toMatchObject({ security: { allowed_request_origins: ['https://shop.example.com', 'http://localhost:3000'] } });
    for (const body of [['https://shop.example.com/path'], ['shop.example.com'], [42], { origin: 'https://a.b' }, ['https://user@a.b'], ['https://a.b?x=1']]) {
      const response = await admin.request<ErrorBody>('POST', admin.app(appId, '/security/allowed_request_origins'), body);
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
    expect((await admin.request('GET', admin.app(appId, '/security/allowed_request_origins'))).body).toEqual(['https://shop.example.com', 'http://localhost:3000']);
  });

  it("sets the app's refresh token lifetime, which the client API then gives the tokens it issues", async () => {
    const read = await admin.request<{ expiration_time_seconds: number }>('GET', admin.app(appId, '/security/refresh_token_expiration'));
    expect(read.status).toBe(200);
    expect(read.body.expiration_time_seconds).toBe(60 * 24 * 60 * 60);
    const { client_app_id: clientAppId } = (await admin.request<{ client_app_id: string }>('GET', admin.app(appId, ''))).body;
    expect((await admin.request('POST', admin.app(appId, '/auth_providers'), { name: 'anon-user', type: 'anon-user' })).status).toBe(201);
    const refreshLifetime = async (): Promise<number> => {
      const login = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      expect(login.status).toBe(200);
      const { refresh_token: token } = (await login.json()) as { refresh_token: string };
      const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { exp: number; iat: number };
      return claims.exp - claims.iat;
    };
    expect(await refreshLifetime()).toBe(60 * 24 * 60 * 60);

    expect((await admin.request('PUT', admin.app(appId, '/security/refresh_token_expiration'), { expiration_time_seconds: 3600 })).status).toBe(204);
    expect((await admin.request<{ expiration_time_seconds: number }>('GET', admin.app(appId, '/security/refresh_token_expiration'))).body.expiration_time_seconds).toBe(3600);
    expect(await pulledJson('config.json')).toMatchObject({ security: { refresh_token_expiration_seconds: 3600 } });
    expect(await refreshLifetime()).toBe(3600);
    // A push whose config.json names no lifetime (an App Services export, an older pull) keeps the app's.
    const files = await admin.pull(appId);
    const config = JSON.parse(files.get('config.json') ?? '{}') as { security?: Record<string, unknown> };
    delete config.security?.['refresh_token_expiration_seconds'];
    files.set('config.json', JSON.stringify(config));
    expect((await admin.push(appId, files)).status).toBe(204);
    expect(await refreshLifetime()).toBe(3600);
    // An app of another group is not this admin's to read.
    expect((await admin.request<{ expiration_time_seconds: number }>('GET', admin.app(foreignAppId, '/security/refresh_token_expiration'))).status).toBe(404);

    for (const body of [{ expiration_time_seconds: 60 }, { expiration_time_seconds: '3600' }, { expiration_time_seconds: 15_552_001 }, { expiration_time_seconds: 3600.5 }, {}]) {
      const refused = await admin.request<ErrorBody>('PUT', admin.app(appId, '/security/refresh_token_expiration'), body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toMatch(/from 1800 to 15552000/);
    }
    expect((await admin.request<{ expiration_time_seconds: number }>('GET', admin.app(appId, '/security/refresh_token_expiration'))).body.expiration_time_seconds).toBe(3600);
  });

  it('migrates the deployment model and region at once and records the migration; answers private-endpoint toggles', async () => {
    expect((await admin.request<ErrorBody>('GET', admin.app(appId, '/deployment_migration'))).status).toBe(404);
    const before = (await admin.request<{ deployment_model: string; provider_region: string }>('GET', admin.app(appId, ''))).body;
    const to = { deployment_model: 'LOCAL', provider_region: 'aws-eu-central-1' };
    expect((await admin.request('PUT', admin.app(appId, '/deployment_migration'), to)).status).toBe(204);
    const migration = await admin.request<Record<string, unknown>>('GET', admin.app(appId, '/deployment_migration'));
    expect(migration.body).toMatchObject({ status: 'successful', from: { deployment_model: before.deployment_model, provider_region: before.provider_region }, to });
    expect(Date.parse(String(migration.body['updated_at']))).not.toBeNaN();
    expect((await admin.request('GET', admin.app(appId, ''))).body).toMatchObject(to);
    expect(await pulledJson('config.json')).toMatchObject({ deployment_model: 'LOCAL' });
    // Moving where it is already is a no-op App Services refused; so are models and regions it did not offer.
    for (const body of [to, { deployment_model: 'EVERYWHERE', provider_region: 'aws-us-east-1' }, { deployment_model: 'LOCAL', provider_region: 'moon-1' }, { deployment_model: 'GLOBAL', provider_region: 'aws-eu-central-1' }, ['LOCAL']]) {
      expect((await admin.request('PUT', admin.app(appId, '/deployment_migration'), body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await admin.request('POST', admin.app(appId, '/security/allow_non_vpc_client_requests'), { allow_non_vpc_client_requests: true })).status).toBe(204);
    const restrict = await admin.request<ErrorBody>('POST', admin.app(appId, '/security/allow_non_vpc_client_requests'), { allow_non_vpc_client_requests: false });
    expect(restrict.status).toBe(501);
    expect(restrict.body.error).toMatch(/no private endpoints/);
    expect((await admin.request('POST', admin.app(appId, '/security/allow_non_vpc_client_requests'), { allow_non_vpc_client_requests: 'yes' })).status).toBe(400);
  });

  it('answers the deployment configuration and refuses what it cannot honour', async () => {
    const read = await admin.request('GET', admin.app(appId, '/deploy/config'));
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ ui_drafts_disabled: true, automatic_deployment: { enabled: false, provider: 'github', installation_ids: [] } });
    expect((await admin.request('PATCH', admin.app(appId, '/deploy/config'), read.body)).status).toBe(204);
    for (const body of [{ ui_drafts_disabled: false }, { automatic_deployment: { enabled: true, provider: 'github', installation_ids: ['1'] } }]) {
      const response = await admin.request<ErrorBody>('PATCH', admin.app(appId, '/deploy/config'), body);
      expect(response.status, JSON.stringify(body)).toBe(501);
      expect(response.body.error_code).toBe('NotImplemented');
    }
    for (const body of [{ ui_drafts_disabled: 'yes' }, { automatic_deployment: { provider: 'gitlab' } }, { automatic_deployment: { installation_ids: [1] } }, { colour: 'red' }, [1]]) {
      expect((await admin.request('PATCH', admin.app(appId, '/deploy/config'), body)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('redeploys the configuration of an earlier deployment as a new one', async () => {
    const before = await admin.request<Array<{ _id: string; version: number }>>('GET', admin.app(appId, '/deployments'));
    expect((await admin.request('POST', admin.app(appId, '/security/allowed_request_origins'), ['https://first.example.com'])).status).toBe(204);
    const first = (await admin.request<Array<{ _id: string; version: number }>>('GET', admin.app(appId, '/deployments'))).body[0];
    expect((await admin.request('POST', admin.app(appId, '/security/allowed_request_origins'), ['https://second.example.com'])).status).toBe(204);
    const redeployed = await admin.request('POST', admin.app(appId, `/deployments/${first._id}/redeploy`));
    expect(redeployed.status, JSON.stringify(redeployed.body)).toBe(204);
    expect((await admin.request('GET', admin.app(appId, '/security/allowed_request_origins'))).body).toEqual(['https://first.example.com']);
    const after = await admin.request<Array<{ _id: string; version: number }>>('GET', admin.app(appId, '/deployments'));
    expect(after.body.length).toBe(before.body.length + 3);
    expect(after.body[0].version).toBe(first.version + 2);

    const unknown = await admin.request<ErrorBody>('POST', admin.app(appId, '/deployments/000000000000000000000000/redeploy'));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'deployment not found', error_code: 'DeploymentNotFound' });
  });

  it('lists the provider regions', async () => {
    const regions = await admin.request<Array<{ id: string; cloud_provider: string; deployment_models: string[] }>>('GET', '/provider_regions');
    expect(regions.status).toBe(200);
    expect(regions.body).toContainEqual({ id: 'aws-us-east-1', name: 'Virginia (us-east-1)', cloud_provider: 'aws', country: 'usa', deployment_models: ['GLOBAL', 'LOCAL'] });
    expect(new Set(regions.body.map((region) => region.cloud_provider))).toEqual(new Set(['aws', 'azure', 'gcp']));
  });

  it("refuses another group's app, an unknown app and a missing token on every operation", async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['PUT', '/environment', { environment: 'qa' }],
      ['GET', '/environment_values'],
      ['POST', '/environment_values', { name: 'x', values: {} }],
      ['GET', '/environment_values/x'],
      ['PUT', '/environment_values/x', { values: {} }],
      ['DELETE', '/environment_values/x'],
      ['GET', '/security/allowed_request_origins'],
      ['POST', '/security/allowed_request_origins', ['https://a.example.com']],
      ['GET', '/security/refresh_token_expiration'],
      ['PUT', '/security/refresh_token_expiration', { expiration_time_seconds: 60 * 24 * 60 * 60 }],
      ['GET', '/deploy/config'],
      ['PATCH', '/deploy/config', { ui_drafts_disabled: true }],
      ['POST', '/deployments/x/redeploy'],
      ['GET', '/deployment_migration'],
      ['PUT', '/deployment_migration', { deployment_model: 'LOCAL', provider_region: 'aws-us-east-2' }],
      ['POST', '/security/allow_non_vpc_client_requests', { allow_non_vpc_client_requests: true }],
    ];
    for (const [method, rest, body] of routes) {
      const foreignGroup = await admin.request(method, `/groups/another-group/apps/${foreignAppId}${rest}`, body);
      expect(foreignGroup.status, `${method} ${rest} (other group)`).toBe(404);
      const foreignApp = await admin.request(method, admin.app(foreignAppId, rest), body);
      expect(foreignApp.status, `${method} ${rest} (other group's app)`).toBe(404);
      const noToken = await admin.request(method, admin.app(appId, rest), body, { token: 'not-a-token' });
      expect(noToken.status, `${method} ${rest} (no token)`).toBe(401);
    }
    expect((await admin.request('GET', '/provider_regions', undefined, { token: 'not-a-token' })).status).toBe(401);
    expect((await admin.request('GET', admin.app('000000000000000000000000', '/environment_values'))).status).toBe(404);
  });
});
