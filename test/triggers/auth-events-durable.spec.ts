import { type AppConfig } from '@tessera/app-config';
import { type AppAuthEvent } from '@tessera/contracts';
import { AuthEvents, DataSources, LogStore, PLATFORM_DATABASE } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';
import { eventually, makeTempDir } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';

// Counts its runs per user, so a run that happens twice shows.
const countCreate = `exports = async function (authEvent) {
  await context.services.get('mongodb-atlas').db('audit').collection('created').updateOne({ _id: authEvent.user.id }, { $inc: { runs: 1 } }, { upsert: true });
};`;

function durableApp(app: AppConfig): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'DurableAuthCluster' } }, collectionRules: [], rules: [], webhooks: [] });
  app.functions.push({ config: { name: 'countCreate', private: true }, source: countCreate });
  app.triggers.push({ name: 'onCreate', type: 'AUTHENTICATION', function_name: 'countCreate', config: { operation_type: 'CREATE', providers: [] } });
}

/** The CREATE event of a user a crashed process made: in the outbox, never published. */
function lostEvent(appId: string, userId: string, eventId: string): AppAuthEvent {
  return { appId, eventId, operationType: 'CREATE', providers: ['anon-user'], user: { id: userId, type: 'normal', data: {}, identities: [{ id: 'anon', provider_type: 'anon-user' }] }, time: new Date().toISOString() };
}

// Auth events are durable in standalone mode: written to the platform database's outbox before they are
// published on the in-process stream, so what a crash left there runs when the host is back, once.
describe('durable authentication events (standalone)', () => {
  const dir = makeTempDir('tessera-durable-auth-');
  let host: TestHost | undefined;
  let appId: string;
  let clientAppId: string;

  const runsOf = async (running: TestHost, userId: string): Promise<number | undefined> => (await running.dataSources.forCluster('DurableAuthCluster').db('audit').collection('created').findOne({ _id: userId }))?.['runs'] as number | undefined;
  const outbox = (running: TestHost) => running.dataSources.platform().db(PLATFORM_DATABASE).collection('auth_event_outbox');

  beforeAll(async () => {
    host = await startTestHost({ dataDir: dir.path });
    ({ appId, clientAppId } = await host.createApp('durable-auth', durableApp));
  });

  afterAll(async () => {
    await host?.close();
    dir.remove();
  });

  it("runs a new user's CREATE trigger once and empties the outbox", async () => {
    const running = host!;
    const { userId } = await running.anonymousLogin(clientAppId);
    await eventually(async () => expect(await runsOf(running, userId)).toBe(1));
    await eventually(async () => expect(await outbox(running).countDocuments({ 'event.user.id': userId })).toBe(0));
  });

  it('runs what a crash left in the outbox when the host is back, and a second relay of it runs nothing more', async () => {
    await host!.close();
    host = undefined;
    // The process crashed after writing the outbox: the entries are there, nothing was published.
    const settings = loadSettings({ TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: '', LOG_LEVEL: 'silent' });
    const offline = new DataSources(settings);
    const stale = new Date(Date.now() - 60 * 60_000);
    // Two users were written after their CREATE events; the third crash came between its event and its user.
    await offline
      .platform()
      .db(`app-${appId}`)
      .collection('users')
      .insertMany(['crashed-user-1', 'crashed-user-2'].map((id) => ({ _id: id, type: 'normal', identities: [{ id: 'anon', provider_type: 'anon-user', provider_id: 'anon-user' }], data: {}, disabled: false, createdAt: stale })));
    await offline
      .platform()
      .db(PLATFORM_DATABASE)
      .collection('auth_event_outbox')
      .insertMany([
        { _id: 'e0000000000000000000001a', event: lostEvent(appId, 'crashed-user-1', 'e0000000000000000000001a'), at: stale },
        { _id: 'e0000000000000000000001b', event: lostEvent(appId, 'crashed-user-2', 'e0000000000000000000001b'), at: new Date() },
        { _id: 'e0000000000000000000001c', event: lostEvent(appId, 'never-written', 'e0000000000000000000001c'), at: stale },
      ]);
    await offline.closeAll();

    const back = await startTestHost({ dataDir: dir.path });
    host = back;
    // Both are published at boot (a crashed process's entries, whatever their age), and run.
    await eventually(async () => {
      expect(await runsOf(back, 'crashed-user-1')).toBe(1);
      expect(await runsOf(back, 'crashed-user-2')).toBe(1);
    }, { timeoutMs: 20_000 });
    await eventually(async () => expect(await outbox(back).countDocuments({})).toBe(0));
    // The event of a user never written is dropped, not run.
    expect(await runsOf(back, 'never-written')).toBeUndefined();
    await eventually(async () => {
      const logs = await back.nest.get(LogStore).list(appId, { types: ['AUTH_TRIGGER'] });
      expect(logs.filter((entry) => entry.trigger_name === 'onCreate').length).toBeGreaterThanOrEqual(2);
    });

    // At least once, run once: the same event published again (a relay racing a slow publish) is claimed.
    await outbox(back).insertOne({ _id: 'e0000000000000000000001a', event: lostEvent(appId, 'crashed-user-1', 'e0000000000000000000001a'), at: stale });
    const authEvents = back.nest.get(AuthEvents);
    expect(await authEvents.relay(0)).toBe(1);
    await eventually(async () => expect(await outbox(back).countDocuments({})).toBe(0));
    await authEvents.occurred(lostEvent(appId, 'crashed-user-1', 'e0000000000000000000001a'));
    await eventually(async () => expect(await outbox(back).countDocuments({})).toBe(0));
    expect(await runsOf(back, 'crashed-user-1')).toBe(1);
  });

  it('writes a CREATE to the outbox before its user, and the relay drops it when the user write never happened', async () => {
    const running = host!;
    const authEvents = running.nest.get(AuthEvents);
    const event = lostEvent(appId, 'failed-write-user', 'e0000000000000000000002a');
    // The user write fails after the event is in the outbox (a crash would leave it there the same way).
    const failed = authEvents.around(event, async () => {
      expect(await outbox(running).countDocuments({ _id: event.eventId })).toBe(1);
      throw new Error('the datastore went away');
    });
    await expect(failed).rejects.toThrow(/went away/);
    expect(await outbox(running).countDocuments({ _id: event.eventId })).toBe(1);
    // Young, it may be a write under way elsewhere: left alone.
    expect(await authEvents.relay(0)).toBe(0);
    expect(await outbox(running).countDocuments({ _id: event.eventId })).toBe(1);
    // Old, its user never written: dropped, and no trigger runs.
    await outbox(running).updateOne({ _id: event.eventId }, { $set: { at: new Date(Date.now() - 60 * 60_000) } });
    expect(await authEvents.relay(0)).toBe(0);
    expect(await outbox(running).countDocuments({ _id: event.eventId })).toBe(0);
    expect(await runsOf(running, 'failed-write-user')).toBeUndefined();

    // A user deleted over the client API: its DELETE event goes through the outbox and leaves it, the user gone.
    const login = await running.anonymousLogin(clientAppId);
    await eventually(async () => expect(await runsOf(running, login.userId)).toBe(1));
    const deleted = await fetch(`${running.url}/api/client/v2.0/auth/delete`, { method: 'DELETE', headers: { authorization: `Bearer ${login.accessToken}` } });
    expect(deleted.status).toBe(204);
    expect(await running.dataSources.platform().db(`app-${appId}`).collection('users').countDocuments({ _id: login.userId })).toBe(0);
    await eventually(async () => expect(await outbox(running).countDocuments({})).toBe(0));
  });
});
