import WebSocket from 'ws';
import { eventually, makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';
import { AdminSession } from './admin-session';

interface SessionView {
  _id: string;
  device_id: string;
  created: number;
  last_used: number;
  expires: number;
}
interface LogEntry {
  _id: string;
  type: string;
  user_id?: string;
  error?: string;
  messages: string[];
  started: string;
  [field: string]: unknown;
}
interface Measurement {
  name: string;
  units: string;
  data_points: { timestamp: string; value: number }[];
}

// What the console's users, logs and metrics pages read: a user's sessions and custom data, the logs
// endpoint's filters, and the sync connection and trigger lag metrics, over HTTP against the built server.
describe('admin API: user sessions and custom data, log filters, sync and trigger metrics', () => {
  const dataDir = makeTempDir('tessera-admin-ulm-');
  let server: ServerProcess;
  let admin: AdminSession;
  let app: { _id: string; client_app_id: string };

  const client = async (path: string, body: unknown, token?: string): Promise<{ status: number; body: Record<string, string> }> => {
    const response = await fetch(`${server.url}/api/client/v2.0/app/${app.client_app_id}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, string> };
  };
  const login = async () => (await client('/auth/providers/anon-user/login', {})).body as { access_token: string; refresh_token: string; user_id: string };
  /** `POST /api/client/v2.0/auth/session` with a refresh token: 201 while its session lasts, else 401. */
  const refresh = async (refreshToken: string): Promise<number> => (await fetch(`${server.url}/api/client/v2.0/auth/session`, { method: 'POST', headers: { authorization: `Bearer ${refreshToken}` } })).status;
  const logs = (query: string) => admin.request<{ logs: LogEntry[]; nextEndDate?: string; nextSkip?: number; error_code?: string; error?: string }>('GET', admin.app(app._id, `/logs?${query}`));
  const runAsSystem = (appId: string, name: string, args: unknown[] = []) => admin.request('POST', admin.app(appId, '/debug/execute_function?run_as_system=true'), { name, arguments: args });

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'admin-test-password', TESSERA_EXAMPLE_APP: '' } });
    admin = await AdminSession.login(server, 'admin', 'admin-test-password');
    app = await admin.createApp('ulm', { template_id: 'web.mql.todo' });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  it("lists a user's sessions without their tokens, revokes one (its refresh token stops working) and leaves the other", async () => {
    const first = await login();
    const user = first.user_id;
    expect(await refresh(first.refresh_token)).toBe(201);
    const listed = await admin.request<SessionView[]>('GET', admin.app(app._id, `/users/${user}/sessions`));
    expect(listed.status).toBe(200);
    expect(listed.body).toHaveLength(1);
    const [session] = listed.body;
    expect(Object.keys(session).sort()).toEqual(['_id', 'created', 'device_id', 'expires', 'last_used']);
    expect(session.last_used).toBeGreaterThanOrEqual(session.created);
    expect(session.expires).toBeGreaterThan(session.created);
    expect(JSON.stringify(listed.body)).not.toContain(first.refresh_token.split('.')[2]);

    // Two sessions of one email/password user: revoke one.
    expect((await admin.request('POST', admin.app(app._id, '/users'), { email: 'two@example.com', password: 'two-sessions' })).status).toBe(201);
    const a = (await client('/auth/providers/local-userpass/login', { username: 'two@example.com', password: 'two-sessions' })).body;
    const b = (await client('/auth/providers/local-userpass/login', { username: 'two@example.com', password: 'two-sessions' })).body;
    const sessions = (await admin.request<SessionView[]>('GET', admin.app(app._id, `/users/${a.user_id}/sessions`))).body;
    expect(sessions).toHaveLength(2);
    // Newest first: b's session.
    expect((await admin.request('DELETE', admin.app(app._id, `/users/${a.user_id}/sessions/${sessions[0]._id}`))).status).toBe(204);
    expect(await refresh(b.refresh_token)).toBe(401);
    expect(await refresh(a.refresh_token)).toBe(201);
    expect((await admin.request<SessionView[]>('GET', admin.app(app._id, `/users/${a.user_id}/sessions`))).body.map((left) => left._id)).toEqual([sessions[1]._id]);

    // Revoke all (realm-cli's logout): no session left.
    expect((await admin.request('PUT', admin.app(app._id, `/users/${a.user_id}/logout`))).status).toBe(204);
    expect((await admin.request<SessionView[]>('GET', admin.app(app._id, `/users/${a.user_id}/sessions`))).body).toEqual([]);
    expect(await refresh(a.refresh_token)).toBe(401);
  });

  it('refuses an unknown user or session, and a session of another user, with 404 and the error body', async () => {
    const one = await login();
    const other = await login();
    const [otherSession] = (await admin.request<SessionView[]>('GET', admin.app(app._id, `/users/${other.user_id}/sessions`))).body;
    const missingUser = await admin.request('GET', admin.app(app._id, '/users/000000000000000000000000/sessions'));
    expect(missingUser).toMatchObject({ status: 404, body: { error: "user not found: '000000000000000000000000'", error_code: 'UserNotFound' } });
    const missingSession = await admin.request('DELETE', admin.app(app._id, `/users/${one.user_id}/sessions/000000000000000000000000`));
    expect(missingSession).toMatchObject({ status: 404, body: { error: "session not found: '000000000000000000000000'", error_code: 'SessionNotFound' } });
    const notTheirs = await admin.request('DELETE', admin.app(app._id, `/users/${one.user_id}/sessions/${otherSession._id}`));
    expect(notTheirs).toMatchObject({ status: 404, body: { error_code: 'SessionNotFound' } });
    // The other user's session survived the attempt.
    expect(await refresh(other.refresh_token)).toBe(201);
    expect((await admin.request('GET', admin.app(app._id, '/users/000000000000000000000000/custom_data'))).status).toBe(404);
  });

  it("shows a user's custom data document when the app reads one, as canonical EJSON", async () => {
    const user = await login();
    const disabled = await admin.request('GET', admin.app(app._id, `/users/${user.user_id}/custom_data`));
    expect(disabled).toMatchObject({ status: 200, body: { enabled: false, document: null } });

    const services = await admin.request<{ _id: string; name: string }[]>('GET', admin.app(app._id, '/services'));
    const atlas = services.body.find((service) => service.name === 'mongodb-atlas')!;
    expect((await admin.request('PATCH', admin.app(app._id, '/custom_user_data'), { enabled: true, mongo_service_id: atlas._id, database_name: 'todo', collection_name: 'custom', user_id_field: 'user_id' })).status).toBe(204);
    const none = await admin.request('GET', admin.app(app._id, `/users/${user.user_id}/custom_data`));
    expect(none.body).toEqual({ enabled: true, namespace: 'todo.custom', user_id_field: 'user_id', document: null });

    const source = "exports = (id) => context.services.get('mongodb-atlas').db('todo').collection('custom').insertOne({ user_id: id, favourite: 'tea', cups: 3 });";
    expect((await admin.request('POST', admin.app(app._id, '/functions'), { name: 'writeCustom', source, private: true })).status).toBe(201);
    expect((await runAsSystem(app._id, 'writeCustom', [user.user_id])).status).toBe(200);
    const found = await admin.request<{ document: Record<string, unknown> }>('GET', admin.app(app._id, `/users/${user.user_id}/custom_data`));
    expect(found.body.document).toMatchObject({ user_id: user.user_id, favourite: 'tea', cups: { $numberInt: '3' }, _id: { $oid: expect.any(String) as string } });
  });

  it('filters the logs by user_id and by text on the server, with App Services pagination', async () => {
    const source = "exports = (word) => { console.log('said ' + word); if (word === 'fail') throw new Error('failed on purpose'); return word; };";
    expect((await admin.request('POST', admin.app(app._id, '/functions'), { name: 'say', source })).status).toBe(201);
    const ada = await login();
    const bob = await login();
    const call = (token: string, word: string) => client('/functions/call', { name: 'say', arguments: [word] }, token);
    expect((await call(ada.access_token, 'marmalade')).status).toBe(200);
    expect((await call(ada.access_token, 'a.b(c')).status).toBe(200);
    expect((await call(bob.access_token, 'porridge')).status).toBe(200);
    expect((await call(bob.access_token, 'fail')).status).toBe(400);
    await eventually(async () => expect((await logs(`type=FUNCTION&user_id=${bob.user_id}`)).body.logs).toHaveLength(2));

    const adas = (await logs(`user_id=${ada.user_id}`)).body.logs;
    expect(adas.map((entry) => entry.messages[0]).sort()).toEqual(['said a.b(c', 'said marmalade']);
    expect(adas.every((entry) => entry.user_id === ada.user_id)).toBe(true);
    // Text: case-insensitive, in messages or the error; regular expression characters are literal.
    expect((await logs('text=MARMALADE')).body.logs.map((entry) => entry.messages[0])).toEqual(['said marmalade']);
    expect((await logs('text=a.b(c')).body.logs.map((entry) => entry.messages[0])).toEqual(['said a.b(c']);
    expect((await logs('text=a.b.c')).body.logs).toEqual([]);
    expect((await logs('text=on%20purpose')).body.logs.map((entry) => entry.error)).toEqual(['failed on purpose']);
    expect((await logs(`text=porridge&user_id=${ada.user_id}`)).body.logs).toEqual([]);
    // errors_only with any value means errors only, as App Services reads it.
    expect((await logs(`errors_only=false&user_id=${bob.user_id}`)).body.logs.map((entry) => entry.error)).toEqual(['failed on purpose']);

    // A full page says where the next one ends; following it reaches every entry once.
    const all = (await logs(`user_id=${ada.user_id}`)).body.logs.map((entry) => entry._id);
    const first = await logs(`user_id=${ada.user_id}&limit=1`);
    expect(first.body.logs).toHaveLength(1);
    expect(first.body.nextEndDate).toBe(first.body.logs[0].started);
    const second = await logs(`user_id=${ada.user_id}&limit=1&end_date=${encodeURIComponent(first.body.nextEndDate!)}&skip=${first.body.nextSkip}`);
    expect([...first.body.logs, ...second.body.logs].map((entry) => entry._id).sort()).toEqual([...all].sort());
    expect((await logs(`user_id=${ada.user_id}&limit=5`)).body).not.toHaveProperty('nextEndDate');
    // start_date is exclusive, end_date inclusive.
    const [newest, older] = (await logs(`user_id=${ada.user_id}`)).body.logs;
    expect((await logs(`user_id=${ada.user_id}&start_date=${encodeURIComponent(older.started)}`)).body.logs.map((entry) => entry._id)).toEqual(newest.started === older.started ? [] : [newest._id]);
    expect((await logs(`user_id=${ada.user_id}&end_date=${encodeURIComponent(older.started)}`)).body.logs.map((entry) => entry._id)).toContain(older._id);
  });

  it.each([
    ['limit=0', 'limit must be an integer of at least 1'],
    ['limit=ten', 'limit must be an integer of at least 1'],
    ['skip=-1', 'skip must be an integer of at least 0'],
    ['start_date=yesterday', 'start_date must be an ISO 8601 date'],
    ['end_date=2024-13-45T00:00:00Z', 'end_date must be an ISO 8601 date'],
    ['start_date=2024-02-01T00:00:00Z&end_date=2024-01-01T00:00:00Z', 'end_date must be after start_date'],
    ['user_id=a&user_id=b', 'user_id may be given once'],
    [`text=${'x'.repeat(201)}`, 'text may be at most 200 characters'],
  ])('refuses the logs query %s with 400 InvalidParameter', async (query, message) => {
    const response = await logs(query);
    expect(response.status).toBe(400);
    expect(response.body.error_code).toBe('InvalidParameter');
    expect(response.body.error).toContain(message);
  });

  it('charts sync connections over time from their start and end, and leaves them out of requests', async () => {
    const user = await login();
    const metrics = async () => {
      const end = new Date(Date.now() + 60_000);
      const start = new Date(end.getTime() - 3_600_000);
      const query = new URLSearchParams({ start: start.toISOString(), end: end.toISOString(), granularity: 'PT1H', metrics: 'ACTIVE_OPEN_SYNC_SESSIONS,SYNC_SESSIONS_STARTED,SYNC_SESSIONS_ENDED,OVERALL_SUCCESSFUL_REQUESTS' });
      const response = await admin.request<{ measurements: Measurement[] }>('GET', admin.app(app._id, `/metrics?${query.toString()}`));
      expect(response.status).toBe(200);
      const total = (name: string) => response.body.measurements.find((measurement) => measurement.name === name)!.data_points.reduce((sum, point) => sum + point.value, 0);
      return { open: total('ACTIVE_OPEN_SYNC_SESSIONS'), started: total('SYNC_SESSIONS_STARTED'), ended: total('SYNC_SESSIONS_ENDED'), requests: total('OVERALL_SUCCESSFUL_REQUESTS') };
    };
    const before = await metrics();
    expect(before).toMatchObject({ open: 0, started: 0, ended: 0 });
    const url = `${server.url.replace(/^http/, 'ws')}/api/client/v2.0/app/${app.client_app_id}/realm-sync?baas_at=${user.access_token}`;
    const sockets = await Promise.all([0, 1].map(() => openSocket(url)));
    await eventually(async () => expect(await metrics()).toMatchObject({ open: 2, started: 2, ended: 0, requests: before.requests }));
    await closeSocket(sockets[0]);
    await eventually(async () => expect(await metrics()).toMatchObject({ open: 2, started: 2, ended: 1 }));
    const entries = (await logs(`type=SYNC_CONNECTION_START,SYNC_CONNECTION_END&user_id=${user.user_id}`)).body.logs;
    expect(entries.map((entry) => entry.type).sort()).toEqual(['SYNC_CONNECTION_END', 'SYNC_CONNECTION_START', 'SYNC_CONNECTION_START']);
    await closeSocket(sockets[1]);
    await eventually(async () => expect(await metrics()).toMatchObject({ ended: 2 }));
  });

  it("records each database trigger run's lag from its change and charts it as a sum and a maximum", async () => {
    const shop = await admin.createApp('ulm-shop', { template_id: 'triggers' });
    const source = "exports = (n) => context.services.get('mongodb-atlas').db('shop').collection('orders').insertOne({ n });";
    expect((await admin.request('POST', admin.app(shop._id, '/functions'), { name: 'order', source, private: true })).status).toBe(201);
    for (const n of [1, 2, 3]) expect((await runAsSystem(shop._id, 'order', [n])).status).toBe(200);
    const runs = await eventually(async () => {
      const listed = (await admin.request<{ logs: LogEntry[] }>('GET', admin.app(shop._id, '/logs?type=DB_TRIGGER'))).body.logs;
      expect(listed).toHaveLength(3);
      return listed;
    });
    for (const run of runs) {
      expect(run['lag_ms']).toEqual(expect.any(Number));
      expect(new Date(run.started).getTime() - new Date(String(run['event_time'])).getTime()).toBe(run['lag_ms']);
    }
    const lags = runs.map((run) => run['lag_ms'] as number);
    const end = new Date(Date.now() + 60_000);
    const query = new URLSearchParams({ start: new Date(end.getTime() - 86_400_000).toISOString(), end: end.toISOString(), granularity: 'P1D', metrics: 'TRIGGERS_CURRENT_OPLOG_LAG_MS_SUM,TRIGGERS_MAX_LAG_MS' });
    const measured = await admin.request<{ measurements: Measurement[] }>('GET', admin.app(shop._id, `/metrics?${query.toString()}`));
    const [sum, max] = measured.body.measurements;
    expect(sum).toMatchObject({ name: 'TRIGGERS_CURRENT_OPLOG_LAG_MS_SUM', units: 'MILLISECONDS' });
    expect(sum.data_points.reduce((total, point) => total + point.value, 0)).toBe(lags.reduce((total, lag) => total + lag, 0));
    expect(Math.max(...max.data_points.map((point) => point.value))).toBe(Math.max(...lags));
  });

  it('refuses every new endpoint without a valid admin session, with App Services body', async () => {
    const user = await login();
    const [session] = (await admin.request<SessionView[]>('GET', admin.app(app._id, `/users/${user.user_id}/sessions`))).body;
    const calls: [string, string][] = [
      ['GET', admin.app(app._id, `/users/${user.user_id}/sessions`)],
      ['DELETE', admin.app(app._id, `/users/${user.user_id}/sessions/${session._id}`)],
      ['GET', admin.app(app._id, `/users/${user.user_id}/custom_data`)],
      ['GET', admin.app(app._id, `/logs?user_id=${user.user_id}&text=x`)],
      ['GET', admin.app(app._id, `/metrics?start=2024-01-01T00:00:00Z&end=2024-01-02T00:00:00Z&granularity=PT1H&metrics=ACTIVE_OPEN_SYNC_SESSIONS`)],
    ];
    for (const [method, path] of calls) {
      for (const token of [undefined, 'not-a-token', user.access_token]) {
        const response = await fetch(`${admin.baseUrl}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
        expect(response.status, `${method} ${path}`).toBe(401);
        expect(await response.json()).toEqual({ error: expect.any(String) as string, error_code: 'InvalidSession' });
      }
    }
    // The session is still there: nothing was revoked by the refused calls.
    expect(await refresh(user.refresh_token)).toBe(201);
  });
});

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['com.mongodb.realm-query-sync#14']);
    ws.on('open', () => resolve(ws));
    ws.on('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
    ws.on('error', reject);
  });
}

function closeSocket(ws: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    ws.on('close', () => resolve());
    ws.close();
  });
}
