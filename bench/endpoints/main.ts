/**
 * Endpoints benchmark: the HTTP surfaces under `/app/<client app id>/endpoint/`, over real HTTP with 20
 * keep-alive connections, beside a bare `node:http` server (the floor) in the same run. The server under
 * test is the built standalone server in its own process, as `npm start` runs it.
 *
 * Measured, each as req/s, p50, p99, server CPU per request and ratio to the floor:
 * - Data API `find` of 20 documents under rules, authenticated by an API key (each request looks the key
 *   and its user up, as App Services did), and by a bearer access token;
 * - for comparison, remote data access `find` of the same 20 documents (`functions/call` with `service`);
 * - an HTTPS endpoint (`GET /app/<id>/endpoint/trivial`, application authentication by a bearer token)
 *   calling a trivial function, and `functions/call` of the same function with the same token.
 * The last line gives the endpoint's ratio to the floor (goal >= 0.25) and to `functions/call` (goal >= 2).
 *
 * How the ratios are computed: the machine's speed may swing within a run, so the floor is not measured
 * once. After a warm-up of the floor and of each case (BENCH_WARMUP_SECONDS, 5 s), BENCH_ROUNDS rounds (4)
 * run floor, case, floor, case, ..., floor in slices of BENCH_SLICE_SECONDS (1 s, each after 0.2 s
 * unmeasured), the cases in list order in even rounds and in reverse in odd ones. A case's ratio to the floor in a round is its req/s
 * over the mean of the two floor slices beside it; the ratio printed is the median over rounds (the
 * per-round range in brackets). The endpoint and `functions/call` are neighbours in the list, so in every
 * round only a floor slice separates them, and each runs first in every other round: the endpoint's ratio
 * to `functions/call` is their req/s in the same round, median over rounds. req/s, p50, p99 and CPU per
 * request are over all of a case's slices (bench/support/interleaved.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatResult, type HttpCall, interleaveOptions, measureInterleaved, withServerBench } from '../support/http-load';
import { median, pairRatio } from '../support/interleaved';
import { loadAverage, writeJson } from '../support/processes';

const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 20);
const SEED = 200;

/** The app under test: anonymous login, user API keys, one ruled collection, the Data API enabled. */
function writeBenchApp(dir: string): void {
  writeJson(join(dir, 'config.json'), { config_version: 20210101, name: 'endpointsbench', location: 'US-VA', deployment_model: 'GLOBAL' });
  writeJson(join(dir, 'auth_providers', 'anon-user.json'), { name: 'anon-user', type: 'anon-user', disabled: false });
  writeJson(join(dir, 'auth_providers', 'api-key.json'), { name: 'api-key', type: 'api-key', disabled: false });
  writeJson(join(dir, 'functions', 'seed', 'config.json'), { name: 'seed', private: false });
  writeFileSync(
    join(dir, 'functions', 'seed', 'source.js'),
    `exports = async function (n) {
  const docs = [];
  for (let i = 0; i < n; i++) docs.push({ owner_id: context.user.id, name: 'item ' + i, n: i, visibility: i % 2 ? 'public' : 'private' });
  return (await context.services.get('mongodb-atlas').db('bench').collection('items').insertMany(docs)).insertedIds.length;
};\n`,
  );
  writeJson(join(dir, 'functions', 'trivial', 'config.json'), { name: 'trivial', private: false });
  writeFileSync(join(dir, 'functions', 'trivial', 'source.js'), 'exports = function () { return { ok: true }; };\n');
  writeJson(join(dir, 'http_endpoints', 'config.json'), [
    { route: '/trivial', http_method: 'GET', function_name: 'trivial', validation_method: 'NO_VALIDATION', respond_result: true, fetch_custom_user_data: false, create_user_on_auth: false, disabled: false, return_type: 'JSON' },
  ]);
  writeJson(join(dir, 'services', 'mongodb-atlas', 'config.json'), { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } });
  writeJson(join(dir, 'services', 'mongodb-atlas', 'rules', 'bench.items.json'), {
    database: 'bench',
    collection: 'items',
    roles: [{ name: 'owner', apply_when: { owner_id: '%%user.id' }, read: true, write: true, insert: true, delete: true, search: true }],
  });
  writeJson(join(dir, 'http_endpoints', 'data_api_config.json'), { disabled: false, versions: ['v1'], return_type: 'JSON', create_user_on_auth: false, run_as_user_id: '', run_as_user_id_script_source: '', validation_method: 'NO_VALIDATION', secret_name: '', log_function_arguments: false });
}

async function main(): Promise<void> {
  await withServerBench({ name: 'endpoints', appName: 'endpointsbench', connections: CONNECTIONS, writeApp: writeBenchApp }, async (bench) => {
    const { http, tessera, appId, base, token } = bench;
    const { port } = tessera;
    const created = await http.send(port, { method: 'POST', path: '/api/client/v2.0/auth/api_keys', token: bench.refreshToken, body: JSON.stringify({ name: 'bench' }) });
    if (created.status !== 201 && created.status !== 200) throw new Error(`API key creation failed: ${created.status} ${created.body}`);
    const apiKey = (JSON.parse(created.body) as { key: string }).key;
    await http.expectOk(port, { method: 'POST', path: `${base}/functions/call`, token, body: JSON.stringify({ name: 'seed', arguments: [SEED] }) }, (body) => body.includes(String(SEED)), 'seed');

    const findBody = JSON.stringify({ dataSource: 'mongodb-atlas', database: 'bench', collection: 'items', filter: {}, limit: 20 });
    const dataApiFind = `/app/${appId}/endpoint/data/v1/action/find`;
    const calls: Record<string, HttpCall> = {
      dataApiKey: { method: 'POST', path: dataApiFind, headers: { apikey: apiKey }, body: findBody },
      dataApiBearer: { method: 'POST', path: dataApiFind, token, body: findBody },
      remoteFind: {
        method: 'POST',
        path: `${base}/functions/call`,
        token,
        body: JSON.stringify({ name: 'find', service: 'mongodb-atlas', arguments: [{ database: 'bench', collection: 'items', query: {}, limit: { $numberInt: '20' } }] }),
      },
    };
    const twenty = (body: string): boolean => (body.match(/"name"/g) ?? []).length === 20;
    for (const [key, call] of Object.entries(calls)) await http.expectOk(port, call, twenty, key);
    // An HTTPS endpoint and functions/call of the same trivial function, both as the anonymous user.
    const trivial: Record<string, HttpCall> = {
      endpoint: { method: 'GET', path: `/app/${appId}/endpoint/trivial`, token },
      functionsCall: { method: 'POST', path: `${base}/functions/call`, token, body: JSON.stringify({ name: 'trivial', arguments: [] }) },
    };
    for (const [key, call] of Object.entries(trivial)) await http.expectOk(port, call, (body) => body.includes('"ok":true'), key);
    Object.assign(calls, trivial);

    const cases = [
      ['dataApiKey', 'Data API find of 20, API key'],
      ['dataApiBearer', 'Data API find of 20, access token'],
      ['remoteFind', 'remote data access find of 20'],
      ['endpoint', 'HTTPS endpoint, trivial function'],
      ['functionsCall', 'functions/call, trivial function'],
    ] as const;
    const options = interleaveOptions();
    const { floor, measured, samples } = await measureInterleaved(bench, cases, calls, options);
    console.log(
      `Endpoints bench: ${CONNECTIONS} connections, ${options.rounds} rounds of ${options.sliceSeconds} s slices per case, each between two floor slices; ratio: median over rounds; load average ${loadAverage()}`,
    );
    console.log(formatResult(floor, [1]));
    for (const { result, ratios } of measured) console.log(formatResult(result, ratios));
    const ratios = measured.filter(({ key }) => key !== 'endpoint').map(({ key, ratios: perRound }) => `${key} ${median(perRound).toFixed(3)}`);
    console.log(`ratio to floor: ${ratios.join(', ')}`);
    const endpoint = measured.find(({ key }) => key === 'endpoint');
    if (endpoint) {
      const toCall = measured.some(({ key }) => key === 'functionsCall') ? `, to functions/call ${pairRatio(samples, 'endpoint', 'functionsCall').toFixed(2)}x (goal >= 2x)` : '';
      console.log(`endpoint ratio: to floor ${median(endpoint.ratios).toFixed(3)} (goal >= 0.25)${toCall}`);
    }
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
