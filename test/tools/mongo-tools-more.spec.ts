import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { DatastoreWireService } from '@tessera/server';
import { Binary, Decimal128, EJSON, Int32, Long, ObjectId } from 'bson';
import type { MongoClient } from 'mongodb';
import type { TestHost } from '../support/test-host';
import { mongoToolsSkipReason, runTool, startWireDatastore } from './mongo-tools';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// The rest of MongoDB's database tools against the datastore service's wire server with SCRAM credentials:
// mongostat (serverStatus), mongotop (top), mongofiles (GridFS over plain CRUD) and bsondump (offline).
describe.skipIf(mongoToolsSkipReason !== undefined)(`mongostat, mongotop, mongofiles and bsondump against Tessera${mongoToolsSkipReason ? ` (skipped: ${mongoToolsSkipReason})` : ''}`, () => {
  const password = 'tools-more-secret-0123456789';
  let datastore: TestHost;
  let client: MongoClient;
  let uri: string;
  /** mongostat and mongotop want the authentication database named. */
  let adminUri: string;
  const work = makeTempDir('tessera-mongo-tools-more-');

  beforeAll(async () => {
    ({ host: datastore, uri, client } = await startWireDatastore(password));
    adminUri = `${uri}&authSource=admin`;
  });

  afterAll(async () => {
    await client?.close(true);
    await datastore?.close();
    work.remove();
  });

  it('mongostat prints two rows of counters and exits 0', async () => {
    await client.db('stat').collection('c').insertMany([{ a: 1 }, { a: 2 }]);
    const run = await runTool('mongostat', ['--uri', adminUri, '--rowcount', '2', '1']);
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/insert\s+query\s+update\s+delete\s+getmore\s+command/);
    expect(lines).toHaveLength(3);
    // --json: one sample, keyed by the server's host.
    const json = await runTool('mongostat', ['--uri', adminUri, '--rowcount', '1', '--json']);
    expect(json.code).toBe(0);
    const sample = JSON.parse(json.stdout.trim().split('\n')[0]) as Record<string, Record<string, string>>;
    expect(Object.keys(sample)).toEqual([`127.0.0.1:${datastore.nest.get(DatastoreWireService).port}`]);
    const [row] = Object.values(sample);
    expect(row).toMatchObject({ set: 'tessera', repl: 'PRI' });
    expect(Number(row.conn)).toBeGreaterThanOrEqual(1);
  });

  it('mongotop lists a namespace that was written and exits 0', async () => {
    const coll = client.db('topdb').collection('written');
    await coll.insertOne({ a: 1 });
    const running = runTool('mongotop', ['--uri', adminUri, '--rowcount', '1', '--json', '1']);
    // Writes while mongotop takes its two samples.
    const writing = (async () => {
      for (let i = 0; i < 20; i++) {
        await coll.insertOne({ i });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const [run] = await Promise.all([running, writing]);
    expect(run.code).toBe(0);
    const diff = JSON.parse(run.stdout.trim().split('\n')[0]) as { totals: Record<string, { total: { count: number }; write: { count: number } }> };
    expect(diff.totals['topdb.written']).toBeDefined();
    expect(diff.totals['topdb.written'].write.count).toBeGreaterThan(0);
    // The grid output names it too.
    const grid = await runTool('mongotop', ['--uri', adminUri, '--rowcount', '1', '1']);
    expect(grid.code).toBe(0);
    expect(grid.stdout).toContain('topdb.written');
  });

  it('mongofiles puts, lists, gets and deletes a 3 MB file byte for byte', async () => {
    const content = randomBytes(3 * 1024 * 1024 + 12345);
    const local = join(work.path, 'blob.bin');
    writeFileSync(local, content);
    const files = (...args: string[]) => runTool('mongofiles', ['--uri', uri, '--db', 'gridfs', ...args]);
    const put = await files('--local', local, 'put', 'stored/blob.bin');
    expect(put.stderr).toContain('added gridFile: stored/blob.bin');
    expect(put.code).toBe(0);
    const list = await files('list');
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`stored/blob.bin\t${content.length}`);
    const back = join(work.path, 'back.bin');
    const get = await files('--local', back, 'get', 'stored/blob.bin');
    expect(get.code).toBe(0);
    const read = readFileSync(back);
    expect(read.length).toBe(content.length);
    expect(sha256(read)).toBe(sha256(content));
    // What mongofiles stored is GridFS as the drivers read it: 255 KiB chunks and a files document.
    const stored = await client.db('gridfs').collection('fs.files').findOne({ filename: 'stored/blob.bin' });
    expect(stored).toMatchObject({ length: content.length, chunkSize: 255 * 1024 });
    expect(await client.db('gridfs').collection('fs.chunks').countDocuments({ files_id: stored?._id })).toBe(Math.ceil(content.length / (255 * 1024)));
    const removed = await files('delete', 'stored/blob.bin');
    expect(removed.code).toBe(0);
    expect((await files('list')).stdout).not.toContain('stored/blob.bin');
    expect(await client.db('gridfs').collection('fs.chunks').countDocuments()).toBe(0);
  });

  it('bsondump prints a dumped collection as canonical Extended JSON', async () => {
    const docs = [
      { _id: new ObjectId(), n: new Int32(1), big: Long.fromString('9007199254740993'), price: Decimal128.fromString('9.99'), at: new Date(0), raw: new Binary(Buffer.from([1, 2, 3]), 0) },
      { _id: new ObjectId(), n: new Int32(2), nested: { list: ['a', 1.5] } },
    ];
    await client.db('dumpme').collection('things').insertMany(docs);
    const out = join(work.path, 'dump');
    const dump = await runTool('mongodump', ['--uri', uri, '--db', 'dumpme', '--out', out]);
    expect(dump.code).toBe(0);
    expect(readdirSync(join(out, 'dumpme'))).toContain('things.bson');
    const run = await runTool('bsondump', [join(out, 'dumpme', 'things.bson')]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('2 objects found');
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.map((line) => EJSON.stringify(EJSON.parse(line, { relaxed: false }), { relaxed: false }))).toEqual(docs.map((doc) => EJSON.stringify(doc, { relaxed: false })));
    expect(lines[0]).toContain('"n":{"$numberInt":"1"}');
    expect(lines[0]).toContain('"big":{"$numberLong":"9007199254740993"}');
  });
});
