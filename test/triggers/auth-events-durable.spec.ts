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
    await offline
      .platform()
      .db(PLATFORM_DATABASE)
      .collection('auth_event_outbox')
      .insertMany([
        { _id: 'e0000000000000000000001a', event: lostEvent(appId, 'crashed-user-1', 'e0000000000000000000001a'), at: stale },
        { _id: 'e0000000000000000000001b', event: lostEvent(appId, 'crashed-user-2', 'e0000000000000000000001b'), at: new Date() },
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
    const logs = await back.nest.get(LogStore).list(appId, { types: ['AUTH_TRIGGER'] });
    expect(logs.filter((entry) => entry.trigger_name === 'onCreate').length).toBeGreaterThanOrEqual(2);

    // At least once, run once: the same event published again (a relay racing a slow publish) is claimed.
    await outbox(back).insertOne({ _id: 'e0000000000000000000001a', event: lostEvent(appId, 'crashed-user-1', 'e0000000000000000000001a'), at: stale });
    const authEvents = back.nest.get(AuthEvents);
    expect(await authEvents.relay(0)).toBe(1);
    await eventually(async () => expect(await outbox(back).countDocuments({})).toBe(0));
    await authEvents.occurred(lostEvent(appId, 'crashed-user-1', 'e0000000000000000000001a'));
    await eventually(async () => expect(await outbox(back).countDocuments({})).toBe(0));
    expect(await runsOf(back, 'crashed-user-1')).toBe(1);
  });

});
