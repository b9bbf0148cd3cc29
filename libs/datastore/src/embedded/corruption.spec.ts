import { appendFileSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { openEmbeddedClient } from './embedded-client';
import { configureEmbeddedDatastore } from './embedded-reporting';

// Issue 14, item 3: four bytes flipped in the middle of a segment made recovery cut everything after them
// (33 of 67 acknowledged documents gone) and open the cluster as if nothing had happened.
describe('recovery of a damaged embedded log', () => {
  const lines: string[] = [];
  let dir: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    lines.length = 0;
    configureEmbeddedDatastore({ log: (level, message) => lines.push(`${level}: ${message}`) });
    dir = makeTempDir('tessera-corruption-');
  });
  afterEach(() => {
    configureEmbeddedDatastore({});
    dir.remove();
  });

  const segment = () => join(dir.path, readdirSync(dir.path).filter((f) => /^wal-\d+\.log$/.test(f)).sort().pop() as string);

  async function write67(): Promise<void> {
    const client = openEmbeddedClient(dir.path);
    const items = client.db('app').collection('items');
    for (let i = 0; i < 67; i++) await items.insertOne({ _id: i, text: `acknowledged ${i}` });
    await client.close();
  }

  function flipMiddle(): { path: string; before: Buffer } {
    const path = segment();
    const before = readFileSync(path);
    const damaged = Buffer.from(before);
    const middle = Math.floor(damaged.length / 2);
    for (let i = middle; i < middle + 4; i++) damaged[i] ^= 0xff;
    writeFileSync(path, damaged);
    return { path, before: damaged };
  }

  it('refuses to open a log damaged before its tail, names the file and offset, and changes no byte', async () => {
    await write67();
    const { path, before } = flipMiddle();
    let message = '';
    try {
      openEmbeddedClient(dir.path);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(new RegExp(`the record at byte (\\d+) of ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} .* fails its checksum, and \\d+ intact records follow it`));
    expect(message).toContain(`TESSERA_DATASTORE_TRUNCATE_LOG=${path}:`);
    expect(readFileSync(path).equals(before)).toBe(true);
    // Refused again on the next attempt: the damage is not forgotten.
    expect(() => openEmbeddedClient(dir.path)).toThrow(/corrupt/);
  });

  it('discards the log from the named point only when the operator asks, keeping the damaged bytes', async () => {
    await write67();
    const { path, before } = flipMiddle();
    const offset = Number(/TESSERA_DATASTORE_TRUNCATE_LOG=.*:(\d+)/.exec((() => {
      try {
        openEmbeddedClient(dir.path);
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })())?.[1]);
    expect(offset).toBeGreaterThan(0);
    // A point that is not where the damage is changes nothing.
    configureEmbeddedDatastore({ log: (level, message) => lines.push(`${level}: ${message}`), truncateLogAt: `${path}:${offset + 1}` });
    expect(() => openEmbeddedClient(dir.path)).toThrow(/corrupt/);
    configureEmbeddedDatastore({ log: (level, message) => lines.push(`${level}: ${message}`), truncateLogAt: `${path}:${offset}` });
    const client = openEmbeddedClient(dir.path);
    const survivors = await client.db('app').collection('items').countDocuments({});
    expect(survivors).toBeGreaterThan(0);
    expect(survivors).toBeLessThan(67);
    await client.close();
    expect(readFileSync(`${path}.damaged-${offset}`).equals(before.subarray(offset))).toBe(true);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^warn: recovery: discarded the write-ahead log from byte ${offset} of .* \\(\\d+ intact records after the damage`)));
  });

  it('cuts only a torn last record, and says so', async () => {
    await write67();
    const path = segment();
    const validSize = statSync(path).size;
    // The first half of a record: a crash in the middle of appending it.
    const whole = readFileSync(path);
    appendFileSync(path, whole.subarray(0, 40));
    const client = openEmbeddedClient(dir.path);
    expect(await client.db('app').collection('items').countDocuments({})).toBe(67);
    await client.close();
    expect(statSync(path).size).toBe(validSize);
    expect(lines).toContainEqual(`warn: recovery: cut 40 bytes off the end of ${path} at byte ${validSize}, a record torn by an interrupted write (nothing valid followed it); 67 records replayed`);
  });

  it('refuses a snapshot that does not read to its end', async () => {
    const client = openEmbeddedClient(dir.path);
    for (let i = 0; i < 20; i++) await client.db('app').collection('items').insertOne({ _id: i, pad: 'x'.repeat(200) });
    await client.store.snapshot();
    await client.close();
    const snap = join(dir.path, readdirSync(dir.path).find((f) => f.endsWith('.snap')) as string);
    const bytes = readFileSync(snap);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    writeFileSync(snap, bytes);
    expect(() => openEmbeddedClient(dir.path)).toThrow(new RegExp(`the snapshot ${snap.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is corrupt: the frame at byte \\d+`));
    expect(readFileSync(snap).equals(bytes)).toBe(true);
  });
});
