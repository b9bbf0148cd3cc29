import { loadApp } from '@tessera/app-config';
import { eventually } from '@tessera/testing';
import { type DeployedExample, deployExample, exampleFiles } from './app-export';
import { RealmDevice, realmSdkSkipReason, SdkError } from './realm-client';

// examples/team-board is an App Services export of the last generation (.mdb/meta.json config_version
// 20230101, root_config.json, environments/, flexible sync in sync/config.json with queryable and indexed
// queryable fields and an asymmetric table, document filters on the collection's role). It is pushed unchanged
// through the admin API as the first deployment of a new app and synced with the real Realm JS SDK 12.15.0:
// each user reads their own tasks and everyone's tasks that are not drafts, and writes only their own; every
// query names owner_id (the indexed queryable field) with == or IN, as App Services required.

/** The SDK's schema for the export's collections, as the app's own client declares it. */
const schema = [
  { name: 'Task', primaryKey: '_id', properties: { _id: 'string', owner_id: 'string', status: 'string?', name: 'string' } },
  { name: 'Activity', asymmetric: true, primaryKey: '_id', properties: { _id: 'string', owner_id: 'string', message: 'string?' } },
];

describe('the team-board example, an App Services export with flexible sync', () => {
  it('loads as the App Services layout with no violation, flexible sync and its queryable fields', () => {
    const { layout, violations, app } = loadApp(new Map([...exampleFiles('team-board')].map(([path, text]) => [path, Buffer.from(text)])));
    expect(layout).toBe('appservices');
    expect(violations).toEqual([]);
    expect(app.sync).toMatchObject({ type: 'flexible', state: 'enabled', queryable_fields_names: ['owner_id', 'status'], indexed_queryable_fields_names: ['owner_id'], asymmetric_tables: ['Activity'] });
  });
});

describe.skipIf(realmSdkSkipReason !== undefined)(`the team-board export with the real Realm JS SDK${realmSdkSkipReason ? ` (skipped: ${realmSdkSkipReason})` : ''}`, () => {
  let deployed: DeployedExample;
  const devices: RealmDevice[] = [];
  let users = 0;

  const collection = (name: 'Task' | 'Activity') => deployed.collection('board', name);
  const stored = async (id: string) => (await collection('Task')).findOne({ _id: id });

  /** A device logged in as a new email/password user, or as the user of `email` when given. */
  const device = async (email?: string): Promise<{ device: RealmDevice; userId: string; email: string }> => {
    const started = RealmDevice.start();
    devices.push(started);
    const login = email ?? `member${++users}@board.example.com`;
    const { userId } = await started.login(deployed.host.url, deployed.clientAppId, { email: login, password: 'board-password', register: email === undefined });
    return { device: started, userId, email: login };
  };
  const open = (d: RealmDevice, query: string) => d.call('openFlexible', { query, schema });

  beforeAll(async () => {
    deployed = await deployExample('team-board');
  }, 60_000);

  afterEach(async () => {
    await Promise.all(devices.splice(0).map((d) => d.stop()));
  });

  afterAll(async () => {
    await deployed?.close();
  });

  it('syncs the imported app: own tasks upload, others see them unless drafts, and writes to theirs are reverted', async () => {
    const [{ device: alice, userId: aliceId }, { device: bob, userId: bobId }] = await Promise.all([device(), device()]);
    await open(alice, `owner_id == "${aliceId}"`);
    await alice.create({ _id: 'alice-open', owner_id: aliceId, status: 'open', name: 'plan the sprint' } as never);
    await alice.create({ _id: 'alice-draft', owner_id: aliceId, status: 'draft', name: 'half an idea' } as never);
    await alice.upload();
    await eventually(async () => expect(await stored('alice-open')).toEqual({ _id: 'alice-open', owner_id: aliceId, status: 'open', name: 'plan the sprint' }));
    expect(await stored('alice-draft')).toMatchObject({ status: 'draft' });

    // Bob subscribes to both users' tasks; the read filter shows him Alice's open task, not her draft.
    const both = `owner_id IN {"${aliceId}", "${bobId}"}`;
    await open(bob, both);
    await bob.waitFor({ ids: ['alice-open'], absent: ['alice-draft'] });
    // With an indexed queryable field every query must pin it with == or IN: a query without it is refused.
    const refused = await bob.call('subscribe', { query: 'status == "open"' }).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(SdkError);
    expect((refused as SdkError).message).toMatch(/^Invalid query: .*indexed queryable field "owner_id"/);
    await bob.call('subscribe', { query: both });
    // Alice publishes her draft: it enters Bob's view.
    await alice.update('alice-draft', { status: 'open' } as never);
    await alice.upload();
    await bob.waitFor({ ids: ['alice-draft'] });

    // Bob may read Alice's task but not write it (write filter owner_id == %%user.id): a compensating write.
    await bob.update('alice-open', { name: 'taken over by bob' });
    await bob.upload();
    await bob.waitFor({ fields: { 'alice-open': { name: 'plan the sprint' } } });
    await eventually(() => expect(bob.events).toContainEqual(expect.objectContaining({ event: 'sync-error', code: 1033, writes: [expect.objectContaining({ objectName: 'Task', primaryKey: 'alice-open' })] })));
    expect(await stored('alice-open')).toMatchObject({ name: 'plan the sprint' });
    // His own task goes through and reaches Alice only if she subscribes to it.
    await bob.create({ _id: 'bob-task', owner_id: bobId, status: 'open', name: "bob's own" } as never);
    await bob.upload();
    await eventually(async () => expect(await stored('bob-task')).toMatchObject({ owner_id: bobId }));
    await alice.call('subscribe', { query: `${both} AND status == "open"` });
    await alice.waitFor({ ids: ['alice-open', 'alice-draft', 'bob-task'] });
  }, 90_000);

  it('inserts the asymmetric table into the collection without syncing it back', async () => {
    const { device: d, userId } = await device();
    await open(d, `owner_id == "${userId}"`);
    await d.call('createLog', { type: 'Activity', log: { _id: `activity-${userId}`, owner_id: userId, message: 'opened the board' } });
    await d.upload();
    await eventually(async () => expect(await (await collection('Activity')).findOne({ _id: `activity-${userId}` })).toMatchObject({ owner_id: userId, message: 'opened the board' }));
  }, 60_000);

  /**
   * Terminate and re-enable while the device is offline with an unsynced change: the device must be reset with
   * recovery, keeping that change, on a client whose schema is `clientSchema`.
   */
  const resetRecoversUnsyncedChange = async (clientSchema: typeof schema): Promise<void> => {
    const { device: d, userId, email } = await device();
    const query = `owner_id == "${userId}"`;
    await d.call('openFlexible', { query, schema: clientSchema });
    await d.create({ _id: `synced-${userId}`, owner_id: userId, status: 'open', name: 'synced before terminate' } as never);
    await d.upload();
    await eventually(async () => expect(await stored(`synced-${userId}`)).not.toBeNull());

    await d.pause();
    await d.create({ _id: `unsynced-${userId}`, owner_id: userId, status: 'open', name: 'made while sync was terminated' } as never);
    await deployed.setSyncState('disabled');
    await deployed.setSyncState('enabled');
    await d.resume();

    await eventually(() => expect(d.events.filter((e) => e.event === 'client-reset')).toEqual([{ event: 'client-reset', phase: 'before' }, { event: 'client-reset', phase: 'after' }]), { timeoutMs: 30_000 });
    await eventually(async () => expect(await stored(`unsynced-${userId}`)).toMatchObject({ name: 'made while sync was terminated' }), { timeoutMs: 20_000 });
    // The device still holds both objects; a new device of the same user downloads both.
    expect((await d.tasks()).map((task) => task._id)).toEqual([`synced-${userId}`, `unsynced-${userId}`]);
    const { device: fresh } = await device(email);
    await fresh.call('openFlexible', { query, schema: clientSchema });
    expect((await fresh.tasks()).map((task) => task._id)).toEqual([`synced-${userId}`, `unsynced-${userId}`]);
  };

  // The IDENT of a client file issued before the terminate gets ERROR 208 (ClientReset): the SDK resets and
  // recovers its unsynced change into the fresh copy.
  it('resets a device after terminate and re-enable, recovering its unsynced change', async () => {
    await resetRecoversUnsyncedChange([schema[0]]);
  }, 90_000);

  // The fresh copy's first changeset holds every synced type, the asymmetric one too (as asymmetric): realm-core
  // recovers only into a copy that has every class of the client's file.
  it('resets a device whose schema holds the asymmetric table, recovering its unsynced change', async () => {
    await resetRecoversUnsyncedChange(schema);
  }, 90_000);
});
