import fc from 'fast-check';
import { encodeChangeset, parseChangeset } from '../changeset/codec';
import type { Instruction } from '../changeset/types';
import { baseChangeset, generate, storeWith, type Step } from '../merge/scenario.test';
import type { UploadChangeset } from '../wire/body';
import { compactChangesets } from './compaction';
import { ServerHistory } from './server-history';
import { MemoryHistoryStorage } from './storage';

const item = { table: 'Item', object: { type: 'Int', value: 1 } } as const;
const setName = (value: string): Instruction => ({ type: 'Update', ...item, field: 'name', path: [], value: { type: 'String', value }, isDefault: false, priorSize: 0 });
const upload = (clientVersion: number, base: number, ts: number, instructions: Instruction[]): UploadChangeset => ({
  clientVersion,
  lastIntegratedServerVersion: base,
  originTimestamp: ts,
  originFileIdent: 0,
  changeset: encodeChangeset({ instructions }),
});
const progress = (clientVersion: number, serverVersion: number) => ({ progressClientVersion: clientVersion, progressServerVersion: serverVersion, lockedServerVersion: serverVersion });

async function setup(): Promise<{ storage: MemoryHistoryStorage; history: ServerHistory; a: number; b: number }> {
  const storage = new MemoryHistoryStorage();
  let salt = 100n;
  const history = new ServerHistory(storage, 'p', { randomSalt: () => salt++ });
  const a = (await history.registerClientFile()).ident;
  const b = (await history.registerClientFile()).ident;
  const r = await history.integrateUpload(a, [upload(1, 0, 10, baseChangeset([]))], progress(1, 0));
  expect(r.ok).toBe(true);
  return { storage, history, a, b };
}

describe('client file registry and IDENT validation', () => {
  it('allocates idents from 2 with nonzero salts', async () => {
    const history = new ServerHistory(new MemoryHistoryStorage(), 'p');
    const first = await history.registerClientFile();
    const second = await history.registerClientFile();
    expect([first.ident, second.ident]).toEqual([2, 3]);
    expect(first.salt).toBeGreaterThan(0n);
    expect(first.salt).toBeLessThan(1n << 63n);
    expect(history.saltForNewVersions).toBeGreaterThan(0n);
  });

  it('answers each bad IDENT with the code the reference server uses', async () => {
    const { storage, history, b } = await setup();
    const salt = (await storage.getClientFile('p', b))?.salt ?? 0n;
    const good = { clientFileIdent: b, clientFileIdentSalt: salt, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n };
    expect(await history.bootstrapClient(good)).toMatchObject({ ok: true });
    expect(await history.bootstrapClient({ ...good, clientFileIdent: 99 })).toMatchObject({ ok: false, code: 208 });
    expect(await history.bootstrapClient({ ...good, clientFileIdentSalt: 5n })).toMatchObject({ ok: false, code: 211 });
    expect(await history.bootstrapClient({ ...good, downloadServerVersion: 5, latestServerVersion: 5 })).toMatchObject({ ok: false, code: 209 });
    expect(await history.bootstrapClient({ ...good, downloadClientVersion: 3 })).toMatchObject({ ok: false, code: 210 });
    expect(await history.bootstrapClient({ ...good, latestServerVersion: 1, latestServerVersionSalt: 1n })).toMatchObject({ ok: false, code: 211 });
    expect(await history.bootstrapClient({ ...good, latestServerVersion: 1, latestServerVersionSalt: history.saltForNewVersions })).toMatchObject({ ok: true });
  });
});

describe('integrating uploads', () => {
  it('skips changesets already integrated and acknowledges the upload cursor', async () => {
    const { history, a } = await setup();
    const again = await history.integrateUpload(a, [upload(1, 0, 10, baseChangeset([])), upload(2, 1, 20, [setName('x')])], progress(3, 1));
    expect(again).toMatchObject({ ok: true, versions: [2] });
    const batch = await history.download(a, { serverVersion: 0, clientVersion: 0 });
    expect(batch).toMatchObject({ downloadServerVersion: 2, downloadClientVersion: 2, uploadClientVersion: 3, uploadServerVersion: 1, changesets: [] });
  });

  it('transforms a concurrent upload and keeps the reciprocal for the next one', async () => {
    const { storage, history, a, b } = await setup();
    // Both clients saw version 1; A renames first, B renames later (higher timestamp) without having seen A.
    expect(await history.integrateUpload(a, [upload(2, 1, 500, [setName('A')])], progress(2, 1))).toMatchObject({ ok: true, versions: [2] });
    expect(await history.integrateUpload(b, [upload(1, 1, 600, [setName('B')])], progress(1, 1))).toMatchObject({ ok: true, versions: [3] });
    // B's later write survives; A's version 2, seen from B, lost its rename: that is B's reciprocal.
    expect(storage.reciprocalCount('p', b)).toBe(1);
    // B's second change was also made before it downloaded version 2: it meets the reciprocal, not the original.
    const r = await history.integrateUpload(b, [upload(2, 1, 700, [setName('B2')])], progress(2, 1));
    expect(r).toMatchObject({ ok: true, versions: [4] });
    const toA = await history.download(a, { serverVersion: 2, clientVersion: 2 });
    expect(toA.changesets.map((c) => parseChangeset(c.changeset).instructions)).toEqual([[setName('B')], [setName('B2')]]);
    // Once B reports having integrated version 3, the reciprocal of version 2 is no longer needed.
    await history.integrateUpload(b, [], progress(2, 3));
    expect(storage.reciprocalCount('p', b)).toBe(0);
  });

  it('does not integrate twice what a process that died after its append had stored', async () => {
    const { storage, history, a } = await setup();
    // The process dies between storing the append and recording the client's progress.
    const put = storage.putClientFile.bind(storage);
    storage.putClientFile = () => Promise.reject(new Error('process died'));
    await expect(history.integrateUpload(a, [upload(2, 1, 20, [setName('x')]), upload(3, 1, 30, [setName('y')])], progress(3, 1))).rejects.toThrow('process died');
    storage.putClientFile = put;
    expect(await history.latestVersion()).toBe(3);
    // Never acknowledged, the client uploads both again, and one more: only the new one is appended.
    const again = await history.integrateUpload(a, [upload(2, 1, 20, [setName('x')]), upload(3, 1, 30, [setName('y')]), upload(4, 1, 40, [setName('z')])], progress(4, 1));
    expect(again).toMatchObject({ ok: true, versions: [4] });
    expect((await storage.readEntries('p', 1, 4)).map((e) => e.clientVersion)).toEqual([2, 3, 4]);
  });

  it('answers an unparsable changeset with 212', async () => {
    const { history, a } = await setup();
    const bad = { ...upload(2, 1, 20, []), changeset: new Uint8Array([0x0e]) };
    expect(await history.integrateUpload(a, [bad], progress(2, 1))).toMatchObject({ ok: false, code: 212 });
  });

  it('refuses versions that go backwards', async () => {
    const { history, a } = await setup();
    expect(await history.integrateUpload(a, [upload(3, 1, 1, []), upload(2, 1, 1, [])], progress(3, 1))).toMatchObject({ ok: false, code: 210 });
    expect(await history.integrateUpload(a, [upload(3, 9, 1, [])], progress(3, 1))).toMatchObject({ ok: false, code: 209 });
  });
});

describe('downloads', () => {
  it('batches by size and reports the bytes still to download', async () => {
    const { history, a, b } = await setup();
    for (let v = 2; v <= 6; v++) await history.integrateUpload(a, [upload(v, v - 1, v * 10, [setName('x'.repeat(100 * v))])], progress(v, v - 1));
    const first = await history.download(b, { serverVersion: 0, clientVersion: 0 }, 200);
    expect(first.changesets.map((c) => c.serverVersion)).toEqual([1]);
    const second = await history.download(b, { serverVersion: first.downloadServerVersion, clientVersion: 0 }, 200);
    expect(second.changesets.map((c) => c.serverVersion)).toEqual([2]);
    const total = (await history.download(b, { serverVersion: 0, clientVersion: 0 })).changesets.reduce((n, c) => n + c.changeset.length, 0);
    expect(first.downloadableBytes).toBe(total - (first.changesets[0]?.changeset.length ?? 0));
    const rest = await history.download(b, { serverVersion: second.downloadServerVersion, clientVersion: 0 });
    expect(rest.downloadableBytes).toBe(0);
    expect(rest.downloadServerVersion).toBe(6);
  });
});

describe('long histories', () => {
  it('reads past many stored slices into one batch and skips the client\'s own versions', async () => {
    const { history, a, b } = await setup();
    for (let v = 2; v <= 600; v++) {
      const who = v % 3 === 0 ? b : a;
      const r = await history.integrateUpload(who, [upload(v, v - 1, v, [setName(`n${v}`)])], progress(v, v - 1));
      expect(r.ok).toBe(true);
    }
    const batch = await history.download(b, { serverVersion: 0, clientVersion: 0 });
    expect(batch.downloadServerVersion).toBe(600);
    expect(batch.downloadClientVersion).toBe(600);
    expect(batch.changesets).toHaveLength(400);
    expect(batch.changesets.every((c) => c.originFileIdent === a)).toBe(true);
    expect(batch.downloadableBytes).toBe(0);
  });
});

describe('compaction', () => {
  const step = fc.record({ op: fc.nat(), a: fc.nat(), b: fc.nat(), c: fc.nat() });

  /** A linear history of `n` changesets, each made on the state the previous ones produce. */
  function linearHistory(base: Step[], scripts: Step[][]): Instruction[][] {
    const first = baseChangeset(base);
    const store = storeWith(first);
    return [first, ...scripts.map((s) => generate(store, s))];
  }

  it('never changes the state a client reaches, from scratch or from any cursor', () => {
    let removed = 0;
    fc.assert(
      fc.property(fc.array(step, { maxLength: 10 }), fc.array(fc.array(step, { maxLength: 8 }), { minLength: 1, maxLength: 8 }), fc.nat(), fc.nat(), (base, scripts, h, k) => {
        const history = linearHistory(base, scripts);
        const horizon = (h % history.length) + 1;
        const compacted = compactChangesets(history.slice(0, horizon));
        removed += compacted.removedInstructions;
        const after = [...compacted.changesets, ...history.slice(horizon)];
        const final = storeWith(...history).snapshot();
        expect(storeWith(...after).snapshot()).toBe(final);
        const cursor = k % (history.length + 1);
        expect(storeWith(...history.slice(0, cursor), ...after.slice(cursor)).snapshot()).toBe(final);
        expect(compacted.changesets.flat().length).toBe(history.slice(0, horizon).flat().length - compacted.removedInstructions);
      }),
      { numRuns: 1500 },
    );
    expect(removed).toBeGreaterThan(1000);
  });

  it('removes overwritten writes and everything on erased objects', () => {
    const erase: Instruction = { type: 'EraseObject', ...item };
    const r = compactChangesets([[{ type: 'CreateObject', ...item }, setName('a')], [setName('b')], [erase]]);
    expect(r.changesets).toEqual([[], [], [erase]]);
    expect(compactChangesets([[setName('a')], [setName('b')]]).changesets).toEqual([[], [setName('b')]]);
  });

  it('rewrites the stored history, shifts cumulative sizes and expires clients behind the horizon', async () => {
    const { storage, history, a, b } = await setup();
    for (let v = 2; v <= 5; v++) await history.integrateUpload(a, [upload(v, v - 1, v * 10, [setName(`n${v}`)])], progress(v, v - 1));
    const before = await history.download(b, { serverVersion: 0, clientVersion: 0 });
    expect(await history.safeCompactionHorizon()).toBe(0);
    const result = await history.compact(4);
    // The renames in versions 1..3 are overwritten within the horizon; version 4's only by version 5, beyond it.
    expect(result.removedInstructions).toBe(3);
    expect(result.rewrittenVersions).toEqual([1, 2, 3]);
    expect(result.expiredClients).toEqual([a, b]);
    const bSalt = (await storage.getClientFile('p', b))?.salt ?? 0n;
    expect(
      await history.bootstrapClient({ clientFileIdent: b, clientFileIdentSalt: bSalt, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n }),
    ).toMatchObject({ ok: false, code: 222 });
    const fresh = await history.registerClientFile();
    const boot = await history.download(fresh.ident, { serverVersion: 0, clientVersion: 0 });
    // Versions 2 and 3 only renamed the item and are now empty, so a new client skips them.
    expect(boot.changesets.map((c) => c.serverVersion)).toEqual([1, 4, 5]);
    const v1 = boot.changesets[0];
    expect(v1 && v1.originalChangesetSize > v1.changeset.length).toBe(true);
    expect(boot.downloadableBytes).toBe(0);
    const sizes = boot.changesets.reduce((n, c) => n + c.changeset.length, 0);
    expect((await storage.head('p')).cumulativeSize).toBe(sizes);
    expect(storeWith(...boot.changesets.map((c) => parseChangeset(c.changeset).instructions)).snapshot()).toBe(
      storeWith(...before.changesets.map((c) => parseChangeset(c.changeset).instructions)).snapshot(),
    );
  });
});
