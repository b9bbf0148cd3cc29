import { type ServiceName } from '@tessera/settings';
import { eventually, findNatsServer, natsSkipReason } from '@tessera/testing';
import { ConvergingClient, contendedEdit, expectConverged, journal, journalItem, journalValue, itemKey, seed, seededRandom } from './converging-client';
import { type ReplicaEnvironment, startReplicaEnvironment } from './replica-environment';
import { partitionSync, type SyncHost } from './sync-host';
import { syncUrl } from './sync-test-client';

// Several sync-service replicas serving one app: hosts in distributed mode over a real nats-server, sharing
// one datastore through Tessera's MongoDB wire server (the official driver on their side), as pods share a
// datastore service. Protocol-level clients on different replicas edit one partition at once; an append on
// one replica reaches sessions on the other through `sync.history.appended`; a client whose replica dies
// resumes on another from what it kept.

const partition = 'team';
const path = JSON.stringify(partition);

// Skipped, saying why, where nats-server is not installed.
describe.skipIf(!findNatsServer())(`sync service: two replicas share a partition${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  let environment: ReplicaEnvironment;
  const replica = (services: ServiceName[]): Promise<SyncHost> => environment.replica(services);

  beforeAll(async () => {
    environment = await startReplicaEnvironment();
  });

  afterAll(async () => {
    await environment?.close();
  });

  it('fans appends out across replicas, converges every client and resumes clients of a replica that died', async () => {
    const first = await replica(['admin-api', 'graphql-gateway', 'sync-service']);
    const second = await replica(['graphql-gateway', 'sync-service']);
    const clientAppId = await first.createApp('sync-replicas', (app) => partitionSync(app, { read: true, write: true }));
    const tokens = new Map<ConvergingClient, string>();
    // Tokens come from the first replica's client API and are good on every replica (shared signing key).
    const url = async (host: SyncHost, client: ConvergingClient): Promise<string> => {
      if (!tokens.has(client)) tokens.set(client, (await first.login(clientAppId)).access);
      return syncUrl(host.url, clientAppId, tokens.get(client));
    };
    const clients = [0, 1, 2, 3].map((i) => new ConvergingClient(`c${i}`, path));
    const [a, b, c, d] = clients as [ConvergingClient, ConvergingClient, ConvergingClient, ConvergingClient];
    const journals = clients.map(() => 0);
    const random = seededRandom(6);
    const edit = (index: number, edits = 2): void => {
      for (let i = 0; i < edits; i++) contendedEdit(clients[index], random);
      journal(clients[index], index, journals[index], partition);
      journals[index] += 1;
    };

    await a.connect(await url(first, a));
    seed(a, partition);
    await a.synced();
    await b.connect(await url(first, b));
    for (const client of [c, d]) await client.connect(await url(second, client));
    for (const client of clients) await client.synced();

    // An upload on one replica reaches a session on the other without that client asking (no MARK), about as
    // soon as it reaches a session on the same replica (the head check alone would take up to 3 s).
    const latencies = { other: [] as number[], same: [] as number[] };
    const arrived = (reader: ConvergingClient, writerIndex: number, entry: number): boolean => {
      const tags = reader.store.read('Item', itemKey(journalItem(writerIndex)), 'tags');
      return Array.isArray(tags) && tags.includes(journalValue(entry));
    };
    for (let n = 0; n < 8; n++) {
      // The writer's neighbour shares its replica; the reader is on the other one.
      const [writer, neighbour, reader, writerIndex] = n % 2 ? ([c, d, a, 2] as const) : ([a, b, c, 0] as const);
      const entry = journals[writerIndex] ?? 0;
      const started = performance.now();
      edit(writerIndex, 0);
      const times: { other?: number; same?: number } = {};
      await eventually(
        () => {
          if (times.same === undefined && arrived(neighbour, writerIndex, entry)) times.same = performance.now() - started;
          if (times.other === undefined && arrived(reader, writerIndex, entry)) times.other = performance.now() - started;
          expect(times.other !== undefined && times.same !== undefined).toBe(true);
        },
        { timeoutMs: 2_500, intervalMs: 2 },
      );
      latencies.other.push(times.other ?? NaN);
      latencies.same.push(times.same ?? NaN);
      await writer.synced();
    }
    const median = (values: number[]): string => ([...values].sort((x, y) => x - y)[values.length >> 1] ?? NaN).toFixed(1);
    console.info(`sync replicas: upload to download, median ms: on the other replica ${median(latencies.other)}, on the same replica ${median(latencies.same)}`);

    // Concurrent edits of the same objects from clients of both replicas: appends race for one head.
    for (let round = 0; round < 5; round++) for (const index of [0, 2, 1, 3]) edit(index);
    for (const client of clients) await client.synced();
    expectConverged(clients, journals);

    // The second replica dies with sessions open and uploads in flight; its clients edit on, then resume
    // on the first replica from what they kept (no client reset: `synced` fails on any protocol error).
    for (const index of [2, 3]) edit(index, 3);
    await environment.stop(second);
    await eventually(() => expect(c.online || d.online).toBe(false));
    for (const index of [2, 3, 0]) edit(index, 2);
    for (const client of [c, d]) await client.connect(await url(first, client));
    for (const client of clients) await client.synced();
    expectConverged(clients, journals);

    // A new replica joins; clients spread over both again and keep editing.
    const third = await replica(['graphql-gateway', 'sync-service']);
    for (const client of [a, d]) await client.connect(await url(third, client));
    for (let round = 0; round < 3; round++) for (const index of [3, 1, 0, 2]) edit(index);
    for (const client of clients) await client.synced();
    expectConverged(clients, journals);

    const late = new ConvergingClient('late', path);
    await late.connect(await url(third, late));
    await late.synced();
    expectConverged([...clients, late], journals);
    for (const client of [...clients, late]) client.disconnect();
    // Three hosts start in this test, and the machine may be shared: minutes, not the default 30 s.
  }, 180_000);
});
