import { eventually } from '@tessera/testing';
import { type DeployedExample, deployExample } from './app-export';
import { RealmDevice, realmSdkSkipReason, SdkError, type Task } from './realm-client';

// Partition-based sync with the real Realm JS SDK 12.15.0, each client a device in its own process, against
// the real host on a real port. The app is examples/task-tracker, an App Services export of the 20210101
// generation (partition sync in its cluster's config, permissions from custom user data), pushed unchanged
// through the admin API as the first deployment of a new app (as the README's walk-through does): read for
// the teams in `teams` and `readOnlyTeams` of the user's custom data, write for `teams`.


describe.skipIf(realmSdkSkipReason !== undefined)(`partition sync with the real Realm JS SDK${realmSdkSkipReason ? ` (skipped: ${realmSdkSkipReason})` : ''}`, () => {
  let deployed: DeployedExample;
  const devices: RealmDevice[] = [];
  let users = 0;

  const collection = (name: 'Task' | 'profiles') => deployed.collection('tracker', name);

  /** A device logged in as a new email/password user whose custom data lists `teams` (and `readOnlyTeams`). */
  const device = async (teams: string[], readOnlyTeams: string[] = [], dir?: string): Promise<{ device: RealmDevice; userId: string }> => {
    const started = RealmDevice.start(dir);
    devices.push(started);
    const email = `member${++users}@tracker.example.com`;
    const { userId } = await started.login(deployed.host.url, deployed.clientAppId, { email, password: 'tracker-password', register: true });
    await (await collection('profiles')).replaceOne({ userId }, { userId, teams, readOnlyTeams }, { upsert: true });
    return { device: started, userId };
  };

  const stored = async (id: string) => (await collection('Task')).findOne({ _id: id });

  beforeAll(async () => {
    deployed = await deployExample('task-tracker');
  }, 60_000);

  afterEach(async () => {
    await Promise.all(devices.splice(0).map((d) => d.stop()));
  });

  afterAll(async () => {
    await deployed?.close();
  });

  it('opens and creates; the object lands in the collection and a second device downloads it', async () => {
    const { device: first } = await device(['red']);
    await first.open('red');
    await first.create({ _id: 'first-task', _partition: 'red', name: 'write the migration guide' });
    await first.upload();
    expect(await eventually(async () => (await stored('first-task')) ?? Promise.reject(new Error('not stored yet')))).toEqual({ _id: 'first-task', _partition: 'red', name: 'write the migration guide', done: false });

    const { device: second } = await device(['red']);
    await second.open('red');
    expect(await second.tasks()).toContainEqual({ _id: 'first-task', _partition: 'red', name: 'write the migration guide', done: false });
    // And back: the second device's update reaches the first one and the collection.
    await second.update('first-task', { done: true });
    await first.waitFor({ fields: { 'first-task': { done: true } } });
    await eventually(async () => expect(await stored('first-task')).toMatchObject({ done: true }));
  });

  it('converges concurrent offline edits on both devices and in the collection', async () => {
    const [{ device: a }, { device: b }] = await Promise.all([device(['blue']), device(['blue'])]);
    await a.open('blue');
    await b.open('blue');
    await a.create({ _id: 'shared', _partition: 'blue', name: 'original' });
    await a.upload();
    await b.waitFor({ ids: ['shared'] });

    await Promise.all([a.pause(), b.pause()]);
    await a.update('shared', { name: 'renamed offline on a' });
    await b.update('shared', { done: true });
    await b.update('shared', { name: 'renamed offline on b, later' });
    await a.create({ _id: 'only-a', _partition: 'blue', name: 'made offline on a' });
    await b.remove('shared');
    await b.create({ _id: 'shared', _partition: 'blue', name: 'recreated on b' });
    await Promise.all([a.resume(), b.resume()]);
    await Promise.all([a.upload(), b.upload()]);
    await Promise.all([a.download(), b.download()]);

    const onA = await a.tasks();
    expect(await b.tasks()).toEqual(onA);
    expect(onA.map((task) => task._id)).toEqual(expect.arrayContaining(['only-a', 'shared']));
    const inCollection = await eventually(async () => {
      const documents = await (await collection('Task')).find({ _partition: 'blue' }).sort({ _id: 1 }).toArray();
      expect(documents).toEqual(onA);
      return documents;
    });
    expect(inCollection).toHaveLength(onA.length);
  });

  it('delivers external inserts, updates and deletes to every device on the partition', async () => {
    const [{ device: a }, { device: b }] = await Promise.all([device(['green']), device(['green'])]);
    await a.open('green');
    await b.open('green');
    const tasks = await collection('Task');
    await tasks.insertOne({ _id: 'external', _partition: 'green', name: 'inserted by an operator', done: false });
    await Promise.all([a.waitFor({ ids: ['external'] }), b.waitFor({ ids: ['external'] })]);
    await tasks.updateOne({ _id: 'external' }, { $set: { name: 'updated by an operator' } });
    await Promise.all([a.waitFor({ fields: { external: { name: 'updated by an operator' } } }), b.waitFor({ fields: { external: { name: 'updated by an operator' } } })]);
    await tasks.deleteOne({ _id: 'external' });
    await Promise.all([a.waitFor({ absent: ['external'] }), b.waitFor({ absent: ['external'] })]);
  });

  it('moves an object between partitions when its partition value changes in the collection', async () => {
    const [{ device: onOld }, { device: onNew }] = await Promise.all([device(['old-team']), device(['new-team'])]);
    await onOld.open('old-team');
    await onNew.open('new-team');
    await onOld.create({ _id: 'moving', _partition: 'old-team', name: 'moves teams' });
    await onOld.upload();
    await eventually(async () => expect(await stored('moving')).toMatchObject({ _partition: 'old-team' }));
    await (await collection('Task')).updateOne({ _id: 'moving' }, { $set: { _partition: 'new-team' } });
    await onOld.waitFor({ absent: ['moving'] });
    expect(await onNew.waitFor({ ids: ['moving'] })).toContainEqual({ _id: 'moving', _partition: 'new-team', name: 'moves teams', done: false });
  });

  it('refuses a partition value of the wrong type, a partition the user may not read, and writes to a read-only partition', async () => {
    const { device: member } = await device(['purple'], ['announcements']);
    // Spec 7: the key is a string; an int partition is refused, and the SDK reports it.
    await expect(member.open(7, { partitionType: 'int', timeoutMs: 10_000 })).rejects.toBeInstanceOf(SdkError);
    // No read permission: not a team of the user's.
    await expect(member.open('someone-elses-team', { timeoutMs: 10_000 })).rejects.toBeInstanceOf(SdkError);
    // As realm-core surfaces the server's errors: 1029 BadSyncPartitionValue, 1037 SyncPermissionDenied. The
    // error event may reach the test after the failed open's answer (the SDK reports both from its own threads).
    await eventually(() =>
      expect(member.events).toEqual([
        expect.objectContaining({ event: 'sync-error', code: 1029, message: expect.stringContaining('expected partition to have type string') }),
        expect.objectContaining({ event: 'sync-error', code: 1037, message: expect.stringContaining('"someone-elses-team"') }),
      ]),
    );

    // Read-only: the device downloads, and its write is refused and never reaches the collection.
    await (await collection('Task')).insertOne({ _id: 'notice', _partition: 'announcements', name: 'read me', done: false });
    const { device: reader } = await device([], ['announcements']);
    await reader.open('announcements');
    expect(await reader.tasks()).toContainEqual({ _id: 'notice', _partition: 'announcements', name: 'read me', done: false });
    await reader.create({ _id: 'forbidden', _partition: 'announcements', name: 'should not land' });
    await eventually(() => expect(reader.events).toEqual([expect.objectContaining({ event: 'sync-error', code: 1037, message: expect.stringContaining('write permission') })]), { timeoutMs: 15_000 });
    expect(await stored('forbidden')).toBeNull();
  });

  it('takes permissions from custom user data at each open', async () => {
    const { device: member, userId } = await device([]);
    await expect(member.open('orange', { timeoutMs: 10_000 })).rejects.toBeInstanceOf(SdkError);
    // The app's own function adds the team to the user's custom data, as the app's UI would call it.
    expect(await member.callFunction('joinTeam', 'orange')).toEqual(['orange']);
    expect((await member.refreshCustomData())).toMatchObject({ userId, teams: ['orange'] });
    await member.open('orange');
    await member.create({ _id: 'orange-task', _partition: 'orange', name: 'joined the team' });
    await member.upload();
    await eventually(async () => expect(await stored('orange-task')).toMatchObject({ _partition: 'orange' }));
  });

  it('keeps a session through a server restart: changes made while the server is down arrive after it', async () => {
    const [{ device: a }, { device: b }] = await Promise.all([device(['yellow']), device(['yellow'])]);
    await a.open('yellow');
    await b.open('yellow');
    await a.create({ _id: 'before-restart', _partition: 'yellow', name: 'before' });
    await a.upload();
    await b.waitFor({ ids: ['before-restart'] });

    // The device writes while the server stops and starts again on the same port and data directory.
    const restarting = deployed.host.restart();
    await a.create({ _id: 'during-restart', _partition: 'yellow', name: 'made while the server restarted' });
    await restarting;
    await b.waitFor({ ids: ['during-restart'], timeoutMs: 30_000 });
    await eventually(async () => expect(await stored('during-restart')).toMatchObject({ name: 'made while the server restarted' }), { timeoutMs: 15_000 });
    expect((await a.tasks()).map((task: Task) => task._id)).toEqual(['before-restart', 'during-restart']);
  }, 90_000);

  it('resets a device after terminate and re-enable, recovering its unsynced change', async () => {
    const { device: a } = await device(['teal']);
    await a.open('teal');
    await a.create({ _id: 'synced-before', _partition: 'teal', name: 'synced before terminate' });
    await a.upload();
    await eventually(async () => expect(await stored('synced-before')).not.toBeNull());

    await a.pause();
    await a.create({ _id: 'unsynced', _partition: 'teal', name: 'made while sync was terminated' });
    await deployed.setSyncState('disabled');
    await deployed.setSyncState('enabled');
    await a.resume();

    await eventually(() => expect(a.events).toEqual([{ event: 'client-reset', phase: 'before' }, { event: 'client-reset', phase: 'after' }]), { timeoutMs: 30_000 });
    await eventually(async () => expect(await stored('unsynced')).toMatchObject({ name: 'made while sync was terminated' }), { timeoutMs: 20_000 });
    // The device still holds both objects; a new device on the partition downloads both.
    expect((await a.tasks()).map((task) => task._id)).toEqual(['synced-before', 'unsynced']);
    const { device: fresh } = await device(['teal']);
    await fresh.open('teal');
    expect((await fresh.tasks()).map((task) => task._id)).toEqual(['synced-before', 'unsynced']);
  }, 90_000);
});
