import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LogStore, TriggerStates } from '@tessera/platform';
import { repositoryRoot } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession, canonicalJson } from './admin-session';

type ErrorBody = { error: string; error_code: string };
type Subscription = { _id: string; name: string; type: string; function_id?: string; function_name?: string; disabled: boolean; error?: string; config?: unknown };
type Measurements = { start: string; end: string; granularity: string; group_id: string; measurements: { name: string; units: string; data_points: { timestamp: string; value: number }[] }[] };

// An App Services export with flexible sync (test/fixtures/appservices-flexible), pushed as a user moves it
// in; then the read-only views this controller adds, over real HTTP, with what the other services would have
// written (function runs in the app's log, a suspended trigger, client logins) made the way they make it.
const FIXTURE = join(repositoryRoot, 'test', 'fixtures', 'appservices-flexible');
const PASSWORD = 'app-misc-test-password';

function exportFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name !== 'README.md') files.set(relative(FIXTURE, path), readFileSync(path, 'utf8'));
    }
  };
  walk(FIXTURE);
  return files;
}

describe('admin API: event subscriptions, devices, flexible sync information, group measurements', () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;
  let serviceId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: PASSWORD } });
    admin = await AdminSession.login(host, 'admin', PASSWORD);
    const app = await admin.createApp('taskboard');
    appId = app._id;
    clientAppId = app.client_app_id;
    const files = exportFiles();
    files.set('triggers/onTask.json', canonicalJson({ name: 'onTask', type: 'DATABASE', function_name: 'joinTeam', disabled: false, config: { service_name: 'mongodb-atlas', database: 'taskboard', collection: 'Task', operation_types: ['INSERT'] } }));
    files.set('triggers/nightly.json', canonicalJson({ name: 'nightly', type: 'SCHEDULED', function_name: 'joinTeam', disabled: true, config: { schedule: '0 0 * * *' } }));
    const pushed = await admin.push(appId, files);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    const services = await admin.request<{ _id: string; name: string }[]>('GET', admin.app(appId, '/services'));
    serviceId = services.body.find((service) => service.name === 'mongodb-atlas')!._id;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  describe('event subscriptions', () => {
    it('lists the triggers with their function and runtime state, filtered by type', async () => {
      await new TriggerStates(host.dataSources.platform()).suspend(appId, 'onTask', 'joinTeam threw: boom');
      const all = await admin.request<Subscription[]>('GET', admin.app(appId, '/event_subscriptions'));
      expect(all.status).toBe(200);
      const functions = await admin.request<{ _id: string; name: string }[]>('GET', admin.app(appId, '/functions'));
      const joinTeam = functions.body.find((fn) => fn.name === 'joinTeam')!._id;
      expect(all.body.map((subscription) => subscription.name).sort()).toEqual(['nightly', 'onTask']);
      expect(all.body.find((subscription) => subscription.name === 'onTask')).toMatchObject({ type: 'DATABASE', function_name: 'joinTeam', function_id: joinTeam, disabled: false, error: 'joinTeam threw: boom' });
      expect(all.body.find((subscription) => subscription.name === 'nightly')).toMatchObject({ type: 'SCHEDULED', disabled: true });
      const scheduled = await admin.request<Subscription[]>('GET', admin.app(appId, '/event_subscriptions?type=SCHEDULED'));
      expect(scheduled.body.map((subscription) => subscription.name)).toEqual(['nightly']);
      const auth = await admin.request<Subscription[]>('GET', admin.app(appId, '/event_subscriptions?type=AUTHENTICATION'));
      expect(auth.body).toEqual([]);
    });

    it('shows the sync translator only when asked for, enabled with the app flexible sync, and reads it back by id', async () => {
      const translators = await admin.request<Subscription[]>('GET', admin.app(appId, '/event_subscriptions?type=SYNCTRANSLATOR'));
      expect(translators.status).toBe(200);
      expect(translators.body).toHaveLength(1);
      expect(translators.body[0]).toMatchObject({ name: 'SyncTranslator', type: 'SYNCTRANSLATOR', function_id: '000000000000000000000000', disabled: false, config: null });
      expect(translators.body[0]._id).toMatch(/^[0-9a-f]{24}$/);
      const one = await admin.request<Subscription>('GET', admin.app(appId, `/event_subscriptions/${translators.body[0]._id}`));
      expect(one.body).toEqual(translators.body[0]);

      const plain = await admin.createApp('no-sync');
      const none = await admin.request<Subscription[]>('GET', admin.app(plain._id, '/event_subscriptions?type=SYNCTRANSLATOR'));
      expect(none.body).toEqual([]);
      // The translator id of one app is nothing in another.
      const foreign = await admin.request<ErrorBody>('GET', admin.app(plain._id, `/event_subscriptions/${translators.body[0]._id}`));
      expect(foreign.status).toBe(404);
    });

    it('gets a trigger subscription by id and by name', async () => {
      const all = await admin.request<Subscription[]>('GET', admin.app(appId, '/event_subscriptions'));
      const onTask = all.body.find((subscription) => subscription.name === 'onTask')!;
      const byId = await admin.request<Subscription>('GET', admin.app(appId, `/event_subscriptions/${onTask._id}`));
      expect(byId.status).toBe(200);
      expect(byId.body).toEqual(onTask);
      const byName = await admin.request<Subscription>('GET', admin.app(appId, '/event_subscriptions/onTask'));
      expect(byName.body).toEqual(onTask);
    });

    it("answers a trigger's latest run from the app's log, and none before it ran", async () => {
      const before = await admin.request<{ resource_id: string; completed_at: string | null }>('GET', admin.app(appId, '/event_subscriptions/nightly/execution'));
      expect(before.status).toBe(200);
      expect(before.body.completed_at).toBeNull();
      const logs = host.nest.get(LogStore, { strict: false });
      const started = new Date(Date.now() - 2000);
      await logs.append(appId, { type: 'SCHEDULED_TRIGGER', messages: [], started: started.toISOString(), completed: new Date(started.getTime() + 250).toISOString(), function_name: 'joinTeam', trigger_name: 'nightly', event_subscription_name: 'nightly' });
      // Another trigger's run, later, whose name contains this one's, is not this one's.
      await logs.append(appId, { type: 'SCHEDULED_TRIGGER', messages: [], started: new Date().toISOString(), completed: new Date().toISOString(), function_name: 'joinTeam', trigger_name: 'nightlyOther', event_subscription_name: 'nightlyOther' });
      const after = await admin.request<{ resource_id: string; completed_at: string; stats: { execution_time: string }; data: { type: string } }>('GET', admin.app(appId, '/event_subscriptions/nightly/execution'));
      expect(after.status).toBe(200);
      expect(after.body.completed_at).toBe(new Date(started.getTime() + 250).toISOString());
      expect(after.body.stats.execution_time).toBe('250ms');
      expect(after.body.data.type).toBe('SCHEDULED_TRIGGER');
    });

    it('refuses an unknown type, an unknown subscription, another group and no token', async () => {
      const badType = await admin.request<ErrorBody>('GET', admin.app(appId, '/event_subscriptions?type=WEBHOOK'));
      expect(badType.status).toBe(400);
      expect(badType.body.error_code).toBe('InvalidParameter');
      const twice = await admin.request<ErrorBody>('GET', admin.app(appId, '/event_subscriptions?type=DATABASE&type=SCHEDULED'));
      expect(twice.status).toBe(400);
      const unknown = await admin.request<ErrorBody>('GET', admin.app(appId, '/event_subscriptions/000000000000000000000001'));
      expect(unknown.status).toBe(404);
      expect(unknown.body.error_code).toBe('TriggerNotFound');
      const unknownRun = await admin.request<ErrorBody>('GET', admin.app(appId, '/event_subscriptions/nope/execution'));
      expect(unknownRun.status).toBe(404);
      const otherGroup = await admin.request<ErrorBody>('GET', `/groups/aaaaaaaaaaaaaaaaaaaaaaaa/apps/${appId}/event_subscriptions`);
      expect(otherGroup.status).toBe(404);
      expect(otherGroup.body.error_code).toBe('GroupNotFound');
      const noToken = await admin.request('GET', admin.app(appId, '/event_subscriptions'), undefined, { token: 'not-a-token' });
      expect(noToken.status).toBe(401);
    });
  });

  describe("a user's devices", () => {
    const login = async (email: string, password: string, deviceId?: string): Promise<number> => {
      const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/local-userpass/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: email, password, ...(deviceId ? { options: { device: { deviceId } } } : {}) }),
      });
      return response.status;
    };

    it('lists the devices the user logged in from, once each, most recently used first', async () => {
      const created = await admin.request<{ _id: string }>('POST', admin.app(appId, '/users'), { email: 'devices@example.com', password: 'secret-password' });
      expect(created.status).toBe(201);
      const userId = created.body._id;
      const empty = await admin.request<unknown[]>('GET', admin.app(appId, `/users/${userId}/devices`));
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual([]);
      const phone = '64a000000000000000000001';
      const laptop = '64a000000000000000000002';
      expect(await login('devices@example.com', 'secret-password', phone)).toBe(200);
      expect(await login('devices@example.com', 'secret-password', laptop)).toBe(200);
      expect(await login('devices@example.com', 'secret-password', phone)).toBe(200);
      const devices = await admin.request<{ _id: string; user_id: string; sessions: number }[]>('GET', admin.app(appId, `/users/${userId}/devices`));
      expect(devices.status).toBe(200);
      expect(devices.body.map((device) => [device._id, device.sessions]).sort()).toEqual([
        [phone, 2],
        [laptop, 1],
      ]);
      expect(devices.body.every((device) => device.user_id === userId)).toBe(true);
      // Logged out everywhere: no device holds a session.
      expect((await admin.request('PUT', admin.app(appId, `/users/${userId}/logout`))).status).toBe(204);
      expect((await admin.request<unknown[]>('GET', admin.app(appId, `/users/${userId}/devices`))).body).toEqual([]);
    });

    it('refuses an unknown user, another group and no token', async () => {
      const unknown = await admin.request<ErrorBody>('GET', admin.app(appId, '/users/000000000000000000000000/devices'));
      expect(unknown.status).toBe(404);
      expect(unknown.body.error_code).toBe('UserNotFound');
      expect((await admin.request('GET', `/groups/aaaaaaaaaaaaaaaaaaaaaaaa/apps/${appId}/users/000000000000000000000000/devices`)).status).toBe(404);
      expect((await admin.request('GET', admin.app(appId, '/users/000000000000000000000000/devices'), undefined, { token: 'x' })).status).toBe(401);
    });
  });

  describe("a user's email (reset_email)", () => {
    const login = async (email: string, password: string): Promise<number> =>
      (
        await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/local-userpass/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: email, password }),
        })
      ).status;

    it('moves an email/password user to a new email, password and id kept', async () => {
      const created = await admin.request<{ _id: string }>('POST', admin.app(appId, '/users'), { email: 'old@example.com', password: 'secret-password' });
      const userId = created.body._id;
      expect(await login('old@example.com', 'secret-password')).toBe(200);
      const changed = await admin.request('PATCH', admin.app(appId, `/users/${userId}/reset_email`), { email: 'new@example.com' });
      expect(changed.status).toBe(204);
      expect(await login('new@example.com', 'secret-password')).toBe(200);
      expect(await login('old@example.com', 'secret-password')).toBe(401);
      const user = await admin.request<{ _id: string; data: { email: string }; identities: { id: string; provider_type: string }[] }>('GET', admin.app(appId, `/users/${userId}`));
      expect(user.body.data.email).toBe('new@example.com');
      expect(user.body.identities.filter((identity) => identity.provider_type === 'local-userpass').map((identity) => identity.id)).toEqual(['new@example.com']);
      // The old email is free again for a new account.
      expect((await admin.request('POST', admin.app(appId, '/users'), { email: 'old@example.com', password: 'other-password' })).status).toBe(201);
    });

    it("refuses another user's email, a bad email, a user without an email identity and an unknown user", async () => {
      const first = await admin.request<{ _id: string }>('POST', admin.app(appId, '/users'), { email: 'first@example.com', password: 'secret-password' });
      await admin.request('POST', admin.app(appId, '/users'), { email: 'second@example.com', password: 'secret-password' });
      const path = admin.app(appId, `/users/${first.body._id}/reset_email`);
      const taken = await admin.request<ErrorBody>('PATCH', path, { email: 'second@example.com' });
      expect(taken.status).toBe(409);
      expect(taken.body.error_code).toBe('UserAlreadyExists');
      expect(await login('first@example.com', 'secret-password')).toBe(200);
      for (const body of [{}, { email: '' }, { email: 7 }, { email: 'x'.repeat(129) }, []]) {
        const refused = await admin.request<ErrorBody>('PATCH', path, body);
        expect(refused.status, JSON.stringify(body)).toBe(400);
        expect(refused.body.error_code).toBe('InvalidParameter');
      }
      const anonymous = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const anonymousId = ((await anonymous.json()) as { user_id: string }).user_id;
      expect((await admin.request<ErrorBody>('PATCH', admin.app(appId, `/users/${anonymousId}/reset_email`), { email: 'a@example.com' })).status).toBe(400);
      const unknown = await admin.request<ErrorBody>('PATCH', admin.app(appId, '/users/000000000000000000000000/reset_email'), { email: 'a@example.com' });
      expect(unknown.status).toBe(404);
      expect((await admin.request('PATCH', path, { email: 'b@example.com' }, { token: 'x' })).status).toBe(401);
    });
  });

  describe('flexible sync information of a data source', () => {
    it("answers the cluster and the app's flexible sync configuration, by service id or name", async () => {
      const info = await admin.request<Record<string, unknown>>('GET', admin.app(appId, `/service/${serviceId}/config`));
      expect(info.status).toBe(200);
      expect(info.body).toMatchObject({
        clusterId: serviceId,
        clusterType: 'atlas',
        flexible_sync: {
          state: 'enabled',
          database_name: 'taskboard',
          queryable_fields_names: ['owner_id', 'team_id'],
          indexed_queryable_fields_names: ['team_id'],
          collection_queryable_fields_names: { Task: ['status', 'due'] },
          asymmetric_tables: ['Log'],
          client_max_offline_days: 30,
          is_recovery_mode_disabled: false,
        },
      });
      const byName = await admin.request('GET', admin.app(appId, '/service/mongodb-atlas/config'));
      expect(byName.body).toEqual(info.body);
    });

    it('follows a change of the queryable fields', async () => {
      const patched = await admin.request('PATCH', admin.app(appId, `/services/${serviceId}/config`), { flexible_sync: { queryable_fields_names: ['owner_id', 'team_id', 'title'] } });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      const info = await admin.request<{ flexible_sync: { queryable_fields_names: string[] } }>('GET', admin.app(appId, `/service/${serviceId}/config`));
      expect(info.body.flexible_sync.queryable_fields_names).toEqual(['owner_id', 'team_id', 'title']);
    });

    it('answers an empty state for a cluster no sync uses', async () => {
      const plain = await admin.createApp('linked', { data_source: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } } });
      const info = await admin.request<Record<string, unknown>>('GET', admin.app(plain._id, '/service/mongodb-atlas/config'));
      expect(info.status).toBe(200);
      expect(info.body).toMatchObject({ clusterName: 'Cluster0', flexible_sync: { state: '' } });
    });

    it('refuses an unknown service, another group and no token', async () => {
      const unknown = await admin.request<ErrorBody>('GET', admin.app(appId, '/service/000000000000000000000000/config'));
      expect(unknown.status).toBe(404);
      expect(unknown.body.error_code).toBe('ServiceNotFound');
      expect((await admin.request('GET', `/groups/aaaaaaaaaaaaaaaaaaaaaaaa/apps/${appId}/service/${serviceId}/config`)).status).toBe(404);
      expect((await admin.request('GET', admin.app(appId, `/service/${serviceId}/config`), undefined, { token: 'x' })).status).toBe(401);
    });
  });

  describe('group measurements', () => {
    it("sums the requests and compute time of every app of the group, per period", async () => {
      const other = await admin.createApp('second');
      const logs = host.nest.get(LogStore, { strict: false });
      const at = (iso: string, ms: number) => ({ started: iso, completed: new Date(new Date(iso).getTime() + ms).toISOString() });
      await logs.append(appId, { type: 'FUNCTION', messages: [], ...at('2031-03-04T10:15:00.000Z', 360_000) });
      await logs.append(appId, { type: 'FUNCTION', messages: [], ...at('2031-03-04T11:20:00.000Z', 0) });
      await logs.append(other._id, { type: 'ENDPOINT', messages: [], ...at('2031-03-04T10:45:00.000Z', 720_000) });
      // A sync connection is not a request; another month is outside the range.
      await logs.append(other._id, { type: 'SYNC_CONNECTION_START', messages: [], ...at('2031-03-04T10:50:00.000Z', 0) });
      await logs.append(other._id, { type: 'FUNCTION', messages: [], ...at('2031-04-04T10:00:00.000Z', 0) });

      const month = await admin.request<Measurements>('GET', `/groups/${admin.groupId}/measurements?start=2031-03-01T00:00:00Z&end=2031-03-31T23:59:59Z`);
      expect(month.status).toBe(200);
      expect(month.body).toMatchObject({ granularity: 'P31D', group_id: admin.groupId, start: '2031-03-01T00:00:00.000Z', end: '2031-03-31T23:59:59.000Z' });
      const series = (body: Measurements, name: string) => body.measurements.find((measurement) => measurement.name === name)!;
      expect(series(month.body, 'request_count').data_points).toEqual([{ timestamp: '2031-03-01T00:00:00.000Z', value: 3 }]);
      expect(series(month.body, 'compute_time').units).toBe('HOURS');
      expect(series(month.body, 'compute_time').data_points[0].value).toBeCloseTo(0.3, 9);

      const hourly = await admin.request<Measurements>('GET', `/groups/${admin.groupId}/measurements?start=2031-03-04T10:00:00Z&end=2031-03-04T11:59:59Z&granularity=PT1H`);
      expect(hourly.status).toBe(200);
      expect(series(hourly.body, 'request_count').data_points).toEqual([
        { timestamp: '2031-03-04T10:00:00.000Z', value: 2 },
        { timestamp: '2031-03-04T11:00:00.000Z', value: 1 },
      ]);
    });

    it('refuses bad parameters, another group and no token', async () => {
      const path = `/groups/${admin.groupId}/measurements`;
      for (const query of ['?granularity=P1D', '?start=yesterday', '?start=2031-03-02T00:00:00Z&end=2031-03-01T00:00:00Z', '?start=2000-01-01T00:00:00Z&end=2031-01-01T00:00:00Z&granularity=PT1H', '?granularity=PT1H&granularity=P31D']) {
        const refused = await admin.request<ErrorBody>('GET', `${path}${query}`);
        expect(refused.status, query).toBe(400);
        expect(refused.body.error_code).toBe('InvalidParameter');
      }
      expect((await admin.request('GET', '/groups/aaaaaaaaaaaaaaaaaaaaaaaa/measurements')).status).toBe(404);
      expect((await admin.request('GET', path, undefined, { token: 'x' })).status).toBe(401);
    });
  });
});
