/**
 * Datastore benchmark (`npm run bench:datastore`): 100,000 documents of about 1 KB in the embedded engine
 * (durable: every acknowledged write is fsynced), each operation beside the same operation on a plain
 * in-memory array queried with mingo, in the same run. The last line gives the ratios.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Query } from 'mingo';
import { update as mingoUpdate } from 'mingo/updater';
import { openEmbeddedClient, type Document } from '@tessera/datastore';

const COUNT = 100_000;
const BATCH = 1_000;
const CITIES = ['Oslo', 'Rome', 'Lima', 'Pune', 'Kyiv', 'Nara', 'Cork', 'Baku'];

function makeDoc(i: number): Document {
  return {
    _id: i,
    email: `user${i}@example.com`,
    age: i % 90,
    city: CITIES[i % CITIES.length],
    score: (i * 7919) % 1000,
    active: i % 3 === 0,
    tags: [`t${i % 10}`, `t${i % 7}`],
    createdAt: new Date(1_700_000_000_000 + i * 1000),
    bio: `${'lorem ipsum dolor sit amet '.repeat(32)}${i}`.slice(0, 850),
  };
}

/** Runs `op` until `budgetMs` elapsed (at least `minOps` times); returns operations per second. */
async function measure(budgetMs: number, minOps: number, op: (i: number) => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  let n = 0;
  for (;;) {
    await op(n++);
    const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    if (elapsed >= budgetMs && n >= minOps) return (n / elapsed) * 1000;
  }
}

/** Like measure, with `window` operations in flight at a time (writes share fsyncs: group commit). */
async function measureConcurrent(budgetMs: number, window: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  let n = 0;
  for (;;) {
    const batch: Promise<unknown>[] = [];
    for (let k = 0; k < window; k++) batch.push(op(n++));
    await Promise.all(batch);
    const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    if (elapsed >= budgetMs) return (n / elapsed) * 1000;
  }
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function random(n: number): number {
  return Math.floor(Math.random() * n);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-'));
  const client = openEmbeddedClient(dir);
  const coll = client.db('bench').collection('people');
  const array: Document[] = [];
  const docs = Array.from({ length: COUNT }, (_, i) => makeDoc(i));
  const size = Buffer.byteLength(JSON.stringify(docs[0]));
  console.log(`datastore bench: ${fmt(COUNT)} documents of about ${fmt(size)} bytes, node ${process.version}, one process`);
  await coll.createIndex({ email: 1 }, { unique: true });
  await coll.createIndex({ age: 1 });

  const rows: { name: string; unit: string; embedded: number; baseline: number }[] = [];
  const report = (name: string, unit: string, embedded: number, baseline: number) => {
    rows.push({ name, unit, embedded, baseline });
    console.log(`${name.padEnd(44)} embedded ${fmt(embedded).padStart(10)} ${unit} | array+mingo ${fmt(baseline).padStart(10)} ${unit} | ratio ${(embedded / baseline).toFixed(2)}`);
  };

  // Batched insert: insertMany of 1,000 (one fsynced log record per batch) vs pushing copies into an array.
  let t = process.hrtime.bigint();
  for (let i = 0; i < COUNT; i += BATCH) await coll.insertMany(docs.slice(i, i + BATCH));
  const insertRate = COUNT / (Number(process.hrtime.bigint() - t) / 1e9);
  t = process.hrtime.bigint();
  for (let i = 0; i < COUNT; i += BATCH) for (const doc of docs.slice(i, i + BATCH)) array.push(structuredClone(doc));
  const arrayInsertRate = COUNT / (Number(process.hrtime.bigint() - t) / 1e9);
  report(`batched insert (${fmt(BATCH)} per insertMany)`, 'docs/s', insertRate, arrayInsertRate);

  // Indexed point query: by _id and by a unique secondary index.
  const pointId = await measure(1500, 1000, (i) => coll.findOne({ _id: (i * 7919) % COUNT }));
  const pointIdBase = await measure(1500, 20, (i) => new Query({ _id: (i * 7919) % COUNT }).find(array).next());
  report('point query findOne({_id})', 'ops/s', pointId, pointIdBase);
  const pointEmail = await measure(1500, 1000, (i) => coll.findOne({ email: `user${(i * 7919) % COUNT}@example.com` }));
  const pointEmailBase = await measure(1500, 20, (i) => new Query({ email: `user${(i * 7919) % COUNT}@example.com` }).find(array).next());
  report('point query findOne({email}) (unique index)', 'ops/s', pointEmail, pointEmailBase);

  // Range query with sort and limit on an indexed field.
  const range = await measure(1500, 200, () => {
    const lo = random(80);
    return coll.find({ age: { $gte: lo, $lt: lo + 5 } }).sort({ age: 1 }).limit(20).toArray();
  });
  const rangeBase = await measure(1500, 5, () => {
    const lo = random(80);
    return new Query({ age: { $gte: lo, $lt: lo + 5 } }).find(array).sort({ age: 1 }).limit(20).all();
  });
  report('range query, sort, limit 20', 'ops/s', range, rangeBase);

  // Update by _id: $inc on one field, acknowledged once durable; 256 in flight share fsyncs.
  const updates = await measureConcurrent(2000, 256, (i) => coll.updateOne({ _id: (i * 7919) % COUNT }, { $inc: { score: 1 } }));
  const updatesBase = await measure(1500, 20, (i) => {
    const [doc] = new Query({ _id: (i * 7919) % COUNT }).find(array).all() as Document[];
    return mingoUpdate(doc, { $inc: { score: 1 } });
  });
  report('update by _id ($inc, 256 in flight)', 'ops/s', updates, updatesBase);
  const updatesSerial = await measure(1500, 50, (i) => coll.updateOne({ _id: (i * 7919) % COUNT }, { $inc: { score: 1 } }));
  console.log(`${'update by _id, one at a time (fsync each)'.padEnd(44)} embedded ${fmt(updatesSerial).padStart(10)} ops/s`);

  const check = await coll.countDocuments({});
  if (check !== COUNT) throw new Error(`expected ${COUNT} documents, found ${check}`);
  await client.close();
  rmSync(dir, { recursive: true, force: true });

  const targets = [
    insertRate >= 50_000 ? 'insert target met (>= 50,000 docs/s)' : 'insert target MISSED (< 50,000 docs/s)',
    pointId >= 30_000 ? 'point-query target met (>= 30,000 ops/s)' : 'point-query target MISSED (< 30,000 ops/s)',
  ];
  console.log(targets.join('; '));
  console.log(`ratios embedded/array+mingo: ${rows.map((r) => `${r.name.split(' (')[0]} ${(r.embedded / r.baseline).toFixed(2)}`).join(', ')}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
