/**
 * Datastore wire-server benchmark (`npm run bench:datastore-wire`): 20,000 documents of about 1 KB, each
 * operation through the official driver against the datastore wire server (in this process, on loopback:
 * client and server share the CPU) beside the same operation on the embedded engine called directly, in
 * the same run. Then point queries and batched inserts through a connection authenticated with SCRAM-SHA-256
 * (a second server with credentials) beside the unauthenticated one, in the same run. The last line gives
 * the ratios: what the wire, the driver and BSON cost, and what authentication costs (goal at least 0.95).
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

/** Point queries and batched inserts through one driver connection (the authentication comparison). */
async function authRun(client: MongoClient): Promise<Record<string, Rate>> {
  const coll = client.db('bench').collection('auth');
  const docs = Array.from({ length: COUNT }, (_, i) => makeDoc(i));
  const rates: Record<string, Rate> = {};
  rates['batched insert'] = await timed(
    () => COUNT,
    async () => {
      for (let i = 0; i < COUNT; i += BATCH) await coll.insertMany(docs.slice(i, i + BATCH));
    },
  );
  rates['point query'] = await measureConcurrent(3000, 1, (i) => coll.findOne({ _id: (i * 7919) % COUNT } as Document));
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
    // Authentication: a server requiring credentials, measured beside the open one (fresh clusters each).
    const password = 'bench-password-0123456789';
    const secured = await WireServer.start({ clustersDir: join(dir, 'secured'), credentials: { user: 'tessera', password } });
    const authenticated = new MongoClient(`mongodb://tessera:${password}@127.0.0.1:${secured.port}/?directConnection=true`, { appName: 'auth' });
    const open = new MongoClient(server.uri(), { appName: 'open' });
    let authRates: Record<string, Rate>;
    let openRates: Record<string, Rate>;
    try {
      openRates = await authRun(open);
      authRates = await authRun(authenticated);
    } finally {
      await authenticated.close();
      await open.close();
      await secured.close();
    }
    const authRatios: string[] = [];
    for (const name of Object.keys(openRates)) {
      const ratio = authRates[name].wall / openRates[name].wall;
      console.log(`${`${name} (SCRAM-SHA-256 vs none)`.padEnd(46)} authenticated ${fmt(authRates[name].wall).padStart(8)} | unauthenticated ${fmt(openRates[name].wall).padStart(8)} | ratio ${ratio.toFixed(2)}`);
      authRatios.push(`${name.split(' ').pop() ?? name} ${ratio.toFixed(2)}`);
    }
    const ratios: string[] = [];
    for (const name of Object.keys(wire)) {
      const w = wire[name];
      const d = direct[name];
      console.log(`${name.padEnd(46)} wire ${fmt(w.wall).padStart(8)} (${fmt(w.cpu)} per CPU-second) | embedded ${fmt(d.wall).padStart(9)} (${fmt(d.cpu)} per CPU-second) | ratio ${(w.wall / d.wall).toFixed(2)}`);
      ratios.push(`${name.split(' ')[0]} ${(w.wall / d.wall).toFixed(2)}`);
    }
    console.log(`ratios wire/embedded: ${ratios.join(', ')}; authenticated/unauthenticated (goal >= 0.95): ${authRatios.join(', ')}`);
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
