import { type AppConfig } from '@tessera/app-config';
import { type DataSourceClient } from '@tessera/datastore';
import { eventually } from '@tessera/testing';
import { startTestHost, type TestHost } from '../../support/test-host';
import { RealmDevice, realmSdkSkipReason } from './realm-client';

// The session controls the Realm JS SDK 12.15.0 gives an app, over flexible sync: pause() and resume(),
// uploadAllLocalChanges() and downloadAllServerChanges(), and progress notifications. Each is asserted by what
// it promises: nothing moves while paused and everything moves after resume; an acknowledged upload is in the
// collection and in another device's next download; download progress reaches completion when the objects do.

const CLUSTER = 'session-cluster';

const everyone = { name: 'everyone', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true, insert: true, delete: true, search: true };

function sessionApp(app: AppConfig): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: CLUSTER } }, collectionRules: [], defaultRule: { roles: [everyone] }, rules: [], webhooks: [] });
  app.sync = { type: 'flexible', state: 'enabled', development_mode_enabled: true, service_name: 'mongodb-atlas', database_name: 'session', queryable_fields_names: ['group'] };
}

const schema = [{ name: 'Note', primaryKey: '_id', properties: { _id: 'string', group: 'string?', text: 'string?' } }];

const BULK = 3_000;

interface Estimate {
  estimate: number;
}
interface Bytes {
  transferred: number;
  transferable: number;
}

describe.skipIf(realmSdkSkipReason !== undefined)(`session control with the real Realm JS SDK${realmSdkSkipReason ? ` (skipped: ${realmSdkSkipReason})` : ''}`, () => {
  let host: TestHost;
  let clientAppId = '';
  let cluster: DataSourceClient;
  const devices: RealmDevice[] = [];
  const notes = () => cluster.db('session').collection('Note');

  beforeAll(async () => {
    host = await startTestHost();
    clientAppId = (await host.createApp('session-control', sessionApp)).clientAppId;
    cluster = host.dataSources.forCluster(CLUSTER);
    await notes().insertMany(Array.from({ length: BULK }, (_, i) => ({ _id: `bulk-${String(i).padStart(5, '0')}`, group: 'bulk', text: `bulk note ${i} ${'x'.repeat(200)}` })));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(devices.map((device) => device.stop()));
    await host?.close();
  });

  const openDevice = async (group: string): Promise<RealmDevice> => {
    const device = RealmDevice.start();
    devices.push(device);
    await device.login(host.url, clientAppId, 'anonymous');
    await device.call('openFlexible', { schema, subscriptions: [{ name: 'notes', type: 'Note', query: `group == "${group}"` }] });
    return device;
  };
  const held = async (device: RealmDevice) => (await device.objects('Note')).map((note) => note['_id']);

  it('moves nothing while paused, and uploads and downloads what waited after resume', async () => {
    const [a, b] = [await openDevice('paused'), await openDevice('paused')];
    await a.pause();
    expect(await a.call('state')).toMatchObject({ session: 'inactive' });
    await a.put('Note', { _id: 'while-paused', group: 'paused', text: 'written while paused' });
    await notes().insertOne({ _id: 'external-while-paused', group: 'paused', text: 'written to the collection' });
    // B is live: it receives the external note. That write has gone out to every live session, A's not among them.
    await b.waitForCount('Note', 1, '_id == "external-while-paused"', 30_000);
    expect(await held(a)).toEqual(['while-paused']);
    expect(await held(b)).toEqual(['external-while-paused']);
    expect(await notes().findOne({ _id: 'while-paused' })).toBeNull();

    await a.resume();
    expect(await a.call('state')).toMatchObject({ session: 'active' });
    await a.upload();
    await a.download();
    expect(await held(a)).toEqual(['external-while-paused', 'while-paused']);
    await eventually(async () => expect(await notes().findOne({ _id: 'while-paused' })).toMatchObject({ group: 'paused', text: 'written while paused' }));
    await b.waitForCount('Note', 2, 'TRUEPREDICATE', 30_000);
    expect(await held(b)).toEqual(['external-while-paused', 'while-paused']);
  }, 60_000);

  it('catches up after a pause with what changed in the collection and a subscription changed while paused', async () => {
    await notes().insertMany(['r1', 'r2', 'r3'].map((id) => ({ _id: id, group: 'away', text: `${id} before` })));
    const a = await openDevice('away');
    expect(await held(a)).toEqual(['r1', 'r2', 'r3']);
    await a.pause();
    await notes().deleteOne({ _id: 'r1' });
    await notes().updateOne({ _id: 'r2' }, { $set: { group: 'elsewhere' } });
    await notes().updateOne({ _id: 'r3' }, { $set: { text: 'r3 after' } });
    await notes().insertMany([
      { _id: 'r4', group: 'away', text: 'r4 new' },
      { _id: 'r5', group: 'later', text: 'r5 in the new query' },
    ]);
    await a.put('Note', { _id: 'l1', group: 'away', text: 'local while paused' });
    // The new subscription cannot complete while paused: it is sent when the session resumes.
    const changed = a.call('setSubscriptions', { subscriptions: [{ name: 'notes', type: 'Note', query: 'group IN {"away", "later"}' }], timeoutMs: 20_000 });
    expect(await held(a)).toEqual(['l1', 'r1', 'r2', 'r3']);
    await a.resume();
    expect(await changed).toMatchObject({ state: 'complete' });
    await a.upload();
    await a.download();
    expect(await a.objects('Note')).toEqual([
      { _id: 'l1', group: 'away', text: 'local while paused' },
      { _id: 'r3', group: 'away', text: 'r3 after' },
      { _id: 'r4', group: 'away', text: 'r4 new' },
      { _id: 'r5', group: 'later', text: 'r5 in the new query' },
    ]);
    await eventually(async () => expect(await notes().findOne({ _id: 'l1' })).toMatchObject({ text: 'local while paused' }));
  }, 60_000);

  it("has an acknowledged upload in another device's next downloadAllServerChanges()", async () => {
    const [a, b] = [await openDevice('round-trip'), await openDevice('round-trip')];
    for (let round = 0; round < 5; round++) {
      const id = `round-${round}`;
      await a.put('Note', { _id: id, group: 'round-trip', text: `round ${round}` });
      await a.upload();
      // Not eventually: once the server acknowledged A's upload, B's download completion includes it.
      await b.download();
      expect(await b.objects('Note', `_id == "${id}"`)).toEqual([{ _id: id, group: 'round-trip', text: `round ${round}` }]);
      await b.change('Note', id, { text: `round ${round} seen` });
      await b.upload();
      await a.download();
      expect(await a.objects('Note', `_id == "${id}"`)).toEqual([{ _id: id, group: 'round-trip', text: `round ${round} seen` }]);
    }
    await eventually(async () => expect(await notes().countDocuments({ group: 'round-trip', text: / seen$/ })).toBe(5));
  }, 60_000);

  it(`reports download progress reaching completion on a bootstrap of ${BULK} objects`, async () => {
    const device = await openDevice('nothing-yet');
    await device.call('watchProgress', { direction: 'download', mode: 'reportIndefinitely', estimate: true });
    await device.call('setSubscriptions', { subscriptions: [{ name: 'notes', type: 'Note', query: 'group == "bulk"' }], timeoutMs: 30_000 });
    expect(await device.waitForCount('Note', BULK, 'TRUEPREDICATE', 30_000)).toBe(BULK);
    await device.download();
    const estimates = await eventually(async () => {
      const reported = (await device.call<Estimate[]>('progress')).map((entry) => entry.estimate);
      expect(reported.at(-1)).toBe(1);
      return reported;
    });
    // 1 when registered (nothing outstanding), then the bootstrap's batches: the server sends 500 objects a
    // message with its estimate of the share sent, so the estimate climbs through values below 1 to 1.
    const climb = estimates.slice(estimates.findIndex((estimate) => estimate < 1));
    expect(climb.length).toBeGreaterThan(1);
    for (const estimate of climb) expect(estimate).toBeGreaterThan(0);
    for (let i = 1; i < climb.length; i++) expect(climb[i]).toBeGreaterThanOrEqual(climb[i - 1]);
    expect(climb.at(-1)).toBe(1);

    // The byte-count form, for the work outstanding when it is registered: a second device's bootstrap.
    const second = await openDevice('nothing-yet');
    await second.call('setSubscriptions', { subscriptions: [{ name: 'notes', type: 'Note', query: 'group == "bulk"' }], timeoutMs: 30_000 });
    await second.waitForCount('Note', BULK, 'TRUEPREDICATE', 30_000);
    await second.call('watchProgress', { direction: 'upload', mode: 'forCurrentlyOutstandingWork' });
    await second.change('Note', 'bulk-00000', { text: 'changed after the bootstrap' });
    await second.upload();
    const uploads = await eventually(async () => {
      const reported = await second.call<Bytes[]>('progress');
      const last = reported.at(-1);
      expect(last).toBeDefined();
      expect(last!.transferred).toBe(last!.transferable);
      return reported;
    });
    for (const entry of uploads) expect(entry.transferred).toBeLessThanOrEqual(entry.transferable);
    await eventually(async () => expect(await notes().findOne({ _id: 'bulk-00000' })).toMatchObject({ text: 'changed after the bootstrap' }));
  }, 90_000);
});
