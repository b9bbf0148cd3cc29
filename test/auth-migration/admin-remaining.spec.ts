import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppConfig, emptyApp } from '@tessera/app-config';
import { eventually } from '@tessera/testing';
import * as Realm from 'realm-web';
import { AdminSession } from '../admin-api/admin-session';
import { startTestHost, type TestHost } from '../support/test-host';

const ADMIN_PASSWORD = 'remaining-admin-password';

/** The app of these tests: email/password users confirmed by a function, and functions that log. */
function appConfig(confirmStatus: 'pending' | 'success'): AppConfig {
  const app = emptyApp('registrations');
  app.functions.push(
    { config: { name: 'confirmUser', private: true }, source: `exports = () => ({ status: '${confirmStatus}' });` },
    { config: { name: 'say', private: true }, source: "exports = () => { console.log('hi'); return 1; };" },
    { config: { name: 'fail', private: true }, source: "exports = () => { throw new Error('boom'); };" },
  );
  app.authProviders.push({ name: 'local-userpass', type: 'local-userpass', config: { runConfirmationFunction: true, confirmationFunctionName: 'confirmUser', resetPasswordUrl: 'http://localhost/reset' } });
  app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'ForwardedLogs' } }, collectionRules: [], rules: [], webhooks: [] });
  return app;
}

// The admin API App Services had and Tessera answered 501 for or lacked: pending user registrations, log
// forwarders and app metrics, on the real host with the real function runtime.
describe('the remaining admin API', () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;
  const run = (name: string) => admin.request('POST', admin.app(appId, '/debug/execute_function?run_as_system=true'), { name, arguments: [] });

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: ADMIN_PASSWORD } });
    admin = await AdminSession.login(host, 'admin', ADMIN_PASSWORD);
    ({ appId, clientAppId } = await host.createApp('registrations', appConfig('pending'), { groupId: admin.groupId }));
  });

  afterAll(async () => {
    await host?.close();
  });

  describe('pending user registrations', () => {
    const realm = (): Realm.App => new Realm.App({ id: clientAppId, baseUrl: host.url });
    type Pending = { _id: string; domain_id: string; login_ids: Array<{ id_type: string; id: string }>; user_id: string };
    const pending = async (query = ''): Promise<Pending[]> => {
      const response = await admin.request<Pending[]>('GET', admin.app(appId, `/user_registrations/pending_users${query}`));
      expect(response.status).toBe(200);
      return response.body;
    };

    beforeAll(async () => {
      for (const email of ['ann@example.com', 'ben@example.com', 'cal@example.com']) await realm().emailPasswordAuth.registerUser({ email, password: 'password-123' });
    });

    it('lists registrations waiting for confirmation in App Services’ shape, 50 a page after an _id', async () => {
      const listed = await pending();
      expect(listed.map((user) => user.login_ids)).toEqual([[{ id_type: 'email', id: 'ann@example.com' }], [{ id_type: 'email', id: 'ben@example.com' }], [{ id_type: 'email', id: 'cal@example.com' }]]);
      for (const user of listed) expect(user).toEqual({ _id: expect.stringMatching(/^[0-9a-f]{24}$/), domain_id: expect.any(String), login_ids: expect.any(Array), user_id: '' });
      expect((await pending(`?after=${listed[0]._id}`)).map((user) => user.login_ids[0].id)).toEqual(['ben@example.com', 'cal@example.com']);
      const bad = await admin.request('GET', admin.app(appId, '/user_registrations/pending_users?after=not-an-id'));
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ error_code: 'InvalidParameter' });
      const anonymous = await fetch(`${admin.baseUrl}${admin.app(appId, '/user_registrations/pending_users')}`);
      expect(anonymous.status).toBe(401);
    });

    it('deletes a pending registration (204), then answers 404 for it', async () => {
      expect((await admin.request('DELETE', admin.app(appId, '/user_registrations/by_email/ann@example.com'))).status).toBe(204);
      expect((await pending()).map((user) => user.login_ids[0].id)).toEqual(['ben@example.com', 'cal@example.com']);
      const again = await admin.request('DELETE', admin.app(appId, '/user_registrations/by_email/ann@example.com'));
      expect(again.status).toBe(404);
      expect(again.body).toMatchObject({ error_code: 'UserNotFound' });
      // The email is free again.
      await realm().emailPasswordAuth.registerUser({ email: 'ann@example.com', password: 'password-456' });
    });

    it('confirms a pending user (204): it logs in, and a second confirm is refused', async () => {
      expect((await admin.request('POST', admin.app(appId, '/user_registrations/by_email/ben@example.com/confirm'))).status).toBe(204);
      expect((await realm().logIn(Realm.Credentials.emailPassword('ben@example.com', 'password-123'))).id).toMatch(/^[0-9a-f]{24}$/);
      expect((await pending()).map((user) => user.login_ids[0].id)).not.toContain('ben@example.com');
      const again = await admin.request('POST', admin.app(appId, '/user_registrations/by_email/ben@example.com/confirm'));
      expect(again.status).toBe(400);
    });

    it('reruns the confirmation function (202): pending stays pending, success confirms', async () => {
      expect((await admin.request('POST', admin.app(appId, '/user_registrations/by_email/cal@example.com/run_confirm'))).status).toBe(202);
      expect((await pending()).map((user) => user.login_ids[0].id)).toContain('cal@example.com');
      await host.redeploy(appId, appConfig('success'));
      expect((await admin.request('POST', admin.app(appId, '/user_registrations/by_email/cal@example.com/run_confirm'))).status).toBe(202);
      expect((await pending()).map((user) => user.login_ids[0].id)).not.toContain('cal@example.com');
      expect((await realm().logIn(Realm.Credentials.emailPassword('cal@example.com', 'password-123'))).id).toMatch(/^[0-9a-f]{24}$/);
      expect((await admin.request('POST', admin.app(appId, '/user_registrations/by_email/nobody@example.com/run_confirm'))).status).toBe(404);
    });
  });

  describe('log forwarders', () => {
    let receiver: Server;
    let receiverUrl: string;
    const received: unknown[] = [];
    type Forwarder = { _id: string; name: string; disabled: boolean };
    const toHttp = (url: string) => ({ name: 'errors-to-http', disabled: false, log_types: ['function'], log_statuses: ['error'], policy: { type: 'single' }, action: { type: 'http', url } });
    const toCollection = { name: 'all-to-collection', disabled: false, log_types: ['function'], log_statuses: ['success', 'error'], policy: { type: 'batch' }, action: { type: 'collection', data_source: 'mongodb-atlas', database: 'ops', collection: 'forwarded' } };
    const forwarded = () => host.dataSources.forService(appConfig('success'), 'mongodb-atlas').client.db('ops').collection('forwarded');

    beforeAll(async () => {
      receiver = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          received.push(JSON.parse(body));
          response.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/logs`;
    });

    afterAll(async () => {
      await new Promise((resolve) => receiver.close(resolve));
    });

    it('creates, lists, reads and validates forwarders as the OpenAPI spec shapes them', async () => {
      const created = await admin.request<Forwarder>('POST', admin.app(appId, '/log_forwarders'), toHttp(receiverUrl));
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ _id: expect.stringMatching(/^[0-9a-f]{24}$/), ...toHttp(receiverUrl) });
      expect((await admin.request('POST', admin.app(appId, '/log_forwarders'), toCollection)).status).toBe(201);
      const list = await admin.request<Forwarder[]>('GET', admin.app(appId, '/log_forwarders'));
      expect(list.body.map((forwarder) => forwarder.name)).toEqual(['all-to-collection', 'errors-to-http']);
      expect((await admin.request('GET', admin.app(appId, `/log_forwarders/${created.body._id}`))).body).toEqual(created.body);
      // Pull carries them as App Services' export did.
      expect(JSON.parse((await admin.pull(appId)).get('log_forwarders/errors-to-http.json') ?? '{}')).toMatchObject({ name: 'errors-to-http', action: { type: 'http' } });
      for (const [body, error] of [
        [{ ...toCollection, name: 'errors-to-http' }, /already exists/],
        [{ ...toCollection, log_types: ['nonsense'] }, /log_types/],
        [{ ...toCollection, action: { type: 'http', url: 'file:///etc/passwd' } }, /url/],
        [{ name: 'x' }, /disabled|log_types|invalid/],
      ] as const) {
        const refused = await admin.request<{ error: string; error_code: string }>('POST', admin.app(appId, '/log_forwarders'), body);
        expect(refused.status).toBe(400);
        expect(refused.body.error_code).toBe('InvalidParameter');
        expect(refused.body.error).toMatch(error);
      }
      const missing = await admin.request('GET', admin.app(appId, '/log_forwarders/000000000000000000000000'));
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ error_code: 'LogForwarderNotFound' });
    });

    it('forwards the matching entries: errors one by one to a URL, every function entry in batches to a collection', async () => {
      // Forwarders start from their first round: wait for the collection forwarder to have begun.
      const cursors = host.dataSources.platform().db('platform').collection('log_forwarder_cursors');
      await eventually(async () => expect(await cursors.countDocuments({})).toBe(2), { timeoutMs: 10_000 });
      expect((await run('say')).status).toBe(200);
      await run('fail');
      await eventually(async () => expect((await forwarded().find({}).toArray()).map((entry) => entry['error'] ?? entry['messages'])).toEqual(expect.arrayContaining([['hi'], 'boom'])), { timeoutMs: 15_000 });
      await eventually(async () => expect(received).toHaveLength(1), { timeoutMs: 15_000 });
      expect(received[0]).toMatchObject({ type: 'FUNCTION', function_name: 'fail', error: 'boom' });
    });

    it('updates with PATCH, disables and enables (204), deletes (204)', async () => {
      const [http] = (await admin.request<Forwarder[]>('GET', admin.app(appId, '/log_forwarders'))).body.filter((forwarder) => forwarder.name === 'errors-to-http');
      const patched = await admin.request<Forwarder & { policy: { type: string } }>('PATCH', admin.app(appId, `/log_forwarders/${http._id}`), { ...toHttp(receiverUrl), policy: { type: 'batch' } });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ _id: http._id, policy: { type: 'batch' } });
      expect((await admin.request('PUT', admin.app(appId, `/log_forwarders/${http._id}/disable`))).status).toBe(204);
      expect((await admin.request<Forwarder>('GET', admin.app(appId, `/log_forwarders/${http._id}`))).body.disabled).toBe(true);
      // While disabled it forwards nothing, and enabling it does not deliver what was logged meanwhile.
      const before = await forwarded().countDocuments({});
      await run('fail');
      await eventually(async () => expect(await forwarded().countDocuments({})).toBe(before + 1), { timeoutMs: 15_000 });
      expect((await admin.request('PUT', admin.app(appId, `/log_forwarders/${http._id}/enable`))).status).toBe(204);
      await run('fail');
      await eventually(async () => expect(received).toHaveLength(2), { timeoutMs: 15_000 });
      expect(received[1]).toEqual([expect.objectContaining({ error: 'boom' })]);
      expect((await admin.request('DELETE', admin.app(appId, `/log_forwarders/${http._id}`))).status).toBe(204);
      expect((await admin.request('GET', admin.app(appId, `/log_forwarders/${http._id}`))).status).toBe(404);
    });
  });

  describe('metrics', () => {
    let meteredId: string;
    const get = <T>(path: string) => admin.request<T>('GET', admin.app(meteredId, path));

    beforeAll(async () => {
      ({ appId: meteredId } = await host.createApp('metered', appConfig('success'), { groupId: admin.groupId }));
      const call = (name: string) => admin.request('POST', admin.app(meteredId, '/debug/execute_function?run_as_system=true'), { name, arguments: [] });
      for (const name of ['say', 'say', 'say', 'fail']) await call(name);
      await eventually(async () => expect((await get<{ logs: unknown[] }>('/logs')).body.logs).toHaveLength(4), { timeoutMs: 10_000 });
    });

    it('answers GET .../metrics by hour with function executions, successes and failures', async () => {
      const start = new Date(Date.now() - 3 * 3_600_000).toISOString();
      const end = new Date(Date.now() + 60_000).toISOString();
      const answer = await get<{ app_id: string; granularity: string; measurements: Array<{ name: string; units: string; data_points: Array<{ timestamp: string; value: number }> }> }>(`/metrics?start=${start}&end=${end}&granularity=PT1H&metrics=SDK_SUCCESSFUL_REQUESTS&metrics=SDK_FAILED_REQUESTS,OVERALL_COMPUTE_MS`);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ app_id: meteredId, app_name: 'metered', group_id: admin.groupId, granularity: 'PT1H', start, end });
      const byName = new Map(answer.body.measurements.map((measurement) => [measurement.name, measurement]));
      expect([...byName.keys()]).toEqual(['SDK_SUCCESSFUL_REQUESTS', 'SDK_FAILED_REQUESTS', 'OVERALL_COMPUTE_MS']);
      const total = (name: string) => byName.get(name)!.data_points.reduce((sum, point) => sum + point.value, 0);
      expect(total('SDK_SUCCESSFUL_REQUESTS')).toBe(3);
      expect(total('SDK_FAILED_REQUESTS')).toBe(1);
      expect(byName.get('OVERALL_COMPUTE_MS')!.units).toBe('MILLISECONDS');
      const points = byName.get('SDK_SUCCESSFUL_REQUESTS')!.data_points;
      expect(points.length).toBeGreaterThanOrEqual(4);
      for (const point of points) expect(new Date(point.timestamp).getTime() % 3_600_000).toBe(0);
    });

    it('answers GET .../measurements (billing) for the month and by hour', async () => {
      const month = await get<{ granularity: string; appId: string; measurements: Array<{ name: string; units: string; data_points: Array<{ value: number }> }> }>('/measurements');
      expect(month.status).toBe(200);
      expect(month.body).toMatchObject({ granularity: 'P31D', appId: meteredId, appName: 'metered', group_id: admin.groupId });
      const requests = month.body.measurements.find((measurement) => measurement.name === 'request_count')!;
      expect(requests.data_points).toHaveLength(1);
      expect(requests.data_points[0].value).toBe(4);
      expect(month.body.measurements.find((measurement) => measurement.name === 'compute_time')!.units).toBe('HOURS');
      const hourly = await get<{ measurements: Array<{ name: string; data_points: Array<{ value: number }> }> }>(`/measurements?granularity=PT1H&start=${new Date(Date.now() - 3_600_000).toISOString()}&end=${new Date(Date.now() + 60_000).toISOString()}`);
      expect(hourly.body.measurements[0].data_points.reduce((sum, point) => sum + point.value, 0)).toBe(4);
    });

    it.each([
      ['no start', '/metrics?end=2026-01-02T00:00:00Z&granularity=PT1H', /required/],
      ['a bad granularity', '/metrics?start=2026-01-01T00:00:00Z&end=2026-01-02T00:00:00Z&granularity=hourly', /granularity/],
      ['a metric nothing records', '/metrics?start=2026-01-01T00:00:00Z&end=2026-01-02T00:00:00Z&granularity=PT1H&metrics=SYNC_MINUTES', /SYNC_MINUTES/],
      ['an end before the start', '/metrics?start=2026-01-02T00:00:00Z&end=2026-01-01T00:00:00Z&granularity=PT1H', /before/],
      ['too many periods', '/metrics?start=2000-01-01T00:00:00Z&end=2026-01-01T00:00:00Z&granularity=PT1M', /periods/],
      ['a bad measurements granularity', '/measurements?granularity=PT5M', /P31D or PT1H/],
    ])('refuses %s with 400 InvalidParameter', async (_what, path, error) => {
      const answer = await get<{ error: string; error_code: string }>(path);
      expect(answer.status).toBe(400);
      expect(answer.body.error_code).toBe('InvalidParameter');
      expect(answer.body.error).toMatch(error);
    });
  });
});
