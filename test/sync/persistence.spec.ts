import { ConvergingClient, contendedEdit, expectConverged, journal, journalItem, journalValue, itemKey, seed, seededRandom } from './converging-client';
import { partitionSync, type SyncHost, startSyncHost } from './sync-host';
import { syncUrl } from './sync-test-client';

// Protocol-level clients (the library's codec and merge, over real WebSockets) against the real host, which
// keeps the sync history in its datastore: concurrent and offline edits, reconnects and restarts of the
// host in the middle of sessions. Every client converges, and nothing the server acknowledged is lost.

const partition = 'shared';
const path = JSON.stringify(partition);

describe('sync service: clients converge across offline edits, reconnects and restarts of the host', () => {
  let host: SyncHost;

  beforeAll(async () => {
    host = await startSyncHost();
  });

  afterAll(async () => {
    await host?.close();
  });

  it('loses no acknowledged change and converges every client', async () => {
    const clientAppId = await host.createApp('sync-persistence', (app) => partitionSync(app, { read: true, write: true }));
    const tokens = new Map<ConvergingClient, string>();
    const url = async (client: ConvergingClient): Promise<string> => {
      if (!tokens.has(client)) tokens.set(client, (await host.login(clientAppId)).access);
      return syncUrl(host.url, clientAppId, tokens.get(client));
    };
    const clients = [0, 1, 2].map((i) => new ConvergingClient(`c${i}`, path));
    const [a, b, c] = clients as [ConvergingClient, ConvergingClient, ConvergingClient];
    const journals = [0, 0, 0];
    /** Journal entries by client, with the local version that carries each. */
    const written: { client: number; entry: number; version: number }[] = [];
    const random = seededRandom(16);
    const edit = (index: number, edits = 3): void => {
      const client = clients[index];
      for (let i = 0; i < edits; i++) contendedEdit(client, random);
      const entry = journals[index];
      written.push({ client: index, entry, version: journal(client, index, entry, partition) });
      journals[index] = entry + 1;
    };

    await a.connect(await url(a));
    seed(a, partition);
    await a.synced();
    for (const client of [b, c]) {
      await client.connect(await url(client));
      await client.synced();
    }

    // All online, editing the same objects at once.
    for (let round = 0; round < 4; round++) for (const index of [0, 1, 2]) edit(index);
    for (const client of clients) await client.synced();
    expectConverged(clients, journals);

    // B and C go offline and keep editing; A keeps syncing; then the host restarts under A's session.
    b.disconnect();
    c.disconnect();
    for (let round = 0; round < 3; round++) for (const index of [0, 1, 2]) edit(index);
    await a.synced();
    const acknowledgedBefore = written.filter((w) => clients[w.client].acknowledged >= w.version);
    expect(acknowledgedBefore.length).toBeGreaterThan(10);
    await host.restart();
    expect(a.online).toBe(false);

    // Before anyone uploads again, a new client downloads what the restarted host has: every acknowledged entry.
    const witness = new ConvergingClient('witness', path);
    await witness.connect(await url(witness));
    await witness.synced();
    for (const w of acknowledgedBefore) {
      const entries = witness.store.read('Item', itemKey(journalItem(w.client)), 'tags');
      expect(entries, `acknowledged entry ${w.entry} of client ${w.client}`).toContain(journalValue(w.entry));
    }
    witness.disconnect();

    // Everyone reconnects with what it kept, and uploads its offline edits.
    for (const client of clients) await client.connect(await url(client));
    for (const client of clients) await client.synced();
    expectConverged(clients, journals);

    // A restart while uploads are in flight: clients resume and upload again what was not acknowledged.
    for (const index of [0, 1, 2]) edit(index, 5);
    await host.restart();
    for (const index of [2, 1, 0]) edit(index, 2);
    for (const client of clients) await client.connect(await url(client));
    for (const index of [0, 1, 2]) edit(index);
    for (const client of clients) await client.synced();
    expectConverged(clients, journals);

    // A client that never synced before downloads the same state from the history alone.
    const late = new ConvergingClient('late', path);
    await late.connect(await url(late));
    await late.synced();
    expectConverged([...clients, late], journals);
    expect(journals.every((count) => count >= 10)).toBe(true);
    for (const client of [...clients, late]) client.disconnect();
    // Two restarts of the host: more than the default 30 s on a loaded machine.
  }, 120_000);
});
