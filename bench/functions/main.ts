/**
 * Function runtime benchmark: calls per second and p50/p99 latency of a function returning a small document,
 * (1) as a plain in-process JavaScript call (the floor) and (2) through FunctionRuntimeService in-process
 * (warm sandbox, arguments and result crossing the isolate boundary as EJSON, execution log recorded), one
 * call at a time and then 4 in flight over 2 warm sandboxes.
 * (3) The same call over a real nats-server: a runtime replica answering `functions.execution.run`, called
 * through the MessageBus (nats-leg.ts); skipped, saying why, when no nats-server binary is installed.
 * Target: warm call overhead (runtime p50 minus floor p50) under 0.2 ms in-process.
 */
import 'reflect-metadata';
import { NodeHttpPort, FunctionRuntimeService, type ExecuteFunctionRequest } from '@tessera/function-runtime';
import { InMemoryAppFunctions, InMemoryDataAccess, InMemoryExecutionLogStore, InMemoryValues } from '@tessera/function-runtime/testing';
import { startNatsLeg } from './nats-leg';

// The one function under test: called directly for the floor, deployed as source.js for the runtime.
function product(id: string): Record<string, unknown> {
  return { _id: id, name: 'widget', price: 9.99, tags: ['red', 'small'], inStock: true, qty: 3 };
}
const SOURCE = `exports = ${product.toString()};`;
const WARMUP = 2_000;
const CALLS = Number(process.env['BENCH_CALLS'] ?? 20_000);

interface Stats {
  callsPerSecond: number;
  p50Us: number;
  p99Us: number;
}

async function measure(label: string, call: (i: number) => unknown): Promise<Stats> {
  for (let i = 0; i < WARMUP; i++) await call(i);
  const latencies = new Float64Array(CALLS);
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) {
    const t = process.hrtime.bigint();
    await call(i);
    latencies[i] = Number(process.hrtime.bigint() - t) / 1_000;
  }
  const totalSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort();
  const stats = {
    callsPerSecond: CALLS / totalSeconds,
    p50Us: latencies[Math.floor(CALLS * 0.5)],
    p99Us: latencies[Math.floor(CALLS * 0.99)],
  };
  console.log(
    `${label.padEnd(34)} ${stats.callsPerSecond.toFixed(0).padStart(9)} calls/s   p50 ${stats.p50Us.toFixed(1).padStart(8)} us   p99 ${stats.p99Us.toFixed(1).padStart(8)} us`,
  );
  return stats;
}

/** The same measurement with `concurrency` calls in flight at once (throughput across warm sandboxes). */
async function measureConcurrent(label: string, concurrency: number, call: (i: number) => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < WARMUP; i++) await call(i);
  const latencies = new Float64Array(CALLS);
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < CALLS; i = next++) {
        const t = process.hrtime.bigint();
        await call(i);
        latencies[i] = Number(process.hrtime.bigint() - t) / 1_000;
      }
    }),
  );
  const totalSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort();
  const stats = { callsPerSecond: CALLS / totalSeconds, p50Us: latencies[Math.floor(CALLS * 0.5)], p99Us: latencies[Math.floor(CALLS * 0.99)] };
  console.log(
    `${label.padEnd(34)} ${stats.callsPerSecond.toFixed(0).padStart(9)} calls/s   p50 ${stats.p50Us.toFixed(1).padStart(8)} us   p99 ${stats.p99Us.toFixed(1).padStart(8)} us`,
  );
  return stats;
}

async function main(): Promise<void> {
  const functions = new InMemoryAppFunctions();
  functions.deploy('bench-app', { product: SOURCE });
  const config = {
    dependencies: {
      functions,
      dataAccess: new InMemoryDataAccess(),
      values: new InMemoryValues(),
      http: new NodeHttpPort(),
      logs: new InMemoryExecutionLogStore(10_000),
    },
    options: { timeLimitMs: 10_000, memoryLimitMb: 128, sandboxesPerApp: 2 },
  };
  const runtime = new FunctionRuntimeService(config);

  const request = (i: number): ExecuteFunctionRequest => ({
    appId: 'bench-app',
    name: 'product',
    arguments: [`id-${i}`],
    caller: { type: 'user', user: { id: 'bench-user', type: 'normal', data: {}, custom_data: {}, identities: [] } },
    origin: 'client',
  });

  console.log(`function runtime bench: ${CALLS} sequential calls after ${WARMUP} warm-up calls, node ${process.version}`);
  const floor = await measure('plain in-process call (floor)', (i) => product(`id-${i}`));
  const viaRuntime = await measure('runtime in-process (warm sandbox)', (i) => runtime.execute(request(i)));
  await measureConcurrent('runtime in-process, 4 in flight', 4, (i) => runtime.execute(request(i)));
  await runtime.close();
  const natsLeg = await startNatsLeg(config, 'bench-app', 'product');
  if (natsLeg) {
    try {
      await measure('runtime over NATS (real server)', (i) => natsLeg.call(i));
    } finally {
      await natsLeg.close();
    }
  }

  const overheadUs = viaRuntime.p50Us - floor.p50Us;
  console.log(`warm call overhead p50: ${(overheadUs / 1000).toFixed(3)} ms (target < 0.2 ms): ${overheadUs < 200 ? 'met' : 'NOT met'}`);
  console.log(`ratio runtime/floor p50: ${(viaRuntime.p50Us / floor.p50Us).toFixed(1)}x`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
