import { type CollectionHandle, type DataSourceClient, openEmbeddedClient } from '@tessera/datastore';
import { type Instruction, ObjectStore, parseChangeset, type PrimaryKey, ServerHistory } from '@tessera/sync-protocol';
import { DatastoreHistoryStorage, HistoryHousekeeping } from '@tessera/sync-service';
import { makeTempDir } from '@tessera/testing';
import { schema } from './converging-client';

// Compaction of a history shared by replicas, on the datastore engine: what another replica reads while one
// rewrites it (or after the rewriting process died midway) leads a downloading client to the same state as
// the uncompacted history, never to an instruction on an object whose creation was compacted away; and one
// replica compacts a partition at a time.

const item = (id: number): PrimaryKey => ({ type: 'Int', value: id });
const create = (id: number): Instruction => ({ type: 'CreateObject', table: 'Item', object: item(id) });
const setName = (id: number, name: string): Instruction => ({ type: 'Update', table: 'Item', object: item(id), field: 'name', path: [], value: { type: 'String', value: name }, isDefault: false, priorSize: 0 });
const erase = (id: number): Instruction => ({ type: 'EraseObject', table: 'Item', object: item(id) });

/** The client's view: every changeset a fresh client downloads, applied in order (throws on a bad changeset). */
async function downloadedState(history: ServerHistory): Promise<string> {
  const { ident } = await history.registerClientFile();
  const store = new ObjectStore();
  let cursor = { serverVersion: 0, clientVersion: 0 };
  for (;;) {
    const batch = await history.download(ident, cursor, 64);
    for (const changeset of batch.changesets) store.applyChangeset(parseChangeset(changeset.changeset).instructions);
    expect(batch.downloadableBytes).toBeGreaterThanOrEqual(0);
    cursor = { serverVersion: batch.downloadServerVersion, clientVersion: batch.downloadClientVersion };
    if (batch.downloadServerVersion >= batch.latestServerVersion) return store.snapshot();
  }
}

/**
 * The client with the sync history's batch updates failing after `allowed` of them: a process that dies
 * while it rewrites a compacted history. Everything else passes through.
 */
function dyingAfter(client: DataSourceClient, allowed: number): DataSourceClient {
  let updates = 0;
  const collection = (handle: CollectionHandle): CollectionHandle =>
    new Proxy(handle, {
      get(target, property, receiver) {
        if (property === 'updateOne' && target.collectionName === 'history_batches') {
          return async (...args: Parameters<CollectionHandle['updateOne']>) => {
            if (++updates > allowed) throw new Error('process died while compacting');
            return target.updateOne(...args);
          };
        }
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'db') return Reflect.get(target, property, receiver) as unknown;
      return (name: string) => new Proxy(target.db(name), { get: (db, key, dbReceiver) => (key === 'collection' ? (coll: string) => collection(db.collection(coll)) : (Reflect.get(db, key, dbReceiver) as unknown)) });
    },
  });
}

describe('compaction of a shared sync history', () => {
  const dir = makeTempDir('tessera-sync-ops-compaction-');
  let client: DataSourceClient;

  beforeAll(() => {
    client = openEmbeddedClient(dir.path);
  });
  afterAll(async () => {
    await client.close();
    dir.remove();
  });

  it('leaves a consistent history for other readers when the compacting process dies midway, and finishes on the next pass', async () => {
    const partition = 'app/"crash"';
    const history = new ServerHistory(new DatastoreHistoryStorage(client), partition);
    // Objects created, renamed and erased: compaction drops their creations along with every later update.
    await history.appendServerChangeset([...schema, create(1), setName(1, 'a')], 1);
    for (let round = 0; round < 6; round++) {
      await history.appendServerChangeset([create(10 + round), setName(10 + round, `v${round}`)], 2 + round);
      await history.appendServerChangeset([setName(1, `r${round}`), setName(10 + round, `w${round}`)], 20 + round);
    }
    for (let round = 0; round < 6; round += 2) await history.appendServerChangeset([erase(10 + round)], 40 + round);
    await history.appendServerChangeset([erase(1)], 50);
    const head = await history.latestVersion();
    const expected = await downloadedState(history);

    for (const allowed of [1, 3, 6]) {
      const dying = new ServerHistory(new DatastoreHistoryStorage(dyingAfter(client, allowed)), partition);
      await expect(dying.compact(head)).rejects.toThrow('process died while compacting');
      // Another replica's fresh client downloads what the dead process left.
      expect(await downloadedState(new ServerHistory(new DatastoreHistoryStorage(client), partition))).toBe(expected);
    }
    const finished = await new ServerHistory(new DatastoreHistoryStorage(client), partition).compact(head);
    expect(finished.removedInstructions).toBeGreaterThan(0);
    expect(await downloadedState(new ServerHistory(new DatastoreHistoryStorage(client), partition))).toBe(expected);
  });

  it('lets one replica compact a partition at a time, and another take over once the lease ends', async () => {
    const first = new HistoryHousekeeping(client);
    const second = new HistoryHousekeeping(client);
    const partition = 'app/"leased"';
    const now = Date.now();
    expect(await first.claimCompaction(partition, 'replica-1', now, now + 60_000)).toBe(true);
    expect(await second.claimCompaction(partition, 'replica-2', now, now + 60_000)).toBe(false);
    // The holder may renew; the other may not release it.
    expect(await first.claimCompaction(partition, 'replica-1', now, now + 120_000)).toBe(true);
    await second.releaseCompaction(partition, 'replica-2');
    expect(await second.claimCompaction(partition, 'replica-2', now, now + 60_000)).toBe(false);
    await first.releaseCompaction(partition, 'replica-1');
    expect(await second.claimCompaction(partition, 'replica-2', now, now + 60_000)).toBe(true);
    // A holder that died: its lease ends and the partition is compacted again.
    expect(await first.claimCompaction(partition, 'replica-1', now + 61_000, now + 120_000)).toBe(true);
  });

  it('lists and purges the partitions of one app only, every reset epoch included, within a limit', async () => {
    const storage = new DatastoreHistoryStorage(client);
    const housekeeping = new HistoryHousekeeping(client);
    // `app1` and `app10`: one app id is a prefix of the other.
    const keys = ['app1/"a"', 'app1/"b"', 'app1@2/"a"', 'app10/"a"'];
    for (const key of keys) {
      const history = new ServerHistory(storage, key);
      const { ident } = await history.registerClientFile();
      await history.integrateUpload(ident, [{ clientVersion: 1, lastIntegratedServerVersion: 0, originTimestamp: 1, originFileIdent: 0, changeset: new Uint8Array(0) }], { progressClientVersion: 1, progressServerVersion: 0, lockedServerVersion: 0 });
      await history.appendServerChangeset([...schema, create(1)], 2);
      await housekeeping.noteClientsSeen(key, new Map([[ident, 1]]));
    }
    const listed = await housekeeping.partitionSizes('app1');
    expect(listed.truncated).toBe(false);
    expect(listed.partitions.map((size) => [size.key, size.versions, size.clientFiles])).toEqual([
      ['app1/"a"', 2, 1],
      ['app1/"b"', 2, 1],
      ['app1@2/"a"', 2, 1],
    ]);
    expect((await housekeeping.partitionSizes('app1', 2)).truncated).toBe(true);

    expect(await housekeeping.purgeApp('app1')).toEqual({ partitions: 3, batches: 6, clientFiles: 3 });
    expect((await housekeeping.partitionSizes('app1')).partitions).toEqual([]);
    for (const key of keys.slice(0, 3)) {
      expect(await storage.head(key)).toMatchObject({ version: 0 });
      expect(await storage.listClientFiles(key)).toEqual([]);
      expect(await housekeeping.clientsSeen(key)).toEqual(new Map());
    }
    const survivor = await housekeeping.partitionSizes('app10');
    expect(survivor.partitions.map((size) => [size.key, size.versions, size.clientFiles])).toEqual([['app10/"a"', 2, 1]]);
    expect((await housekeeping.clientsSeen('app10/"a"')).size).toBe(1);
  });

  it('keeps the latest activity of a client file whichever replica saw it', async () => {
    const replicas = [new HistoryHousekeeping(client), new HistoryHousekeeping(client)] as const;
    const partition = 'app/"seen"';
    await replicas[0].noteClientsSeen(partition, new Map([[2, 1_000], [3, 5_000]]));
    await replicas[1].noteClientsSeen(partition, new Map([[2, 4_000], [3, 2_000]]));
    expect(await replicas[0].clientsSeen(partition)).toEqual(new Map([[2, 4_000], [3, 5_000]]));
  });
});
