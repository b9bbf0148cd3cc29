import { type DataSourceClient } from '@tessera/datastore';
import { eventually } from '@tessera/testing';
import { startTestHost, type TestHost } from '../../support/test-host';
import { FLEXIBLE_CLUSTER, flexibleApp } from '../flexible-test-client';
import { RealmDevice, realmSdkSkipReason, SdkError } from './realm-client';

// Flexible sync with the real Realm JS SDK 12.15.0 (`flexible: true`), each client a device in its own
// process, against the real host on a real port. The app is the protocol tests' (flexible-test-client):
// Task queryable on owner_id and status, readable unless hidden, writable by its owner; Log asymmetric.

describe.skipIf(realmSdkSkipReason !== undefined)(`flexible sync with the real Realm JS SDK${realmSdkSkipReason ? ` (skipped: ${realmSdkSkipReason})` : ''}`, () => {
  let host: TestHost;
  let clientAppId = '';
  let cluster: DataSourceClient;
  const devices: RealmDevice[] = [];

  beforeAll(async () => {
    host = await startTestHost();
    clientAppId = (await host.createApp('flexible-sdk', flexibleApp)).clientAppId;
    cluster = host.dataSources.forCluster(FLEXIBLE_CLUSTER);
    await cluster.db('app').collection('Task').insertMany([
      { _id: 'open-1', owner_id: 'someone', status: 'open', name: 'open one' },
      { _id: 'done-1', owner_id: 'someone', status: 'done', name: 'done one' },
      { _id: 'hidden-1', owner_id: 'someone', status: 'open-hidden', name: 'hidden' },
    ]);
  }, 60_000);

  afterAll(async () => {
    for (const device of devices) await device.stop();
    await host?.close();
  });

  const device = async (): Promise<{ device: RealmDevice; userId: string }> => {
    const started = RealmDevice.start();
    devices.push(started);
    const { userId } = await started.login(host.url, clientAppId, 'anonymous');
    return { device: started, userId };
  };
  const tasks = () => cluster.db('app').collection('Task');

  it('opens with flexible: true, bootstraps the subscription, and changes the query', async () => {
    const { device: d } = await device();
    await d.call('openFlexible', { query: 'status == "open"' });
    await d.waitFor({ ids: ['open-1'], absent: ['done-1'] });
    await d.call('subscribe', { query: 'status == "done"' });
    await d.waitFor({ ids: ['done-1'], absent: ['open-1'] });
  }, 60_000);

  it('uploads objects it creates and updates to the collection; external writes enter and leave its view', async () => {
    const { device: d, userId } = await device();
    await d.call('openFlexible', { query: `owner_id == "${userId}"` });
    await d.create({ _id: `sdk-${userId}`, owner_id: userId, status: 'open', name: 'from the sdk' } as never);
    await d.upload();
    await eventually(async () => expect(await tasks().findOne({ _id: `sdk-${userId}` })).toMatchObject({ name: 'from the sdk' }));
    await d.update(`sdk-${userId}`, { name: 'renamed' });
    await d.upload();
    await eventually(async () => expect(await tasks().findOne({ _id: `sdk-${userId}` })).toMatchObject({ name: 'renamed' }));
    // The change feed follows a new app's cluster within its reconcile interval: write until one arrives.
    let n = 0;
    await eventually(
      async () => {
        const id = `ext-${userId}-${n++}`;
        await tasks().insertOne({ _id: id, owner_id: userId, status: 'open', name: 'external' });
        await d.waitFor({ ids: [id], timeoutMs: 1_000 });
      },
      { timeoutMs: 30_000 },
    );
    await tasks().updateOne({ _id: `sdk-${userId}` }, { $set: { owner_id: 'someone-else' } });
    await d.waitFor({ absent: [`sdk-${userId}`] });
  }, 90_000);

  it('reverts a write outside the subscription or the write filter with a compensating write', async () => {
    const { device: d, userId } = await device();
    await d.call('openFlexible', { query: 'status == "open"' });
    await d.waitFor({ ids: ['open-1'] });
    await d.create({ _id: `stray-${userId}`, owner_id: userId, status: 'done', name: 'outside' } as never);
    await d.upload();
    await d.waitFor({ absent: [`stray-${userId}`] });
    // The SDK reports it as its CompensatingWrite error (1033) naming the refused object and the server's reason.
    await eventually(() =>
      expect(d.events).toContainEqual(
        expect.objectContaining({ event: 'sync-error', code: 1033, writes: [{ objectName: 'Task', primaryKey: `stray-${userId}`, reason: expect.stringContaining('outside of the current query view') }] }),
      ),
    );
    expect(await tasks().findOne({ _id: `stray-${userId}` })).toBeNull();
    // Outside the write filter: someone else's task in the view is put back as stored.
    await d.update('open-1', { name: 'taken over' });
    await d.upload();
    await d.waitFor({ fields: { 'open-1': { name: 'open one' } } });
    await eventually(() => expect(d.events).toContainEqual(expect.objectContaining({ code: 1033, writes: [{ objectName: 'Task', primaryKey: 'open-1', reason: 'write to "open-1" in table "Task" not allowed' }] })));
    expect(await tasks().findOne({ _id: 'open-1' })).toMatchObject({ name: 'open one' });
  }, 60_000);

  it('fails a subscription on a non-queryable field with the server error', async () => {
    const { device: d } = await device();
    await d.call('openFlexible', { query: 'status == "open"' });
    const error = await d.call('subscribe', { query: 'name == "open one"' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SdkError);
    expect((error as SdkError).message).toMatch(/^Invalid query: .*key "name" is not a queryable field/);
  }, 60_000);

  it('inserts asymmetric objects', async () => {
    const { device: d, userId } = await device();
    await d.call('openFlexible', { query: 'status == "open"' });
    await d.call('createLog', { log: { _id: `log-${userId}`, message: 'ingested' } });
    await d.upload();
    await eventually(async () => expect(await cluster.db('app').collection('Log').findOne({ _id: `log-${userId}` })).toMatchObject({ message: 'ingested' }));
  }, 60_000);
});
