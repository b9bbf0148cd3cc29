/**
 * Datastore wire-server benchmark (`npm run bench:datastore-wire`): 20,000 documents of about 1 KB, each
 * operation through the official driver against the datastore wire server (in this process, on loopback:
 * client and server share the CPU) beside the same operation on the embedded engine called directly, in
 * the same run. Then point queries and batched inserts through a connection authenticated with SCRAM-SHA-256
 * (a second server with credentials) beside the unauthenticated one, in the same run. The last line gives
 * the ratios: what the wire, the driver and BSON cost, and what authentication costs (goal at least 0.95).
 * Last, a user's 20-document query (`find({owner})` of 20,000 documents, 1,000 owners) through the wire
 * before and after `createIndex({owner: 1})`, with the documents each examined (explain): what an index gives.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { type Document, openEmbeddedClient, WireServer } from '@tessera/datastore';
import { fmt, measure, measureConcurrent, type Rate, timed } from '../support/rates';

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

/**
 * Batched inserts and point queries through two clients, interleaved in small slices (a batch, 50
 * queries) so a busy machine slows both alike; answers each client's operations per second.
 */
async function interleaved(clients: { open: MongoClient; authenticated: MongoClient }): Promise<Record<'open' | 'authenticated', Record<string, number>>> {
  const names = ['open', 'authenticated'] as const;
  const spent = { open: { insert: 0, query: 0 }, authenticated: { insert: 0, query: 0 } };
  const docs = Array.from({ length: COUNT }, (_, i) => makeDoc(i));
  const slice = async (name: (typeof names)[number], kind: 'insert' | 'query', work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    spent[name][kind] += performance.now() - started;
  };
  for (let i = 0; i < COUNT; i += BATCH) {
    for (const name of i % (2 * BATCH) === 0 ? names : [...names].reverse()) await slice(name, 'insert', () => clients[name].db('bench').collection('auth').insertMany(docs.slice(i, i + BATCH)));
  }
  const QUERIES = 4000;
  for (let i = 0; i < QUERIES; i += 50) {
    for (const name of i % 100 === 0 ? names : [...names].reverse()) {
      await slice(name, 'query', async () => {
        for (let j = i; j < i + 50; j += 1) await clients[name].db('bench').collection('auth').findOne({ _id: (j * 7919) % COUNT } as Document);
      });
    }
  }
  const rates = (name: (typeof names)[number]) => ({ 'batched insert docs/s': (COUNT * 1000) / spent[name].insert, 'point query ops/s': (QUERIES * 1000) / spent[name].query });
  return { open: rates('open'), authenticated: rates('authenticated') };
}

/** `find({owner})` ops/s and documents examined per query, before and after the owner index exists. */
async function ownerQueries(driver: MongoClient): Promise<{ unindexed: Rate; indexed: Rate; examined: [number, number] }> {
  const owned = driver.db('bench').collection('owned');
  await owned.insertMany(Array.from({ length: COUNT }, (_, i) => ({ ...makeDoc(i), owner: `user-${i % 1000}` })));
  const query = (i: number) => owned.find({ owner: `user-${(i * 7919) % 1000}` }).toArray();
  const examined = async () => ((await owned.find({ owner: 'user-7' }).explain('executionStats')).executionStats as Document).totalDocsExamined as number;
  const before = await examined();
  const unindexed = await measure(1500, 10, query);
  await owned.createIndex({ owner: 1 });
  const indexed = await measure(1500, 10, query);
  return { unindexed, indexed, examined: [before, await examined()] };
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
    let measured: Awaited<ReturnType<typeof interleaved>>;
    try {
      // Connect both first: the driver connects on its first operation, and the SCRAM-SHA-256 conversation
      // (with its key derivation) is the connection's cost, not that of the first batch measured.
      for (const client of [open, authenticated]) await client.db('admin').command({ ping: 1 });
      measured = await interleaved({ open, authenticated });
    } finally {
      await authenticated.close();
      await open.close();
      await secured.close();
    }
    const authRatios: string[] = [];
    for (const name of Object.keys(measured.open)) {
      const ratio = measured.authenticated[name] / measured.open[name];
      console.log(`${`${name} (SCRAM-SHA-256 vs none)`.padEnd(46)} authenticated ${fmt(measured.authenticated[name]).padStart(8)} | unauthenticated ${fmt(measured.open[name]).padStart(8)} | ratio ${ratio.toFixed(2)}`);
      authRatios.push(`${name.split(' ').slice(0, 2).join(' ')} ${ratio.toFixed(2)}`);
    }
    const owners = await ownerQueries(driver);
    const indexRatio = owners.indexed.wall / owners.unindexed.wall;
    console.log(
      `${'20-document query find({owner}) ops/s'.padEnd(46)} indexed ${fmt(owners.indexed.wall).padStart(8)} (${owners.examined[1]} docs examined) | unindexed ${fmt(owners.unindexed.wall).padStart(8)} (${owners.examined[0]} docs examined) | ratio ${indexRatio.toFixed(1)}`,
    );
    const ratios: string[] = [];
    for (const name of Object.keys(wire)) {
      const w = wire[name];
      const d = direct[name];
      console.log(`${name.padEnd(46)} wire ${fmt(w.wall).padStart(8)} (${fmt(w.cpu)} per CPU-second) | embedded ${fmt(d.wall).padStart(9)} (${fmt(d.cpu)} per CPU-second) | ratio ${(w.wall / d.wall).toFixed(2)}`);
      ratios.push(`${name.split(' ')[0]} ${(w.wall / d.wall).toFixed(2)}`);
    }
    console.log(`ratios wire/embedded: ${ratios.join(', ')}; authenticated/unauthenticated (goal >= 0.95): ${authRatios.join(', ')}; owner query indexed/unindexed ${indexRatio.toFixed(1)}`);
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
