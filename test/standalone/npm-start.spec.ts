import { makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';

// `npm start` as a newcomer runs it: a fresh data directory, no external service. The build already ran
// (npm test builds first), so this measures start-up, not compilation.
describe('npm start on an empty data directory', () => {
  const dataDir = makeTempDir('tessera-start-');
  let server: ServerProcess;
  let appId: string;

  beforeAll(async () => {
    server = await startServerProcess({ command: ['npm', 'start', '--silent'], env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'start-test-password' } });
    appId = /app id (\S+)/.exec(server.output())![1]!;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  it('serves the example app location endpoint within 15 seconds', async () => {
    const response = await fetch(`${server.url}/api/client/v2.0/app/${appId}/location`);
    expect(server.readyAfterMs).toBeLessThan(15_000);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const port = new URL(server.url).port;
    expect(await response.json()).toEqual({
      deployment_model: 'GLOBAL',
      location: 'US-VA',
      hostname: `http://127.0.0.1:${port}`,
      ws_hostname: `ws://127.0.0.1:${port}`,
    });
  });

  it('prints the base URL, the app id and how to log in to the admin API', () => {
    const output = server.output();
    expect(output).toContain(`Tessera is running (standalone) at http://localhost:${server.port}`);
    expect(appId).toMatch(/^todo-[a-z]{5}$/);
    expect(output).toContain('/api/admin/v3.0/auth/providers/local-userpass/login');
    expect(output).not.toContain('start-test-password');
  });

  it('logs the configured admin in and shows its group in the profile', async () => {
    const login = await fetch(`${server.url}/api/admin/v3.0/auth/providers/local-userpass/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'start-test-password' }),
    });
    expect(login.status).toBe(200);
    const tokens = (await login.json()) as { access_token: string; refresh_token: string };
    expect(tokens.access_token.split('.')).toHaveLength(3);
    const profile = (await (await fetch(`${server.url}/api/admin/v3.0/auth/profile`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).json()) as { roles: { group_id: string }[] };
    const groupId = profile.roles[0].group_id;
    const apps = (await (await fetch(`${server.url}/api/admin/v3.0/groups/${groupId}/apps`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).json()) as { client_app_id: string }[];
    expect(apps.map((app) => app.client_app_id)).toEqual([appId]);
    const refreshed = await fetch(`${server.url}/api/admin/v3.0/auth/session`, { method: 'POST', headers: { authorization: `Bearer ${tokens.refresh_token}` } });
    expect(refreshed.status).toBe(201);
  });

  it('answers bad input with App Services error bodies', async () => {
    const unknownApp = await fetch(`${server.url}/api/client/v2.0/app/missing-abcde/location`);
    expect(unknownApp.status).toBe(404);
    expect(unknownApp.headers.get('content-type')).toBe('application/json');
    expect(await unknownApp.json()).toEqual({ error: "cannot find app using Client App ID 'missing-abcde'", error_code: 'AppNotFound' });

    const wrongPassword = await fetch(`${server.url}/api/admin/v3.0/auth/providers/local-userpass/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"admin","password":"nope"}' });
    expect(wrongPassword.status).toBe(401);
    expect(await wrongPassword.json()).toEqual({ error: 'invalid username/password', error_code: 'InvalidPassword' });

    const malformed = await fetch(`${server.url}/api/admin/v3.0/auth/providers/local-userpass/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error_code: string }).error_code).toBe('BadRequest');

    const noToken = await fetch(`${server.url}/api/admin/v3.0/auth/profile`);
    expect(noToken.status).toBe(401);
    expect(((await noToken.json()) as { error_code: string }).error_code).toBe('InvalidSession');
  });

  it('keeps the generated state across a restart: same app, no new password', async () => {
    await server.stop();
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path } });
    expect(server.output()).toContain(`app id ${appId}`);
    expect(server.output()).not.toContain('generated password');
    const response = await fetch(`${server.url}/api/client/v2.0/app/${appId}/location`);
    expect(response.status).toBe(200);
  });
});
