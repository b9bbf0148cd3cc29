import { type DataSourceClient } from '@tessera/datastore';
import { eventually } from '@tessera/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MetricReader, startMetricReader } from '../support/metric-reader';
import { startTestHost, type TestHost } from '../support/test-host';
import { FLEXIBLE_CLUSTER, flexibleApp, FlexibleTestClient, taskSchema } from './flexible-test-client';
import { syncUrl } from './sync-test-client';

// `tessera.sync.flexible.fan_out`: from an external write's commit to the last DOWNLOAD it caused, one point
// per write that reached at least one session (bench/sync-flexible reads it over OTLP for issue 17's goal);
// `tessera.sync.flexible.delivery`: the part from the change reaching the sync service, on the same writes.
// `tessera.sync.flexible.from_feed`: the part from the change publisher reading the durable change off the feed.
describe('flexible sync fan-out latency metric', () => {
  let host: TestHost;
  let metrics: MetricReader;
  let clientAppId: string;
  let cluster: DataSourceClient;

  beforeAll(async () => {
    metrics = startMetricReader('flexible-fan-out-test');
    host = await startTestHost();
    clientAppId = (await host.createApp('flexible-fan-out', flexibleApp)).clientAppId;
    cluster = host.dataSources.forCluster(FLEXIBLE_CLUSTER);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    await metrics?.telemetry.shutdown();
  });

  const histogram = async (name: string): Promise<{ count: number; sum: number }> => {
    const [point] = await metrics.points(name);
    const value = point?.value as unknown as { count: number; sum: number } | undefined;
    return { count: value?.count ?? 0, sum: value?.sum ?? 0 };
  };
  const fanOut = () => histogram('tessera.sync.flexible.fan_out');
  // From the change reaching the sync service to the last DOWNLOAD: a part of the fan-out time, per write.
  const delivery = () => histogram('tessera.sync.flexible.delivery');
  // From the change publisher reading the durable change off the feed: between the two, per write.
  const fromFeed = () => histogram('tessera.sync.flexible.from_feed');

  it('records one point per external write that reached sessions, none for a write that reached none', async () => {
    const sessions: FlexibleTestClient[] = [];
    for (let i = 0; i < 3; i++) {
      const login = await host.anonymousLogin(clientAppId);
      const client = await FlexibleTestClient.open(syncUrl(host.url, clientAppId, login.accessToken));
      await client.openSession(1, 1, { Task: 'status == "shared"' });
      client.upload(1, taskSchema());
      sessions.push(client);
    }
    const tasks = cluster.db('app').collection('Task');
    // The change feed follows a new app's cluster within its reconcile interval: wait until a write arrives.
    let probe = 0;
    await eventually(
      async () => {
        await tasks.insertOne({ _id: `probe${probe++}`, owner_id: 'x', status: 'shared', name: 'probe' });
        await eventually(() => expect(sessions.every((s) => s.ids('Task').some((id) => id.startsWith('probe')))).toBe(true), { timeoutMs: 500 });
      },
      { timeoutMs: 20_000 },
    );
    await eventually(async () => expect((await fanOut()).count).toBeGreaterThanOrEqual(probe));
    const before = await fanOut();
    const deliveryBefore = await delivery();
    expect(deliveryBefore.count).toBe(before.count);
    const fromFeedBefore = await fromFeed();
    expect(fromFeedBefore.count).toBe(before.count);
    await tasks.insertMany([
      { _id: 'seen-1', owner_id: 'x', status: 'shared', name: 'one' },
      { _id: 'seen-2', owner_id: 'x', status: 'shared', name: 'two' },
      { _id: 'unseen', owner_id: 'x', status: 'elsewhere', name: 'none' },
    ]);
    await eventually(() => expect(sessions.every((s) => s.ids('Task').includes('seen-2'))).toBe(true));
    await eventually(async () => expect((await fanOut()).count).toBe(before.count + 2));
    // The write no session subscribes to adds nothing, also later.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await fanOut();
    expect(after.count).toBe(before.count + 2);
    expect(after.sum - before.sum).toBeGreaterThanOrEqual(0);
    expect(after.sum - before.sum).toBeLessThan(10_000);
    const deliveryAfter = await delivery();
    expect(deliveryAfter.count).toBe(deliveryBefore.count + 2);
    expect(deliveryAfter.sum - deliveryBefore.sum).toBeGreaterThan(0);
    // Commit times are whole milliseconds, so a write's fan-out may read up to 1 ms short of its delivery.
    expect(deliveryAfter.sum - deliveryBefore.sum).toBeLessThanOrEqual(after.sum - before.sum + 2);
    // Read off the feed after the commit and before reaching the sync service: within the two, to the clocks' grain.
    const fromFeedAfter = await fromFeed();
    expect(fromFeedAfter.count).toBe(fromFeedBefore.count + 2);
    expect(fromFeedAfter.sum - fromFeedBefore.sum).toBeGreaterThanOrEqual(deliveryAfter.sum - deliveryBefore.sum - 0.01);
    expect(fromFeedAfter.sum - fromFeedBefore.sum).toBeLessThanOrEqual(after.sum - before.sum + 2);
    for (const session of sessions) session.close();
  });
});
