import { type ChangePublisher, ORDERED_TRIGGERS_CONSUMER } from '@tessera/function-runtime';
import { DATASTORE_CHANGES_STREAM, JetStreamEvents } from '@tessera/messaging';
import { type DataSources, type DeployedApps } from '@tessera/platform';
import { deployTestApp, eventually, findNatsServer, makeTempDir, natsSkipReason, type NatsServerHandle, startNatsServer } from '@tessera/testing';
import { platformOf, startChangePublisher, startTriggerReplica, stopTriggerTest, type TriggerReplica } from '../support/trigger-replicas';

// Takes a while (so a second replica would have time to run the next change meanwhile) and logs its change.
const handleChange = `exports = async (changeEvent) => {
  await new Promise((resolve) => setTimeout(resolve, changeEvent.fullDocument.n % 3 === 0 ? 20 : 1));
  console.log(changeEvent.ns.coll + ' ' + changeEvent.fullDocument.n);
};`;

// Ordered database triggers (`unordered: false`, App Services' default) over a real nats-server with
// JetStream: two function-runtime replicas share the ordered consumer group, and one collection's changes run
// one after the other, in the order they happened, whichever replica runs each. The publisher and both
// replicas run in this process (the embedded data directory opens in one process only), each replica with
// its own NATS connection, runtime and execution log, sharing the platform database as runtime processes do.
describe.skipIf(!findNatsServer())(`ordered database triggers across two runtime replicas${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  const dir = makeTempDir('tessera-ordered-triggers-');
  let nats: NatsServerHandle;
  let appId: string;
  let dataSources: DataSources;
  let deployed: DeployedApps;
  let publisher: ChangePublisher;
  let publisherEvents: JetStreamEvents;
  const replicas: TriggerReplica[] = [];

  async function startReplica(): Promise<void> {
    replicas.push(await startTriggerReplica({ natsUrl: nats.url, appId, functions: { handleChange }, dataSources, deployed, dataDir: dir.path }));
  }

  /** Every run of `trigger` on either replica, in the order they started: `<collection> <n>`. */
  async function runsOf(trigger: string): Promise<{ line: string; replica: number; started: number }[]> {
    const all = await Promise.all(replicas.map(async (replica, index) => (await replica.logs.list({ appId, limit: 10_000 })).filter((run) => run.trigger?.name === trigger).map((run) => ({ line: run.logs.join(''), replica: index, started: run.startedAt.getTime() }))));
    return all.flat().sort((a, b) => a.started - b.started);
  }

  beforeAll(async () => {
    nats = await startNatsServer();
    const platform = platformOf(dir.path);
    ({ dataSources, deployed } = platform);
    ({ appId } = await deployTestApp({ apps: platform.registry, deployments: platform.deployments }, 'ordered', (app) => {
      app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'OrderedCluster' } }, collectionRules: [], rules: [], webhooks: [] });
      app.functions.push({ config: { name: 'handleChange', private: true }, source: handleChange });
      const config = (collection: string, unordered: boolean) => ({ service_name: 'mongodb-atlas', database: 'shop', collection, operation_types: ['INSERT'], full_document: true, unordered });
      app.triggers.push(
        { name: 'inOrder', type: 'DATABASE', function_name: 'handleChange', config: config('ledger', false) },
        { name: 'anyOrder', type: 'DATABASE', function_name: 'handleChange', config: config('feed', true) },
      );
    }));
    publisherEvents = await JetStreamEvents.connect({ url: nats.url });
    publisher = await startChangePublisher(platform, publisherEvents, appId);
    await startReplica();
    await startReplica();
  }, 60_000);

  afterAll(async () => {
    await stopTriggerTest({ publisher, replicas, events: publisherEvents, dataSources });
    await nats?.stop();
    dir.remove();
  });

  it("runs one collection's changes one at a time in the order they happened, on both replicas", async () => {
    const ledger = dataSources.forCluster('OrderedCluster').db('shop').collection('ledger');
    const total = 40;
    for (let n = 1; n <= total; n++) await ledger.insertOne({ n });
    const runs = await eventually(async () => {
      const found = await runsOf('inOrder');
      expect(found).toHaveLength(total);
      return found;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    expect(runs.map((run) => run.line)).toEqual(Array.from({ length: total }, (_, index) => `ledger ${index + 1}`));
    expect(new Set(runs.map((run) => run.replica)).size).toBe(2);
    // Each run started after the one before it ended: never two at once, whichever replica ran them.
    const ends = await Promise.all(replicas.map((replica) => replica.logs.list({ appId, limit: 10_000 })));
    const byStart = ends.flat().filter((run) => run.trigger?.name === 'inOrder').sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
    for (let index = 1; index < byStart.length; index++) expect(byStart[index].startedAt.getTime()).toBeGreaterThanOrEqual(byStart[index - 1].startedAt.getTime() + byStart[index - 1].durationMs - 1);
    await eventually(async () => expect(await replicas[0].events.lag(DATASTORE_CHANGES_STREAM, ORDERED_TRIGGERS_CONSUMER)).toMatchObject({ pending: 0, ackPending: 0 }), { timeoutMs: 20_000 });
  }, 120_000);

  it('runs an unordered trigger on both replicas at once, every change once', async () => {
    const feed = dataSources.forCluster('OrderedCluster').db('shop').collection('feed');
    const total = 40;
    await feed.insertMany(Array.from({ length: total }, (_, index) => ({ n: index + 1 })));
    const runs = await eventually(async () => {
      const found = await runsOf('anyOrder');
      expect(found).toHaveLength(total);
      return found;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    expect(runs.map((run) => run.line).sort()).toEqual(Array.from({ length: total }, (_, index) => `feed ${index + 1}`).sort());
    expect(new Set(runs.map((run) => run.replica)).size).toBe(2);
  }, 120_000);
});
