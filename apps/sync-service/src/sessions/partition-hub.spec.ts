import { encodeChangeset, type Instruction, MemoryHistoryStorage } from '@tessera/sync-protocol';
import { type HistoryAppended, historyKey, historyKeyParts, PartitionHub } from './partition-hub';

const key = PartitionHub.key('app', '"p"');
const rename = (value: string): Instruction[] => [{ type: 'Update', table: 'Item', object: { type: 'Int', value: 1 }, field: 'name', path: [], value: { type: 'String', value }, isDefault: false, priorSize: 0 }];
const upload = (clientVersion: number, value: string) => [{ clientVersion, lastIntegratedServerVersion: 0, originTimestamp: clientVersion, originFileIdent: 0, changeset: encodeChangeset({ instructions: rename(value) }) }];
const progress = (clientVersion: number) => ({ progressClientVersion: clientVersion, progressServerVersion: 0, lockedServerVersion: 0 });

/** Two replicas over one storage, each announcing its appends to the other as the event bus would. */
function replicas(): { storage: MemoryHistoryStorage; first: PartitionHub; second: PartitionHub } {
  const storage = new MemoryHistoryStorage();
  const first = new PartitionHub(storage);
  const second = new PartitionHub(storage);
  first.announceWith((announcement) => second.historyAppendedElsewhere(announcement));
  second.announceWith((announcement) => first.historyAppendedElsewhere(announcement));
  return { storage, first, second };
}

describe('history keys', () => {
  it('name the app, its reset epoch and the partition, and give them back', () => {
    expect(historyKey('app', 0, '"a/b@c"')).toBe(PartitionHub.key('app', '"a/b@c"'));
    expect(historyKey('app', 2, '"a/b@c"')).not.toBe(historyKey('app', 0, '"a/b@c"'));
    for (const epoch of [0, 1, 12]) expect(historyKeyParts(historyKey('6560f0a1b2c3d4e5f6010203', epoch, '"a/b@c"'))).toEqual({ appId: '6560f0a1b2c3d4e5f6010203', epoch, partition: '"a/b@c"' });
  });
});

describe('the partition hub', () => {
  it('wakes sessions here and on the other replica when it appends, and tells the append hook', async () => {
    const { first, second } = replicas();
    const woken = { here: 0, there: 0 };
    first.listen(key, { historyGrew: () => woken.here++ });
    second.listen(key, { historyGrew: () => woken.there++ });
    const appended: HistoryAppended[] = [];
    first.onAppended((event) => void appended.push(event));
    const { ident } = await first.history(key).registerClientFile();
    expect(await first.integrateUpload(key, ident, upload(1, 'a'), progress(1))).toMatchObject({ ok: true, versions: [1] });
    expect(woken).toEqual({ here: 1, there: 1 });
    expect(await first.appendServerChangeset(key, rename('b'), 5)).toBe(2);
    expect(woken).toEqual({ here: 2, there: 2 });
    expect(appended).toEqual([
      { key, versions: [1] },
      { key, versions: [2] },
    ]);
    // Its own announcement, coming back on the broadcast, wakes nobody again.
    first.historyAppendedElsewhere({ partition: key, version: 2, replica: first.replica });
    expect(woken).toEqual({ here: 2, there: 2 });
    // An upload that adds nothing (progress only) wakes nobody.
    expect(await first.integrateUpload(key, ident, [], progress(1))).toMatchObject({ ok: true, versions: [] });
    expect(woken).toEqual({ here: 2, there: 2 });
  });

  it('serializes uploads racing on two replicas into one history', async () => {
    const { storage, first, second } = replicas();
    const clients = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? second : first).history(key).registerClientFile()));
    const results = await Promise.all(clients.map(({ ident }, i) => (i % 2 ? second : first).integrateUpload(key, ident, upload(1, `c${i}`), progress(1))));
    expect(results.every((result) => result.ok)).toBe(true);
    const versions = results.flatMap((result) => (result.ok ? result.versions : []));
    expect([...versions].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await storage.readEntries(key, 0, 6)).map((entry) => entry.originFileIdent).sort((a, b) => a - b)).toEqual(clients.map((c) => c.ident));
  });

  it('finds a head that moved without an announcement when it checks the heads', async () => {
    const storage = new MemoryHistoryStorage();
    const silent = new PartitionHub(storage);
    const here = new PartitionHub(storage);
    let woken = 0;
    here.listen(key, { historyGrew: () => woken++ });
    await here.checkHeads();
    expect(woken).toBe(0);
    await silent.appendServerChangeset(key, rename('x'), 1);
    await here.checkHeads();
    expect(woken).toBe(1);
    await here.checkHeads();
    expect(woken).toBe(1);
  });
});
