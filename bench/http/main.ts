/**
 * HTTP benchmark: Tessera's client API as users reach it, over real HTTP with 20 keep-alive connections,
 * beside a bare `node:http` server answering a small JSON body (the floor) in the same run. The server
 * under test is the built standalone server (`apps/server/dist/main.js`) in its own process, as `npm start`
 * runs it but with NODE_ENV=production as the runtime image does (see `serverNodeEnv`), so its CPU per
 * request is read from /proc and the load generator's own CPU does not count.
 *
 * Measured, each as req/s, p50, p99, server CPU per request and ratio to the floor:
 * - `functions/call` of a trivial function;
 * - a function returning 20 of the caller's documents (rules apply: the function runs as the caller);
 * - remote data access `find` of 20 documents under rules (what realm-web's `collection.find` sends);
 * - a GraphQL list of 20 documents.
 * Before those, seeding through a function's `insertMany` of 10,000 documents gives documents/s.
 * Goals (issue 15): trivial >= 15% of the floor, 20 documents >= 6%, find and GraphQL >= 10%,
 * insertMany >= 20,000 documents/s. The last line gives the ratios.
 *
 * How the ratio is computed: the machine's speed may swing within a run, so the floor is not measured once.
 * After a warm-up of the floor and of each case (BENCH_WARMUP_SECONDS, 5 s: see WARMUP_SECONDS in
 * http-load.ts), BENCH_ROUNDS rounds (4) run floor, case, floor, case, ..., floor in slices of
 * BENCH_SLICE_SECONDS (1 s, each after 0.2 s unmeasured), the cases in list order in even rounds and in
 * reverse in odd ones. A case's ratio in a round is its req/s over the mean of
 * the two floor slices beside it; the ratio printed is the median over rounds (the per-round range in
 * brackets). req/s, p50, p99 and CPU per request are over all of a case's slices (bench/support/interleaved.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatResult, type HttpCall, interleaveOptions, measureInterleaved, withServerBench } from '../support/http-load';
import { median } from '../support/interleaved';
import { cpuMs, loadAverage, serverNodeEnv, writeJson } from '../support/processes';

const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 20);
const SEED = 10_000;

/** The app under test, in the current configuration layout: anonymous login, three functions, one ruled collection. */
function writeBenchApp(dir: string): void {
  writeJson(join(dir, 'config.json'), { config_version: 20210101, name: 'httpbench', location: 'US-VA', deployment_model: 'GLOBAL' });
  writeJson(join(dir, 'auth_providers', 'anon-user.json'), { name: 'anon-user', type: 'anon-user', disabled: false });
  const functions: Record<string, string> = {
    trivial: 'exports = function () { return { ok: true }; };',
    myDocs: `exports = function () {
  return context.services.get('mongodb-atlas').db('bench').collection('items').find({ owner_id: context.user.id }).limit(20).toArray();
};`,
    seed: `exports = async function (n) {
  const docs = [];
  for (let i = 0; i < n; i++) docs.push({ owner_id: context.user.id, name: 'item ' + i, n: i, visibility: i % 2 ? 'public' : 'private', secret: 's' + i });
  const result = await context.services.get('mongodb-atlas').db('bench').collection('items').insertMany(docs);
  return result.insertedIds.length;
};`,
  };
  for (const [name, source] of Object.entries(functions)) {
    writeJson(join(dir, 'functions', name, 'config.json'), { name, private: false });
    writeFileSync(join(dir, 'functions', name, 'source.js'), `${source}\n`);
  }
  writeJson(join(dir, 'services', 'mongodb-atlas', 'config.json'), { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } });
  writeJson(join(dir, 'services', 'mongodb-atlas', 'rules', 'bench.items.json'), {
    database: 'bench',
    collection: 'items',
    filters: [],
    roles: [
      { name: 'owner', apply_when: { owner_id: '%%user.id' }, read: true, write: true, insert: true, delete: true, search: true },
      { name: 'public', apply_when: { visibility: 'public' }, fields: { secret: { read: false } }, additional_fields: { read: true }, search: true },
    ],
    schema: {
      title: 'Item',
      bsonType: 'object',
      properties: { _id: { bsonType: 'objectId' }, owner_id: { bsonType: 'string' }, name: { bsonType: 'string' }, n: { bsonType: 'int' }, visibility: { bsonType: 'string' }, secret: { bsonType: 'string' } },
    },
  });
}

async function main(): Promise<void> {
  await withServerBench({ name: 'http', appName: 'httpbench', connections: CONNECTIONS, writeApp: writeBenchApp }, async (bench) => {
    const { http, tessera, base, token } = bench;
    const { port } = tessera;
    const seedCpuBefore = cpuMs(tessera.pid);
    const seedStart = process.hrtime.bigint();
    await http.expectOk(port, { method: 'POST', path: `${base}/functions/call`, token, body: JSON.stringify({ name: 'seed', arguments: [SEED] }) }, (body) => body.includes(String(SEED)), 'seed');
    const seedSeconds = Number(process.hrtime.bigint() - seedStart) / 1e9;
    const insertRate = SEED / seedSeconds;
    // The server's CPU for the seed reads truer than its wall time on a loaded machine (the change feed may
    // still be publishing the documents when the call answers: that work is in the next case's CPU).
    const seedCpu = cpuMs(tessera.pid) - seedCpuBefore;

    const calls: Record<string, HttpCall> = {
      trivial: { method: 'POST', path: `${base}/functions/call`, token, body: JSON.stringify({ name: 'trivial', arguments: [] }) },
      docs: { method: 'POST', path: `${base}/functions/call`, token, body: JSON.stringify({ name: 'myDocs', arguments: [] }) },
      find: {
        method: 'POST',
        path: `${base}/functions/call`,
        token,
        body: JSON.stringify({ name: 'find', service: 'mongodb-atlas', arguments: [{ database: 'bench', collection: 'items', query: {}, limit: { $numberInt: '20' } }] }),
      },
      graphql: { method: 'POST', path: `${base}/graphql`, token, body: JSON.stringify({ query: '{ items(limit: 20) { _id name n visibility } }' }) },
    };
    const twenty = (body: string): boolean => (body.match(/"name"/g) ?? []).length === 20;
    await http.expectOk(port, calls['trivial'], (body) => body.includes('"ok":true'), 'trivial function');
    await http.expectOk(port, calls['docs'], twenty, '20-document function');
    await http.expectOk(port, calls['find'], twenty, 'find');
    await http.expectOk(port, calls['graphql'], twenty, 'GraphQL list');

    // BENCH_CASES=trivial,docs runs only those cases, interleaved with the floor (for profiling one path).
    const cases = [
      ['trivial', 'functions/call, trivial function'],
      ['docs', 'function returning 20 documents'],
      ['find', 'remote data access find of 20'],
      ['graphql', 'GraphQL list of 20'],
    ] as const;
    const options = interleaveOptions();
    const { floor, measured } = await measureInterleaved(bench, cases, calls, options);
    console.log(
      `HTTP bench: ${CONNECTIONS} connections, ${options.rounds} rounds of ${options.sliceSeconds} s slices per case, each between two floor slices; ratio: median over rounds; load average ${loadAverage()}`,
    );
    console.log(`server: NODE_ENV=${serverNodeEnv}${serverNodeEnv === 'production' ? ' (as the runtime image runs it)' : ''}`);
    console.log(`seed: insertMany of ${SEED.toLocaleString('en-US')} documents in one function call: ${Math.round(insertRate).toLocaleString('en-US')} documents/s (goal >= 20,000)`);
    console.log(`seed: server CPU ${seedCpu.toLocaleString('en-US')} ms (reads truer than documents/s on a loaded machine)`);
    console.log(formatResult(floor, [1]));
    for (const { result, ratios } of measured) console.log(formatResult(result, ratios));
    const goals: Record<string, number> = { trivial: 0.15, docs: 0.06, find: 0.1, graphql: 0.1 };
    const ratios = measured.map(({ key, ratios: perRound }) => `${key} ${median(perRound).toFixed(3)} (goal ${goals[key]})`);
    console.log(`ratio to floor: ${ratios.join(', ')}`);
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
