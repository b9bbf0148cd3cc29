import { ChangePublisher, TRIGGERS_CONSUMER } from '@tessera/function-runtime';
import { DATASTORE_CHANGES_STREAM, JetStreamEvents } from '@tessera/messaging';
import type { DataSources, DatastoreAppRegistry, DeployedApps } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';
import { deployTestApp, eventually, findNatsServer, makeTempDir, natsSkipReason, type NatsServerHandle, startNatsServer } from '@tessera/testing';
import { platformOf, startChangePublisher, startTriggerReplica, stopTriggerTest, type TriggerReplica } from '../support/trigger-replicas';

// The function a trigger runs: it logs the key of the changed document, and the test counts those lines.
const handleChange = `exports = (changeEvent) => { console.log('handled ' + changeEvent.documentKey._id + ' ' + changeEvent.operationType); };`;

// Change events through a real nats-server with JetStream: the change publisher follows an app's linked
// cluster and publishes every change; two runtime replicas share the trigger consumer group. The NATS server
// restarts in the middle of a stream of writes. (The processes of test/distributed share one embedded data
// directory, which only one process may open, so this runs the publisher and two consumers in this process;
// with clusters on a shared datastore the same parts run in the runtime processes.)
describe.skipIf(!findNatsServer())(`change events and database triggers over JetStream${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  const dir = makeTempDir('tessera-change-events-');
  let nats: NatsServerHandle;
  let appId: string;
  let dataSources: DataSources;
  let deployed: DeployedApps;
  let registry: DatastoreAppRegistry;
  let publisher: ChangePublisher;
  let publisherEvents: JetStreamEvents;
  const replicas: TriggerReplica[] = [];

  const connect = () => JetStreamEvents.connect({ url: nats.url, connection: { reconnectTimeWait: 100 } });

  async function startReplica(): Promise<TriggerReplica> {
    const replica = await startTriggerReplica({ natsUrl: nats.url, appId, functions: { handleChange }, dataSources, deployed, dataDir: dir.path, connection: { reconnectTimeWait: 100 } });
    replicas.push(replica);
    return replica;
  }

  /** Every `handled <id> <op>` line the replicas' trigger runs logged, by replica. */
  async function handledBy(replica: TriggerReplica): Promise<string[]> {
    const runs = await replica.logs.list({ appId, limit: 10_000 });
    return runs.filter((run) => run.trigger?.name === 'countChanges').flatMap((run) => run.logs).map((line) => line.replace(/^handled /, ''));
  }

  beforeAll(async () => {
    nats = await startNatsServer();
    const platform = platformOf(dir.path);
    ({ dataSources, deployed, registry } = platform);
    ({ appId } = await deployTestApp({ apps: registry, deployments: platform.deployments }, 'changes', (app) => {
      app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'ChangeCluster' } }, collectionRules: [], rules: [], webhooks: [] });
      app.functions.push({ config: { name: 'handleChange', private: true }, source: handleChange });
      app.triggers.push({ name: 'countChanges', type: 'DATABASE', function_name: 'handleChange', config: { service_name: 'mongodb-atlas', database: 'shop', collection: 'orders', operation_types: ['INSERT', 'UPDATE'], unordered: true } });
    }));

    publisherEvents = await connect();
    // This process opens the embedded cluster itself, as a standalone process does.
    publisher = await startChangePublisher(platform, publisherEvents, appId);
  }, 60_000);

  afterAll(async () => {
    await stopTriggerTest({ publisher, replicas, events: publisherEvents, dataSources });
    await nats?.stop();
    dir.remove();
  });

  it('handles every change exactly once across two runtime replicas while the NATS server restarts mid-stream', async () => {
    const [first, second] = [await startReplica(), await startReplica()];
    const orders = dataSources.forCluster('ChangeCluster').db('shop').collection('orders');
    const total = 60;
    for (let n = 1; n <= total; n++) {
      await orders.insertOne({ _id: `order-${n}`, n });
      if (n % 3 === 0) await orders.updateOne({ _id: `order-${n}` }, { $set: { paid: true } });
      // The restart lands while changes are being published and handled.
      if (n === 20) await nats.restart();
    }
    const expected = Array.from({ length: total }, (_, index) => index + 1).flatMap((n) => [`order-${n} insert`, ...(n % 3 === 0 ? [`order-${n} update`] : [])]);
    const handled = await eventually(
      async () => {
        const all = [...(await handledBy(first)), ...(await handledBy(second))];
        expect(all.length).toBeGreaterThanOrEqual(expected.length);
        return all;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    // Exactly once per change: no change lost, none handled twice (counted per document key and operation).
    expect([...handled].sort()).toEqual([...expected].sort());
    await eventually(async () => expect(await first.events.lag(DATASTORE_CHANGES_STREAM, TRIGGERS_CONSUMER)).toMatchObject({ pending: 0, ackPending: 0 }), { timeoutMs: 20_000 });
    expect([...handled].sort()).toEqual([...expected].sort());
    // The two replicas shared the work.
    expect((await handledBy(first)).length).toBeGreaterThan(0);
    expect((await handledBy(second)).length).toBeGreaterThan(0);
  }, 120_000);

  it('resumes the publisher after a restart from the position it saved: no change missed, none published twice', async () => {
    const [first, second] = replicas;
    const orders = dataSources.forCluster('ChangeCluster').db('shop').collection('orders');
    const before = (await handledBy(first)).length + (await handledBy(second)).length;
    await publisher.onModuleDestroy();
    // Changes while no publisher runs.
    for (let n = 1; n <= 5; n++) await orders.insertOne({ _id: `late-${n}` });
    publisher = new ChangePublisher(registry, deployed, dataSources, publisherEvents, loadSettings({ TESSERA_DATA_DIR: dir.path }));
    publisher.onApplicationBootstrap();
    await orders.insertOne({ _id: 'late-6' });
    const late = Array.from({ length: 6 }, (_, index) => `late-${index + 1} insert`);
    await eventually(async () => {
      const all = [...(await handledBy(first)), ...(await handledBy(second))];
      expect(all.filter((line) => line.startsWith('late-')).sort()).toEqual(late);
      expect(all).toHaveLength(before + 6);
    }, { timeoutMs: 30_000, intervalMs: 250 });
  }, 60_000);
});
