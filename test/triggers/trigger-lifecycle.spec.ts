import { emptyApp, type AppConfig } from '@tessera/app-config';
import { AppRegistry, DeploymentStore } from '@tessera/platform';
import { join } from 'node:path';
import { deployTestApp, eventually, makeTempDir } from '@tessera/testing';
import * as Realm from 'realm-web';
import { AdminSession } from '../admin-api/admin-session';
import { tessera } from '../cli/tessera-cli';
// The real process host (every service in one process, in-process transport and durable stream), its admin
// API over HTTP and realm-web writing through the client API.
import { startTestHost, type TestHost } from '../support/test-host';

const password = 'trigger-lifecycle-password';

// Fails while ctl.switch says so; otherwise counts its runs per document and records the order it saw.
const flaky = `exports = async function (changeEvent) {
  const db = context.services.get('mongodb-atlas').db('shop');
  const control = await db.collection('ctl').findOne({ _id: 'switch' });
  if (control && control.fail) throw new Error('the function is broken');
  const n = changeEvent.fullDocument.n;
  await db.collection('seen').updateOne({ _id: n }, { $inc: { runs: 1 } }, { upsert: true });
  await db.collection('order').updateOne({ _id: 'order' }, { $push: { ns: n } }, { upsert: true });
};`;

// Records the event a filtered trigger got.
const recordEvent = `exports = async function (changeEvent) {
  await context.services.get('mongodb-atlas').db('shop').collection('filtered').insertOne({ event: changeEvent });
};`;

function lifecycleApp(app: AppConfig): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'LifecycleCluster' } },
    defaultRule: { roles: [{ name: 'everyone', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] },
    collectionRules: [],
    rules: [],
    webhooks: [],
  });
  app.functions.push({ config: { name: 'flaky', private: true }, source: flaky }, { config: { name: 'recordEvent', private: true }, source: recordEvent });
  const watch = (collection: string, extra: Record<string, unknown> = {}) => ({ service_name: 'mongodb-atlas', database: 'shop', collection, operation_types: ['INSERT'], full_document: true, ...extra });
  app.triggers.push(
    { name: 'flakyTrigger', type: 'DATABASE', function_name: 'flaky', config: watch('jobs'), disabled: false },
    { name: 'catchUp', type: 'DATABASE', function_name: 'flaky', config: watch('tasks'), disabled: false },
    { name: 'skipCatchUp', type: 'DATABASE', function_name: 'flaky', config: watch('chores', { skip_catchup_events: true }), disabled: false },
    {
      name: 'filtered',
      type: 'DATABASE',
      function_name: 'recordEvent',
      config: watch('events', { operation_types: ['INSERT', 'UPDATE'], full_document: false, match: { 'fullDocument.kind': 'wanted' }, project: { operationType: 1, 'fullDocument.kind': 1, 'fullDocument.n': 1, documentKey: 1 } }),
      disabled: false,
    },
  );
}

interface TriggerDocument {
  _id: string;
  name: string;
  disabled: boolean;
  error?: string;
  last_modified?: number;
}

describe('database trigger lifecycle (standalone)', () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let user: Realm.User;
  const cliHome = makeTempDir('tessera-trigger-cli-');
  const cliEnv = { TESSERA_CONFIG_DIR: join(cliHome.path, 'config') };

  const db = () => user.mongoClient('mongodb-atlas').db('shop');
  const triggers = async () => (await admin.request<TriggerDocument[]>('GET', admin.app(appId, '/triggers'))).body;
  const trigger = async (name: string) => (await triggers()).find((candidate) => candidate.name === name)!;
  const setFailing = (fail: boolean) => db().collection('ctl').updateOne({ _id: 'switch' }, { $set: { fail } }, { upsert: true });
  const runs = async (ns: number[]) => Object.fromEntries((await db().collection('seen').find({ _id: { $in: ns } })).map((doc) => [doc['_id'] as number, doc['runs'] as number]));
  const order = async () => ((await db().collection('order').findOne({ _id: 'order' }))?.['ns'] as number[] | undefined) ?? [];

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    admin = await AdminSession.login(host, 'admin', password);
    const stores = { apps: host.nest.get(AppRegistry), deployments: host.nest.get(DeploymentStore) };
    ({ appId } = await deployTestApp(stores, 'lifecycle', lifecycleApp, { groupId: admin.groupId }));
    const config = emptyApp('lifecycle');
    lifecycleApp(config);
    await host.redeploy(appId, config);
    const record = (await admin.request<{ client_app_id: string }>('GET', admin.app(appId))).body;
    user = await new Realm.App({ id: record.client_app_id, baseUrl: host.url }).logIn(Realm.Credentials.anonymous(false));
    await setFailing(false);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    cliHome.remove();
  });

  it('suspends a trigger whose function keeps failing, shows the error, and resumes it without losing or repeating a change', async () => {
    const jobs = db().collection('jobs');
    await jobs.insertOne({ n: 1 });
    await eventually(async () => expect(await runs([1])).toEqual({ 1: 1 }));
    expect((await trigger('flakyTrigger')).error).toBeUndefined();

    await setFailing(true);
    await jobs.insertOne({ n: 2 });
    const suspended = await eventually(async () => {
      const found = await trigger('flakyTrigger');
      expect(found.error).toContain('the function is broken');
      return found;
    }, { timeoutMs: 15_000 });
    expect(typeof suspended.last_modified).toBe('number');
    // Changes made while it is suspended wait for it.
    await jobs.insertMany([{ n: 3 }, { n: 4 }]);

    await setFailing(false);
    // An unreadable resume body is refused as App Services did.
    const bad = await admin.request<{ error: string; error_code: string }>('PUT', admin.app(appId, `/triggers/${suspended._id}/resume`), { disable_token: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error_code).toBe('InvalidParameter');
    expect((await admin.request('PUT', admin.app(appId, '/triggers/no-such-trigger/resume'), {})).status).toBe(404);
    // Without an administrator's token, with a forged one, or through another group: refused, and still suspended.
    const path = `/api/admin/v3.0${admin.app(appId, `/triggers/${suspended._id}/resume`)}`;
    expect((await fetch(`${host.url}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    expect((await admin.request('PUT', admin.app(appId, `/triggers/${suspended._id}/resume`), {}, { token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.forged' })).status).toBe(401);
    const foreign = await admin.request<{ error_code: string }>('PUT', `/groups/000000000000000000000000/apps/${appId}/triggers/${suspended._id}/resume`, {});
    expect([403, 404]).toContain(foreign.status);
    expect((await trigger('flakyTrigger')).error).toContain('the function is broken');

    expect((await admin.request('PUT', admin.app(appId, `/triggers/${suspended._id}/resume`), {})).status).toBe(204);
    await eventually(async () => expect(await runs([1, 2, 3, 4])).toEqual({ 1: 1, 2: 1, 3: 1, 4: 1 }), { timeoutMs: 15_000 });
    await eventually(async () => expect((await trigger('flakyTrigger')).error).toBeUndefined());
    await jobs.insertOne({ n: 5 });
    await eventually(async () => expect(await runs([5])).toEqual({ 5: 1 }));
    // The function records the order after counting its run.
    await eventually(async () => expect((await order()).filter((n) => n <= 5)).toEqual([1, 2, 3, 4, 5]));
  });

  it('resumes from now with disable_token: the changes since the failure are skipped', async () => {
    const jobs = db().collection('jobs');
    await setFailing(true);
    await jobs.insertOne({ n: 10 });
    const suspended = await eventually(async () => {
      const found = await trigger('flakyTrigger');
      expect(found.error).toContain('the function is broken');
      return found;
    }, { timeoutMs: 15_000 });
    await jobs.insertOne({ n: 11 });
    await setFailing(false);
    // The CLI (the built binary, as a user runs it) shows the suspension and resumes it from now.
    expect((await tessera(['login', '--url', host.url, '--username', 'admin', '--password', password], cliEnv)).code).toBe(0);
    const listed = await tessera(['triggers', 'list', '--remote', appId, '--json'], cliEnv);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { name: string; status: string; error?: string }[]).find((found) => found.name === 'flakyTrigger')).toMatchObject({ status: 'suspended', error: expect.stringContaining('the function is broken') });
    const table = await tessera(['triggers', 'list', '--remote', appId], cliEnv);
    expect(table.stdout).toMatch(/flakyTrigger\s+DATABASE\s+suspended\s+error executing function "flaky": the function is broken/);
    expect((await tessera(['triggers', 'resume', 'no-such-trigger', '--remote', appId], cliEnv)).code).not.toBe(0);
    const resumed = await tessera(['triggers', 'resume', 'flakyTrigger', '--from-now', '--remote', appId], cliEnv);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('resumed trigger flakyTrigger from now');
    expect(suspended._id).toBeDefined();
    await eventually(async () => expect((await trigger('flakyTrigger')).error).toBeUndefined());
    await jobs.insertOne({ n: 12 });
    await eventually(async () => expect(await runs([12])).toEqual({ 12: 1 }));
    expect(await runs([10, 11])).toEqual({});
  });

  it('stops a disabled trigger; enabling it catches up, unless it skips catch-up events', async () => {
    for (const name of ['catchUp', 'skipCatchUp']) {
      const found = await trigger(name);
      expect((await admin.request('PUT', admin.app(appId, `/triggers/${found._id}`), { disabled: true })).status).toBe(204);
    }
    await db().collection('tasks').insertOne({ n: 20 });
    await db().collection('chores').insertOne({ n: 30 });
    // A probe through another trigger shows both changes were handled while the two were disabled.
    await db().collection('jobs').insertOne({ n: 21 });
    await eventually(async () => expect(await runs([21])).toEqual({ 21: 1 }));
    expect(await runs([20, 30])).toEqual({});
    for (const name of ['catchUp', 'skipCatchUp']) {
      const found = await trigger(name);
      expect((await admin.request('PUT', admin.app(appId, `/triggers/${found._id}`), { disabled: false })).status).toBe(204);
    }
    await eventually(async () => expect(await runs([20])).toEqual({ 20: 1 }), { timeoutMs: 15_000 });
    await db().collection('chores').insertOne({ n: 31 });
    await eventually(async () => expect(await runs([31])).toEqual({ 31: 1 }));
    expect(await runs([30])).toEqual({});
  });

  it('gives a trigger only the changes it asked for: operation types, namespace, match and project', async () => {
    const events = db().collection('events');
    const { insertedId: unwanted } = await events.insertOne({ kind: 'other', n: 1, secret: 's' });
    const { insertedId: wanted } = await events.insertOne({ kind: 'wanted', n: 2, secret: 's' });
    await events.updateOne({ _id: wanted }, { $set: { n: 3 } });
    await events.deleteOne({ _id: wanted });
    await db().collection('elsewhere').insertOne({ kind: 'wanted', n: 4 });
    await events.updateOne({ _id: unwanted }, { $set: { kind: 'wanted' } });
    const filtered = db().collection('filtered');
    const found = await eventually(async () => {
      const all = await filtered.find({}, { sort: { _id: 1 } });
      expect(all).toHaveLength(1);
      return all;
    });
    // The insert matched; the update has no fullDocument (full_document: false), so `match` on it fails; the
    // delete is not an asked-for operation; the other collection is not watched. `project` kept only its fields.
    // `_id` (the resume token) stays, as a MongoDB projection keeps it.
    const event = found[0]['event'] as Record<string, unknown>;
    expect(Object.keys(event).sort()).toEqual(['_id', 'documentKey', 'fullDocument', 'operationType']);
    expect(event).toMatchObject({ operationType: 'insert', fullDocument: { kind: 'wanted', n: 2 }, documentKey: { _id: wanted } });
    // A later change that matches still arrives (nothing is stuck behind the filtered ones).
    await events.insertOne({ kind: 'wanted', n: 5 });
    await eventually(async () => expect(await filtered.count()).toBe(2));
  });
});
