import { eventually } from '@tessera/testing';
import { type DeployedExample, deployExample } from './app-export';
import { RealmDevice, realmSdkSkipReason, type SdkEvent } from './realm-client';

// Access tokens and users during a sync session, with the real Realm JS SDK 12.15.0 and examples/task-tracker
// (partition sync, email/password users, teams in custom data) on a server whose access tokens live 3 s. A
// session outlives its token; a reconnect with an expired token gets 401 at the upgrade, and the SDK refreshes
// the token and reconnects, as it did with App Services. A user the admin API logs out, disables or deletes
// loses its connection, and the SDK cannot come back: its user ends logged out and its writes stay on the device.

const accessTokenSeconds = 3;

describe.skipIf(realmSdkSkipReason !== undefined)(`sync sessions and access tokens with the real Realm JS SDK${realmSdkSkipReason ? ` (skipped: ${realmSdkSkipReason})` : ''}`, () => {
  let deployed: DeployedExample;
  const devices: RealmDevice[] = [];
  let users = 0;

  const collection = (name: 'Task' | 'profiles') => deployed.collection('tracker', name);
  const stored = async (id: string) => (await collection('Task')).findOne({ _id: id });

  const member = async (team: string): Promise<{ device: RealmDevice; userId: string; loggedInAt: number }> => {
    const device = RealmDevice.start();
    devices.push(device);
    const loggedInAt = Date.now();
    const { userId } = await device.login(deployed.host.url, deployed.clientAppId, { email: `session${++users}@tracker.example.com`, password: 'tracker-password', register: true });
    await (await collection('profiles')).replaceOne({ userId }, { userId, teams: [team], readOnlyTeams: [] }, { upsert: true });
    await device.open(team);
    return { device, userId, loggedInAt };
  };

  beforeAll(async () => {
    deployed = await deployExample('task-tracker', { TESSERA_ACCESS_TOKEN_TTL_SECONDS: String(accessTokenSeconds) });
  }, 60_000);

  afterEach(async () => {
    await Promise.all(devices.splice(0).map((device) => device.stop()));
  });

  afterAll(async () => {
    await deployed?.close();
  });

  it('keeps syncing after the access token expires, and refreshes it to reconnect', async () => {
    const { device, loggedInAt } = await member('expiring');
    const firstToken = await device.call<string>('accessToken');
    await device.create({ _id: 'before-expiry', _partition: 'expiring', name: 'with a fresh token' });
    await device.upload();
    // The condition is the token's expiry itself: past it, the open session still uploads and downloads.
    await eventually(() => expect(Date.now()).toBeGreaterThan(loggedInAt + (accessTokenSeconds + 1) * 1000), { timeoutMs: 10_000 });
    await device.create({ _id: 'after-expiry', _partition: 'expiring', name: 'with an expired token' });
    await device.upload();
    await eventually(async () => expect(await stored('after-expiry')).toMatchObject({ name: 'with an expired token' }));
    await (await collection('Task')).insertOne({ _id: 'external-after-expiry', _partition: 'expiring', name: 'from the server', done: false });
    await device.waitFor({ ids: ['external-after-expiry'] });

    // A reconnect (the server restarts) needs a valid token: the SDK refreshes the expired one and syncs on.
    await deployed.host.restart();
    await eventually(
      async () => {
        const states = await device.call<string[]>('connectionStates');
        expect(states).toContain('disconnected');
        expect(states.at(-1)).toBe('connected');
      },
      { timeoutMs: 30_000 },
    );
    await device.create({ _id: 'after-reconnect', _partition: 'expiring', name: 'made after the reconnect' });
    await device.upload(20_000);
    await eventually(async () => expect(await stored('after-reconnect')).toMatchObject({ name: 'made after the reconnect' }), { timeoutMs: 15_000 });
    expect(await device.call<string>('accessToken')).not.toBe(firstToken);
    expect(await device.call('userState')).toBe('LoggedIn');
    // No auth error. A reconnect attempt while the server is still restarting may be refused at the TCP level
    // (SDK error 1034, not fatal: the SDK retries); how many there are depends on how long the restart takes.
    const refusedWhileRestarting = (event: SdkEvent) => event.code === 1034 && event.isFatal === false && /Connection refused/.test(String(event.message));
    expect(device.events.filter((event) => event.event === 'sync-error' && !refusedWhileRestarting(event))).toEqual([]);
  }, 90_000);

  for (const action of ['logout', 'disable', 'delete'] as const) {
    it(`ends the sync session of a user the admin API ${action === 'logout' ? 'logs out' : `${action}s`}`, async () => {
      const team = `team-${action}`;
      const { device, userId } = await member(team);
      await device.create({ _id: `${action}-before`, _partition: team, name: 'synced' });
      await device.upload();
      await eventually(async () => expect(await stored(`${action}-before`)).not.toBeNull());

      const path = deployed.admin.app(deployed.appId, `/users/${userId}${action === 'delete' ? '' : `/${action}`}`);
      const answer = await deployed.admin.request(action === 'delete' ? 'DELETE' : 'PUT', path);
      expect(answer.status).toBe(204);
      // The connection is closed; reconnecting fails and refreshing the token fails: the SDK logs the user out.
      await eventually(async () => expect(await device.call('userState')).toBe('LoggedOut'), { timeoutMs: 20_000 });
      await device.create({ _id: `${action}-after`, _partition: team, name: 'never synced' }).catch(() => undefined);
      await (await collection('Task')).insertOne({ _id: `${action}-external`, _partition: team, name: 'never downloaded', done: false });
      // Nothing syncs any more in either direction (checked after the server had every chance to deliver).
      await expect(device.download(3_000)).rejects.toThrow();
      expect(await stored(`${action}-after`)).toBeNull();
      expect((await device.tasks()).map((task) => task._id)).not.toContain(`${action}-external`);
    }, 60_000);
  }
});
