/**
 * Distributed-mode benchmark: client function calls per second (and p50/p99 latency) through the whole path
 * a client takes, HTTP -> gateway -> NATS -> function runtime -> reply, with one and with two runtime
 * replicas, beside the same calls against standalone Tessera (all services in one process, in-process bus),
 * in one run. Every server is the built `apps/server/dist/main.js` as a child process on this machine.
 * Skips distributed mode, saying why, when no nats-server binary is installed.
 *
 * BENCH_SECONDS (default 5) per measurement, BENCH_CONCURRENCY (default 16) calls in flight.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { findNatsServer, makeTempDir, natsSkipReason, startNatsServer, startServerProcess, type ServerProcess } from '@tessera/testing';
import { zipSync } from 'fflate';
import { benchServerSettings } from '../support/processes';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 16);
const PASSWORD = 'bench-admin-password';

interface Result {
  label: string;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

function appZip(): Uint8Array {
  const files: Record<string, string> = {
    'config.json': JSON.stringify({ name: 'bench', config_version: 20210101 }),
    'auth_providers/anon-user.json': JSON.stringify({ name: 'anon-user', type: 'anon-user', disabled: false }),
    'functions/product/config.json': JSON.stringify({ name: 'product', private: false }),
    'functions/product/source.js': "exports = function (id) { return { _id: id, name: 'widget', price: 9.99, tags: ['red', 'small'], inStock: true, qty: 3 }; };",
  };
  return zipSync(Object.fromEntries(Object.entries(files).map(([path, text]) => [path, Buffer.from(text)])));
}

async function json<T>(response: Response): Promise<T> {
  if (!response.ok) throw new Error(`${response.url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Creates and pushes the bench app through the admin API; answers its client app id. */
async function deployApp(adminUrl: string): Promise<string> {
  const base = `${adminUrl}/api/admin/v3.0`;
  const { access_token: token } = await json<{ access_token: string }>(
    await fetch(`${base}/auth/providers/local-userpass/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) }),
  );
  const auth = { authorization: `Bearer ${token}` };
  const profile = await json<{ roles: { group_id: string }[] }>(await fetch(`${base}/auth/profile`, { headers: auth }));
  const group = profile.roles[0]?.group_id ?? '';
  const app = await json<{ _id: string; client_app_id: string }>(await fetch(`${base}/groups/${group}/apps`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) }));
  const pushed = await fetch(`${base}/groups/${group}/apps/${app._id}/push`, { method: 'PATCH', headers: { ...auth, 'content-type': 'application/zip' }, body: Buffer.from(appZip()) });
  if (pushed.status !== 204) throw new Error(`push: ${pushed.status} ${await pushed.text()}`);
  return app.client_app_id;
}

async function measure(label: string, gatewayUrl: string, clientAppId: string): Promise<Result> {
  const api = `${gatewayUrl}/api/client/v2.0/app/${clientAppId}`;
  const { access_token: token } = await json<{ access_token: string }>(await fetch(`${api}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
  const call = async (i: number): Promise<boolean> => {
    const response = await fetch(`${api}/functions/call`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ name: 'product', arguments: [`p-${i}`] }) });
    await response.arrayBuffer();
    return response.ok;
  };
  // Warm up: every runtime replica loads the app and warms a sandbox.
  for (let i = 0; i < 200; i++) await call(i);
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const until = Date.now() + SECONDS * 1000;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < until) {
        const begun = process.hrtime.bigint();
        if (!(await call(next++))) errors += 1;
        latencies.push(Number(process.hrtime.bigint() - begun) / 1e6);
      }
    }),
  );
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  const result = { label, callsPerSecond: latencies.length / elapsedS, p50Ms: latencies[Math.floor(latencies.length * 0.5)] ?? 0, p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0, errors };
  console.log(`${label.padEnd(34)} ${result.callsPerSecond.toFixed(0).padStart(7)} calls/s   p50 ${result.p50Ms.toFixed(2)} ms   p99 ${result.p99Ms.toFixed(2)} ms   errors ${errors}`);
  return result;
}

async function standalone(): Promise<Result> {
  const dataDir = makeTempDir('tessera-bench-standalone-');
  const server = await startServerProcess({ env: { ...benchServerSettings, TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: PASSWORD, TESSERA_EXAMPLE_APP: '' } });
  try {
    return await measure('standalone (one process)', server.url, await deployApp(server.url));
  } finally {
    await server.stop();
    dataDir.remove();
  }
}

async function distributed(options: { label?: string; env?: Record<string, string>; replicas?: 1 | 2 } = {}): Promise<Result[]> {
  const nats = await startNatsServer();
  const dataDir = makeTempDir('tessera-bench-distributed-');
  const env: Record<string, string> = { ...benchServerSettings, TESSERA_MODE: 'distributed', NATS_URL: nats.url, TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: PASSWORD, TESSERA_EXAMPLE_APP: '', TESSERA_SIGNING_KEY: randomBytes(32).toString('base64'), TESSERA_SECRETS_KEY: randomBytes(32).toString('base64'), ...options.env };
  const processes: ServerProcess[] = [];
  const start = async (service: string, extra: Record<string, string> = {}): Promise<ServerProcess> => {
    const started = await startServerProcess({ env: { ...env, TESSERA_SERVICES: service, ...extra }, timeoutMs: 90_000 });
    processes.push(started);
    return started;
  };
  try {
    // The datastore service holds every cluster (the platform's included); the other processes reach it by URI.
    const datastore = await start('datastore', { TESSERA_DATASTORE_PORT: '0' });
    const port = /datastore \(MongoDB wire protocol\): mongodb:\/\/[^/]*:(\d+)\//.exec(datastore.output())?.[1];
    if (!port) throw new Error(`the datastore service did not print its port:\n${datastore.output()}`);
    env.TESSERA_CLUSTER_URIS = `*=mongodb://127.0.0.1:${port}/?directConnection=true`;
    const admin = await start('admin-api');
    const [gateway] = await Promise.all([start('graphql-gateway'), start('function-runtime')]);
    const clientAppId = await deployApp(admin.url);
    const one = await measure(`distributed, 1 runtime replica${options.label ?? ''}`, gateway.url, clientAppId);
    if (options.replicas === 1) return [one];
    await start('function-runtime');
    const two = await measure(`distributed, 2 runtime replicas${options.label ?? ''}`, gateway.url, clientAppId);
    return [one, two];
  } finally {
    await Promise.all(processes.map((process) => process.stop()));
    await nats.stop();
    dataDir.remove();
  }
}

/** An OTLP/HTTP endpoint that accepts and discards spans (the cost measured is the services', not a collector's). */
async function spanSink(): Promise<{ url: string; close(): void }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, close: () => server.close() };
}

async function main(): Promise<void> {
  console.log(`function calls through the client API: ${CONCURRENCY} in flight, ${SECONDS} s each`);
  const alone = await standalone();
  if (!findNatsServer()) {
    console.log(`distributed: skipped (${natsSkipReason})`);
    return;
  }
  const [one, two] = await distributed();
  const sink = await spanSink();
  const ratio = process.env['BENCH_TRACE_RATIO'] ?? '1';
  let traced: Result | undefined;
  try {
    [traced] = await distributed({ label: `, tracing (ratio ${ratio})`, env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER_ARG: ratio }, replicas: 1 });
  } finally {
    sink.close();
  }
  console.log(
    `ratio: distributed/standalone ${(one.callsPerSecond / alone.callsPerSecond).toFixed(2)} (1 runtime), ${(two.callsPerSecond / alone.callsPerSecond).toFixed(2)} (2 runtimes); 2 runtimes/1 runtime ${(two.callsPerSecond / one.callsPerSecond).toFixed(2)}; traced/untraced ${((traced?.callsPerSecond ?? 0) / one.callsPerSecond).toFixed(2)}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
