// End-to-end convergence: simulated clients that merge downloads into their unsynced changes the way
// realm-core clients do (transforming incoming server changesets against their local changesets after the
// changeset's last_integrated_client_version, keeping the transformed locals as reciprocals), talking to
// ServerHistory through uploads and downloads in random interleavings. After everyone has synced, every
// client's state equals the state of the server history.
import fc from 'fast-check';
import { parseChangeset } from '../changeset/codec';
import { baseChangeset, generate, storeWith, type Step } from '../merge/scenario.test';
import type { ObjectStore } from '../state/object-store';
import { ClientHistory } from './client-history';
import { type DownloadCursor, ServerHistory } from './server-history';
import { MemoryHistoryStorage } from './storage';

class SimClient {
  readonly history = new ClientHistory();
  uploaded = 0;

  constructor(
    readonly ident: number,
    readonly store: ObjectStore,
    private readonly clock: () => number,
  ) {}

  get version(): number {
    return this.history.version;
  }

  get cursor(): DownloadCursor {
    return this.history.cursor;
  }

  write(steps: Step[]): void {
    const instructions = generate(this.store, steps);
    if (instructions.length > 0) this.history.commit(instructions, this.clock());
  }

  async upload(server: ServerHistory): Promise<void> {
    const r = await server.integrateUpload(this.ident, ClientHistory.uploadChangesets(this.history.after(this.uploaded)), {
      progressClientVersion: this.version,
      progressServerVersion: this.cursor.serverVersion,
      lockedServerVersion: this.cursor.serverVersion,
    });
    if (!r.ok) throw new Error(`upload refused: ${r.code} ${r.message}`);
    this.uploaded = this.version;
  }

  async download(server: ServerHistory, maxBytes?: number): Promise<void> {
    const batch = await server.download(this.ident, this.cursor, maxBytes);
    const cursor = { serverVersion: batch.downloadServerVersion, clientVersion: batch.downloadClientVersion };
    for (const instructions of this.history.integrate(this.ident, batch.changesets, cursor)) this.store.applyChangeset(instructions);
  }
}

async function serverState(storage: MemoryHistoryStorage, history: ServerHistory): Promise<string> {
  const entries = await storage.readEntries('p', 0, await history.latestVersion());
  return storeWith(...entries.map((e) => parseChangeset(e.changeset).instructions)).snapshot();
}

describe('clients and server converge', () => {
  const action = fc.record({ client: fc.nat(), kind: fc.nat(), steps: fc.array(fc.record({ op: fc.nat(), a: fc.nat(), b: fc.nat(), c: fc.nat() }), { minLength: 1, maxLength: 5 }) });

  it('reaches one state on every client and the server after random interleavings', async () => {
    let concurrentUploads = 0;
    let totalUploads = 0;
    let totalWrites = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 3 }), fc.array(action, { minLength: 12, maxLength: 40 }), fc.boolean(), async (n, actions, smallBatches) => {
        const storage = new MemoryHistoryStorage();
        const history = new ServerHistory(storage, 'p');
        let t = 1000;
        const clock = (): number => (t += 1 + (t % 3 === 0 ? 0 : 1));
        const clients: SimClient[] = [];
        for (let i = 0; i < n; i++) {
          const { ident } = await history.registerClientFile();
          clients.push(new SimClient(ident, storeWith([]), clock));
        }
        // The first client creates the schema and the objects; everyone downloads them.
        const seed = clients[0];
        if (!seed) return;
        seed.history.commit(baseChangeset([]), clock());
        seed.store.applyChangeset(baseChangeset([]));
        await seed.upload(history);
        for (const c of clients) await c.download(history);
        const maxBytes = smallBatches ? 150 : undefined;
        for (const a of actions) {
          const c = clients[a.client % n];
          if (!c) continue;
          // Half the actions write, a quarter upload, a quarter download.
          const kind = a.kind % 4;
          if (kind <= 1) {
            totalWrites++;
            c.write(a.steps);
          }
          else if (kind === 2) {
            totalUploads++;
            const latest = await history.latestVersion();
            if (c.history.after(c.uploaded).some((l) => l.base < latest)) concurrentUploads++;
            await c.upload(history);
          } else await c.download(history, maxBytes);
        }
        for (let round = 0; round < 2; round++) {
          for (const c of clients) await c.upload(history);
          for (const c of clients) {
            while (c.cursor.serverVersion < (await history.latestVersion())) await c.download(history, maxBytes);
          }
        }
        const expected = await serverState(storage, history);
        for (const c of clients) expect(c.store.snapshot()).toBe(expected);
      }),
      { numRuns: 300 },
    );
    // Many uploads were made on an older base than the server's latest version, so they were merged.
    expect(concurrentUploads).toBeGreaterThan(200);
    expect(totalWrites).toBeGreaterThan(totalUploads);
  });
});
