import WebSocket from 'ws';
import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession } from './admin-session';

type ErrorBody = { error: string; error_code: string };
type Entry = { _id: string; address: string; comment?: string; includes_current: boolean };

const PASSWORD = 'access-list-password';

// The IP access list over HTTP against the real host: the admin API's `security/access_list` (as realm-cli's
// `accessList` commands call it), and its effect on client requests (the client API, the Data API / HTTPS
// endpoint tree, the sync WebSocket), which come from 127.0.0.1 here.
describe('the IP access list', () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;
  let foreignAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: PASSWORD } });
    admin = await AdminSession.login(host, 'admin', PASSWORD);
    ({ _id: appId, client_app_id: clientAppId } = await admin.createApp('guarded'));
    expect((await admin.request('POST', admin.app(appId, '/auth_providers'), { name: 'anon-user', type: 'anon-user' })).status).toBe(201);
    foreignAppId = (await host.createApp('foreign-guarded', (app) => app, { groupId: 'another-group' })).appId;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const path = (rest = '') => admin.app(appId, `/security/access_list${rest}`);
  const list = async () => (await admin.request<{ allowed_ips: Entry[]; current_ip: string }>('GET', path())).body;
  const login = (headers: Record<string, string> = {}) =>
    fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
  const endpointTree = () => fetch(`${host.url}/app/${clientAppId}/endpoint/data/v1/action/find`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const syncUpgrade = (): Promise<number> =>
    new Promise((resolve) => {
      const socket = new WebSocket(`${host.url.replace(/^http/, 'ws')}/api/client/v2.0/app/${clientAppId}/realm-sync?baas_at=not-a-token`, ['com.mongodb.realm-query-sync#12']);
      socket.on('unexpected-response', (_request, response) => {
        resolve(response.statusCode ?? 0);
        socket.terminate();
      });
      socket.on('open', () => {
        resolve(101);
        socket.close();
      });
      socket.on('error', () => undefined);
    });

  it('serves every address while the list is empty, and lists nothing', async () => {
    expect(await list()).toEqual({ allowed_ips: [], current_ip: '127.0.0.1' });
    expect((await login()).status).toBe(200);
  });

  it('refuses client requests from an address the list does not hold, and serves them once it does', async () => {
    const created = await admin.request<Entry>('POST', path(), { address: '10.0.0.0/8', comment: 'office' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ address: '10.0.0.0/8', comment: 'office', includes_current: false });
    expect(created.body._id).toMatch(/^[0-9a-f]{24}$/);

    const refused = await login();
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toBe('application/json');
    expect(await refused.json()).toMatchObject({ error_code: 'IPAddressNotAllowed', error: expect.stringMatching(/127\.0\.0\.1 are not allowed/) as unknown });
    expect((await endpointTree()).status).toBe(403);
    expect(await syncUpgrade()).toBe(403);
    // Behind a proxy on a private address, the entry that proxy appended decides; what the client wrote before it never does.
    expect((await login({ 'x-forwarded-for': '203.0.113.9, 10.1.2.3' })).status).toBe(200);
    expect((await login({ 'x-forwarded-for': '10.1.2.3, 203.0.113.9' })).status).toBe(403);
    // The admin API is not behind the list.
    expect((await admin.request('GET', admin.app(appId, ''))).status).toBe(200);

    const mine = await admin.request<Entry>('POST', path(), { use_current: true, comment: 'this machine' });
    expect(mine.body).toMatchObject({ address: '127.0.0.1', includes_current: true });
    expect((await login()).status).toBe(200);
    expect((await endpointTree()).status).not.toBe(403);
    expect(await syncUpgrade()).toBe(401);
  });

  it('changes (PATCH and PUT) and removes entries, and a push that does not name the list keeps it', async () => {
    const [office, mine] = (await list()).allowed_ips;
    const patched = await admin.request<Entry>('PATCH', path(`/${office?._id}`), { address: '10.1.0.0/16' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ _id: office?._id, address: '10.1.0.0/16', comment: 'office' });
    expect((await admin.request('PUT', path(`/${office?._id}`), { comment: 'branch' })).status).toBe(204);
    expect((await list()).allowed_ips.find((entry) => entry._id === office?._id)).toMatchObject({ address: '10.1.0.0/16', comment: 'branch' });

    const files = await admin.pull(appId);
    const config = JSON.parse(files.get('config.json') ?? '{}') as { security?: Record<string, unknown> };
    delete config.security?.['ip_access_list'];
    files.set('config.json', JSON.stringify(config));
    expect((await admin.push(appId, files)).status).toBe(204);
    expect((await list()).allowed_ips).toHaveLength(2);

    expect((await admin.request('DELETE', path(`/${mine?._id}`))).status).toBe(204);
    expect((await login()).status).toBe(403);
    expect((await admin.request('DELETE', path(`/${office?._id}`))).status).toBe(204);
    expect((await login()).status).toBe(200);
  });

  it('refuses bad addresses, duplicates, unknown entries, another group and a missing token', async () => {
    for (const body of [{ address: 'example.com' }, { address: '10.0.0.0/33' }, {}, { address: 42 }, { address: '1.2.3.4', comment: 7 }]) {
      const refused = await admin.request<ErrorBody>('POST', path(), body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error_code).toBe('InvalidParameter');
    }
    expect((await admin.request('POST', path(), { address: '192.0.2.1' })).status).toBe(201);
    expect((await admin.request('POST', path(), { address: '192.0.2.1' })).status).toBe(400);
    const entry = (await list()).allowed_ips[0];
    expect((await admin.request('PATCH', path(`/${entry?._id}`), {})).status).toBe(400);
    expect((await admin.request<ErrorBody>('PATCH', path('/000000000000000000000000'), { comment: 'x' })).body.error_code).toBe('AccessListEntryNotFound');
    expect((await admin.request('DELETE', path('/000000000000000000000000'))).status).toBe(404);
    expect((await admin.request('GET', `/groups/another-group/apps/${foreignAppId}/security/access_list`)).status).toBe(404);
    expect((await admin.request('GET', path(), undefined, { token: 'not-a-token' })).status).toBe(401);
    expect((await admin.request('DELETE', path(`/${entry?._id}`))).status).toBe(204);
  });
});
