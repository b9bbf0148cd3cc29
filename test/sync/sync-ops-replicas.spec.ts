import { AppRegistry } from '@tessera/platform';
import { formatPartitionValue, parsePartitionValue } from '@tessera/sync-protocol';
import { historyKey, SyncCompaction } from '@tessera/sync-service';
import { eventually, findNatsServer, natsSkipReason } from '@tessera/testing';
import { ConvergingClient, contendedEdit, itemKey, seed, seededRandom } from './converging-client';
import { type ReplicaEnvironment, startReplicaEnvironment } from './replica-environment';
import { partitionSync, type SyncHost } from './sync-host';
import { syncUrl } from './sync-test-client';

// Compaction with several sync-service replicas: one replica compacts a partition while clients download it
// from another. Every client ends with the writer's state or with a client reset, never with a history it
// cannot apply (the protocol-level clients apply changesets as strictly as realm-core and throw otherwise);
// a client active on another replica is not taken for offline; a client offline longer than
// client_max_offline_days is reset instead of downloading from the compacted history.

const partition = 'shared';
const path = JSON.stringify(partition);
const day = 86_400_000;

/** A client ends well: the writer's state and no error, or a client reset (222) and nothing else. */
async function settled(client: ConvergingClient, writer: ConvergingClient): Promise<'converged' | 'reset'> {
  let outcome: 'converged' | 'reset' | undefined;
  await eventually(
    () => {
      const reset = client.errors.some((error) => error.type === 'json_error' && error.code === 222 && error.body.action === 'ClientReset');
      outcome = reset ? 'reset' : client.store.snapshot() === writer.store.snapshot() ? 'converged' : undefined;
      expect(outcome).toBeDefined();
    },
    { timeoutMs: 20_000 },
  );
  expect(client.errors.filter((error) => !(error.type === 'json_error' && error.code === 222))).toEqual([]);
  return outcome!;
}

describe.skipIf(!findNatsServer())(`sync service: compaction with two replicas${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  let environment: ReplicaEnvironment;

  beforeAll(async () => {
    environment = await startReplicaEnvironment();
  });
  afterAll(async () => {
    await environment?.close();
  });

  it('compacts on one replica while clients download from the other: each gets a consistent history or a reset', async () => {
    const first = await environment.replica(['admin-api', 'graphql-gateway', 'sync-service']);
    const second = await environment.replica(['graphql-gateway', 'sync-service']);
    const clientAppId = await first.createApp('compact-replicas', (app) => {
      partitionSync(app, { read: true, write: true });
      app.sync!.client_max_offline_days = 10;
    });
    const appId = (await first.nest.get(AppRegistry).getByClientAppId(clientAppId))._id;
    const key = historyKey(appId, 0, formatPartitionValue(parsePartitionValue(path)));
    const url = async (host: SyncHost): Promise<string> => syncUrl(host.url, clientAppId, (await first.login(clientAppId)).access);

    // The writer, on the first replica, makes a history full of overwrites: renames of shared objects, and
    // objects created, renamed and erased, whose creations compaction drops along with their updates.
    const writer = new ConvergingClient('writer', path);
    await writer.connect(await url(first));
    seed(writer, partition);
    const random = seededRandom(16);
    for (let round = 0; round < 30; round++) {
      contendedEdit(writer, random);
      const object = itemKey(1_000 + round);
      writer.write((emit) => {
        emit({ type: 'CreateObject', table: 'Item', object });
        emit({ type: 'Update', table: 'Item', object, field: '_partition', path: [], value: { type: 'String', value: partition }, isDefault: false, priorSize: 0 });
        emit({ type: 'Update', table: 'Item', object, field: 'name', path: [], value: { type: 'String', value: `draft ${round}` }, isDefault: false, priorSize: 0 });
      });
      writer.write((emit) => emit({ type: 'Update', table: 'Item', object, field: 'name', path: [], value: { type: 'String', value: `final ${round}` }, isDefault: false, priorSize: 0 }));
      if (round % 3 !== 0) writer.write((emit) => emit({ type: 'EraseObject', table: 'Item', object }));
    }
    await writer.synced();

    // A traveller syncs once on the second replica and goes offline; a resident stays on the second replica.
    const traveller = new ConvergingClient('traveller', path);
    await traveller.connect(await url(second));
    await traveller.synced();
    traveller.disconnect();
    const resident = new ConvergingClient('resident', path);
    await resident.connect(await url(second));
    await resident.synced();
    // Both active clients report how far they are (an upload carries the download progress).
    for (const client of [writer, resident]) {
      contendedEdit(client, random);
      await client.synced();
    }
    // The writer goes on: the resident downloads it but reports nothing, so its position stays behind and
    // holds compaction back, as long as it counts as active.
    for (let round = 0; round < 5; round++) contendedEdit(writer, random);
    await writer.synced();
    await resident.synced();

    // Eleven days on, seen from both replicas: the writer was last seen by the first replica and the resident
    // by the second (one day ago), the traveller eleven days ago. Only the second replica knows the resident.
    const later = Date.now() + 11 * day;
    first.nest.get(SyncCompaction).seen(appId, key, writer.ident, later - day);
    second.nest.get(SyncCompaction).seen(appId, key, resident.ident, later - day);

    // The first replica compacts while fresh clients download from the second.
    const downloaders = [0, 1, 2, 3].map((i) => new ConvergingClient(`downloader${i}`, path));
    const [run] = await Promise.all([first.nest.get(SyncCompaction).compactAll(later), ...downloaders.map(async (client) => client.connect(await url(second)))]);
    expect(run).toMatchObject({ partitions: 1, leased: 0 });
    expect(run.removedInstructions).toBeGreaterThan(0);
    expect(run.expiredClients).toBeGreaterThanOrEqual(1);
    const outcomes = [];
    for (const client of downloaders) outcomes.push(await settled(client, writer));
    // A downloader reset mid-download starts over with a fresh file and gets the same state.
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome !== 'reset') continue;
      const again = new ConvergingClient(`downloader${i}-again`, path);
      await again.connect(await url(second));
      await again.synced();
      expect(again.store.snapshot()).toBe(writer.store.snapshot());
      again.disconnect();
    }
    console.info(`sync compaction across replicas: downloaders ${outcomes.join(', ')}`);

    // The resident (active on the second replica only) and the writer keep syncing without a reset.
    for (const client of [resident, writer]) {
      contendedEdit(client, random);
      await client.synced();
    }
    await writer.synced();
    await resident.synced();
    expect(resident.store.snapshot()).toBe(writer.store.snapshot());

    // The traveller comes back on the first replica: a client reset instead of a download from compacted history.
    await traveller.connect(await url(first));
    await eventually(() => expect(traveller.errors).toEqual([expect.objectContaining({ type: 'json_error', code: 222, body: expect.objectContaining({ action: 'ClientReset' }) as unknown })]));

    // A new client downloads the compacted history from either replica and reaches the writer's state.
    for (const host of [first, second]) {
      const late = new ConvergingClient('late', path);
      await late.connect(await url(host));
      await late.synced();
      expect(late.store.snapshot()).toBe(writer.store.snapshot());
      late.disconnect();
    }
    for (const client of [writer, resident, traveller, ...downloaders]) client.disconnect();
  }, 180_000);
});
