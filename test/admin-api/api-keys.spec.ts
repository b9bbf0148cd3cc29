import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession, canonicalJson } from './admin-session';

type KeyView = { _id: string; name: string; disabled: boolean; key?: string };
type ErrorBody = { error: string; error_code: string };

// An App Services export whose clients log in with server API keys (the api-key provider only, as Data
// API and backend apps were): after the push the admin makes keys through App Services' `.../api_keys`, and
// a client logs in with one as realm-web's Credentials.apiKey does, then calls a function. Over real HTTP.
describe('admin API: server API keys of an imported app', () => {
  let host: TestHost;
  let admin: AdminSession;
  let app: { _id: string; client_app_id: string };

  const login = async (key: string | undefined): Promise<{ status: number; token?: string; userId?: string }> => {
    const response = await fetch(`${host.url}/api/client/v2.0/app/${app.client_app_id}/auth/providers/api-key/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key }) });
    const body = (await response.json()) as { access_token?: string; user_id?: string };
    return { status: response.status, token: body.access_token, userId: body.user_id };
  };
  const keys = (rest = '') => admin.app(app._id, `/api_keys${rest}`);

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: 'api-keys-test-password' } });
    admin = await AdminSession.login(host, 'admin', 'api-keys-test-password');
    app = await admin.createApp('backend-keys');
    const pushed = await admin.push(
      app._id,
      new Map([
        ['root_config.json', canonicalJson({ name: 'backend-keys', deployment_model: 'GLOBAL', provider_region: 'aws-us-east-1' })],
        ['auth/providers.json', canonicalJson({ 'api-key': { name: 'api-key', type: 'api-key', disabled: false } })],
        ['functions/config.json', canonicalJson([{ name: 'whoami', private: false }])],
        ['functions/whoami.js', 'exports = () => context.user.type;\n'],
      ]),
    );
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('creates a key whose secret is shown once, that logs in as a server user and calls a function', async () => {
    const created = await admin.request<KeyView>('POST', keys(), { name: 'reporting' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'reporting', disabled: false });
    expect(created.body._id).toMatch(/^[0-9a-f]{24}$/);
    expect(typeof created.body.key).toBe('string');

    const session = await login(created.body.key);
    expect(session.status).toBe(200);
    const call = await fetch(`${host.url}/api/client/v2.0/app/${app.client_app_id}/functions/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${session.token}` },
      body: JSON.stringify({ name: 'whoami', arguments: [] }),
    });
    expect(await call.json()).toBe('server');

    const listed = await admin.request<KeyView[]>('GET', keys());
    expect(listed.body).toEqual([{ _id: created.body._id, name: 'reporting', disabled: false }]);
    expect((await admin.request<KeyView>('GET', keys(`/${created.body._id}`))).body).toEqual({ _id: created.body._id, name: 'reporting', disabled: false });
  });

  it('refuses a second key of the same name and a name App Services would refuse', async () => {
    expect((await admin.request('POST', keys(), { name: 'twice' })).status).toBe(201);
    const again = await admin.request<ErrorBody>('POST', keys(), { name: 'twice' });
    expect(again.status).toBe(409);
    expect(again.body.error_code).toBe('APIKeyAlreadyExists');
    const bad = await admin.request<ErrorBody>('POST', keys(), { name: 'has spaces' });
    expect(bad.status).toBe(400);
    expect(bad.body.error_code).toBe('InvalidParameter');
  });

  it('disables, enables and deletes a key: a disabled or deleted key no longer logs in', async () => {
    const created = (await admin.request<KeyView>('POST', keys(), { name: 'rotating' })).body;
    expect((await admin.request('PUT', keys(`/${created._id}/disable`))).status).toBe(204);
    expect((await admin.request<KeyView>('GET', keys(`/${created._id}`))).body.disabled).toBe(true);
    expect((await login(created.key)).status).toBe(401);
    expect((await admin.request('PUT', keys(`/${created._id}/enable`))).status).toBe(204);
    const session = await login(created.key);
    expect(session.status).toBe(200);

    expect((await admin.request('DELETE', keys(`/${created._id}`))).status).toBe(204);
    expect((await login(created.key)).status).toBe(401);
    const gone = await admin.request<ErrorBody>('GET', keys(`/${created._id}`));
    expect(gone.status).toBe(404);
    expect(gone.body.error_code).toBe('APIKeyNotFound');
    expect((await admin.request('GET', admin.app(app._id, `/users/${session.userId}`))).status).toBe(404);
  });

  it('does not show a key a user made for itself among the server keys', async () => {
    const server = (await admin.request<KeyView>('POST', keys(), { name: 'owner' })).body;
    const response = await fetch(`${host.url}/api/client/v2.0/app/${app.client_app_id}/auth/providers/api-key/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: server.key }) });
    const { refresh_token: refreshToken } = (await response.json()) as { refresh_token: string };
    const own = await fetch(`${host.url}/api/client/v2.0/auth/api_keys`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${refreshToken}` }, body: JSON.stringify({ name: 'mine' }) });
    expect(own.status).toBe(201);
    const listed = (await admin.request<KeyView[]>('GET', keys())).body.map((k) => k.name);
    expect(listed).toContain('owner');
    expect(listed).not.toContain('mine');
    expect((await admin.request<ErrorBody>('GET', keys('/000000000000000000000000'))).status).toBe(404);
  });

  it('is refused without an admin token, and reaches neither a user-made key nor another app\'s keys', async () => {
    const server = (await admin.request<KeyView>('POST', keys(), { name: 'guarded' })).body;
    const forged = `${admin.accessToken.slice(0, -4)}AAAA`;
    const session = await login(server.key);
    for (const token of ['', 'not-a-jwt', forged, session.token ?? '']) {
      const refused = await admin.request<ErrorBody>('GET', keys(), undefined, { token });
      expect(refused.status, token).toBe(401);
      expect((await admin.request('POST', keys(), { name: 'intruder' }, { token })).status).toBe(401);
      expect((await admin.request('PUT', keys(`/${server._id}/disable`), undefined, { token })).status).toBe(401);
    }
    expect((await admin.request<KeyView>('GET', keys(`/${server._id}`))).body.disabled).toBe(false);
    expect((await admin.request<KeyView[]>('GET', keys())).body.map((k) => k.name)).not.toContain('intruder');

    // A key a user made for itself is not a server key: the admin's server-key routes do not reach it.
    const serverLogin = await fetch(`${host.url}/api/client/v2.0/app/${app.client_app_id}/auth/providers/api-key/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: server.key }) });
    const { refresh_token: refreshToken } = (await serverLogin.json()) as { refresh_token: string };
    const made = await fetch(`${host.url}/api/client/v2.0/auth/api_keys`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${refreshToken}` }, body: JSON.stringify({ name: 'personal' }) });
    expect(made.status).toBe(201);
    const personal = (await made.json()) as { _id: string; key: string };
    for (const [method, rest] of [['GET', ''], ['PUT', '/disable'], ['DELETE', '']] as const) {
      const answer = await admin.request<ErrorBody>(method, keys(`/${personal._id}${rest}`));
      expect(answer.status, `${method} ${rest}`).toBe(404);
      expect(answer.body.error_code).toBe('APIKeyNotFound');
    }
    expect((await login(personal.key)).status).toBe(200);

    // Another app's key is not found through this app's path.
    const other = await admin.createApp('other-keys');
    expect((await admin.request<ErrorBody>('GET', admin.app(other._id, `/api_keys/${server._id}`))).status).toBe(404);
    expect((await admin.request('DELETE', admin.app(other._id, `/api_keys/${server._id}`))).status).toBe(404);
    expect((await login(server.key)).status).toBe(200);

    expect((await admin.request<ErrorBody>('POST', keys(), { name: 'x'.repeat(257) })).status).toBe(400);
    expect((await admin.request<ErrorBody>('POST', keys(), { name: { $gt: '' } })).status).toBe(400);
  });
});
