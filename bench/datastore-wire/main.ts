/**
 * Datastore wire-server benchmark (`npm run bench:datastore-wire`): 20,000 documents of about 1 KB, each
 * operation through the official driver against the datastore wire server (in this process, on loopback:
 * client and server share the CPU) beside the same operation on the embedded engine called directly, in
 * the same run. The last line gives the ratios: what the wire, the driver and BSON cost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { type Document, openEmbeddedClient, WireServer } from '@tessera/datastore';
import { fmt, measureConcurrent, type Rate, timed } from '../support/rates';

const COUNT = 20_000;
const BATCH = 1_000;

/** A uniform view of the two clients for the operations measured. */
interface Target {
  insertMany(docs: Document[]): Promise<unknown>;
  findOne(filter: Document): Promise<unknown>;
  find(filter: Document, sort: Document, limit: number): Promise<unknown[]>;
  updateOne(filter: Document, update: Document): Promise<unknown>;
}

function makeDoc(i: number): Document {
  return { _id: i, email: `user${i}@example.com`, age: i % 90, score: (i * 7919) % 1000, bio: `${'lorem ipsum dolor sit amet '.repeat(32)}${i}`.slice(0, 850) };
}

async function run(target: Target): Promise<Record<string, Rate>> {
  const docs = Array.from({ length: COUNT }, (_, i) => makeDoc(i));
  const rates: Record<string, Rate> = {};
  rates['batched insert (1,000/insertMany) docs/s'] = await timed(
    () => COUNT,
    async () => {
      for (let i = 0; i < COUNT; i += BATCH) await target.insertMany(docs.slice(i, i + BATCH));
    },
  );
  rates['point query findOne({_id}) ops/s'] = await measureConcurrent(1500, 1, (i) => target.findOne({ _id: (i * 7919) % COUNT }));
  rates['point query, 16 in flight ops/s'] = await measureConcurrent(1500, 16, (i) => target.findOne({ _id: (i * 7919) % COUNT }));
  rates['range query (age, sort score, limit 20) ops/s'] = await measureConcurrent(1500, 1, (i) => target.find({ age: { $gte: i % 80, $lt: (i % 80) + 5 } }, { score: -1 }, 20));
  rates['update by _id ($inc), 16 in flight ops/s'] = await measureConcurrent(1500, 16, (i) => target.updateOne({ _id: (i * 7919) % COUNT }, { $inc: { score: 1 } }));
  return rates;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-wire-'));
  const server = await WireServer.start({ clustersDir: dir });
  const driver = new MongoClient(server.uri(), { appName: 'wire' });
  const embedded = openEmbeddedClient(join(dir, 'direct'));
  try {
    console.log(`datastore wire bench: ${fmt(COUNT)} documents of about 1 KB, node ${process.version}, driver and server in one process`);
    const wireColl = driver.db('bench').collection('people');
    const directColl = embedded.db('bench').collection('people');
    await wireColl.createIndex({ age: 1 });
    await directColl.createIndex({ age: 1 });
    const wire = await run({
      insertMany: (docs) => wireColl.insertMany(docs),
      findOne: (filter) => wireColl.findOne(filter),
      find: (filter, sort, limit) => wireColl.find(filter).sort(sort as Record<string, 1 | -1>).limit(limit).toArray(),
      updateOne: (filter, update) => wireColl.updateOne(filter, update),
    });
    const direct = await run({
      insertMany: (docs) => directColl.insertMany(docs),
      findOne: (filter) => directColl.findOne(filter),
      find: (filter, sort, limit) => directColl.find(filter, undefined, { sort: sort as Record<string, 1 | -1>, limit }).toArray(),
      updateOne: (filter, update) => directColl.updateOne(filter, update),
    });
    const ratios: string[] = [];
    for (const name of Object.keys(wire)) {
      const w = wire[name];
      const d = direct[name];
      console.log(`${name.padEnd(46)} wire ${fmt(w.wall).padStart(8)} (${fmt(w.cpu)} per CPU-second) | embedded ${fmt(d.wall).padStart(9)} (${fmt(d.cpu)} per CPU-second) | ratio ${(w.wall / d.wall).toFixed(2)}`);
      ratios.push(`${name.split(' ')[0]} ${(w.wall / d.wall).toFixed(2)}`);
    }
    console.log(`ratios wire/embedded: ${ratios.join(', ')}`);
  } finally {
    await driver.close();
    await embedded.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
