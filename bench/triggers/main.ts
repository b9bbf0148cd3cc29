/**
 * Database triggers benchmark, standalone (one process: the real host with every service, the in-process
 * durable stream): documents inserted into a linked cluster by another writer, each carrying its insert
 * time, reach a database trigger's function, which logs how long that took (same clock).
 *
 * Measured:
 * - burst: N documents inserted as fast as possible; events/s from the first insert to the last function run;
 * - steady: RATE documents/s for SECONDS; lag from insert to function run, p50 and p99.
 * Baseline in the same run, same inserts: the raw change feed (`watch()` on the same cluster, no stream, no
 * function), on a collection no trigger watches. The last line gives the ratios to the baseline.
 * The same burst also goes to an unordered trigger (`unordered: true`), whose changes run concurrently.
 * Goal (issue 19): 2,000 events/s with p99 lag under 200 ms.
 */
import { emptyApp, type AppConfig } from '@tessera/app-config';
import { Subjects } from '@tessera/contracts';
import { type CollectionHandle } from '@tessera/datastore';
import { ChangePublisher } from '@tessera/function-runtime';
import { MessageBus } from '@tessera/messaging';
import { AppRegistry, DataSources, DeploymentStore, LogStore } from '@tessera/platform';
import { startHost } from '@tessera/server';
import { loadSettings } from '@tessera/settings';
import { deployTestApp, makeTempDir } from '@tessera/testing';
import { benchServerSettings, loadAverage } from '../support/processes';

const BURST = Number(process.env['BENCH_BURST'] ?? 5_000);
const RATE = Number(process.env['BENCH_RATE'] ?? 2_000);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 4);
const TICK_MS = 10;

function benchApp(): AppConfig {
  const app = emptyApp('triggersbench');
  app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'BenchCluster' } }, collectionRules: [], rules: [], webhooks: [] });
  app.functions.push({ config: { name: 'onEvent', private: true }, source: 'exports = function (changeEvent) { console.log(String(Date.now() - changeEvent.fullDocument.t)); };' });
  // App Services' defaults: ordered (one change at a time), inserts of one collection.
  app.triggers.push({ name: 'onEvent', type: 'DATABASE', function_name: 'onEvent', config: { service_name: 'mongodb-atlas', database: 'bench', collection: 'events', operation_types: ['INSERT'], full_document: true } });
  app.triggers.push({ name: 'onAnyEvent', type: 'DATABASE', function_name: 'onEvent', config: { service_name: 'mongodb-atlas', database: 'bench', collection: 'unordered', operation_types: ['INSERT'], full_document: true, unordered: true } });
  return app;
}

interface Phase {
  events: number;
  seconds: number;
  lags: number[];
}

/** Inserts `count` documents in batches (as fast as possible, or `rate` per second), each with its insert time. */
async function insert(collection: CollectionHandle, count: number, rate?: number): Promise<number> {
  const start = Date.now();
  let sent = 0;
  while (sent < count) {
    const due = rate === undefined ? count : Math.min(count, Math.floor(((Date.now() - start) / 1000) * rate) + 1);
    const batch = Math.min(rate === undefined ? 500 : due - sent, count - sent);
    if (batch > 0) {
      const t = Date.now();
      await collection.insertMany(Array.from({ length: batch }, (_, i) => ({ n: sent + i, t })));
      sent += batch;
    }
    if (rate !== undefined) await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  return start;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

function report(name: string, phase: Phase): string {
  const sorted = [...phase.lags].sort((a, b) => a - b);
  return `${name.padEnd(34)} ${(phase.events / phase.seconds).toFixed(0).padStart(7)} events/s   lag p50 ${percentile(sorted, 0.5).toFixed(0).padStart(4)} ms   p99 ${percentile(sorted, 0.99).toFixed(0).padStart(5)} ms   (${phase.events} events)`;
}

/** The raw change feed: every insert of `collection` as `watch()` delivers it. */
async function feedPhase(collection: CollectionHandle, count: number, rate?: number): Promise<Phase> {
  const stream = collection.watch([], {});
  const lags: number[] = [];
  let last = 0;
  const reading = (async () => {
    for await (const event of stream) {
      if (event.operationType !== 'insert') continue;
      last = Date.now();
      lags.push(last - Number((event.fullDocument as { t: number }).t));
      if (lags.length >= count) break;
    }
  })();
  const start = await insert(collection, count, rate);
  await reading;
  await stream.close();
  return { events: lags.length, seconds: (last - start) / 1000, lags };
}

/** The trigger: its function's logged lags, read from the app's logs once every run is there. */
async function triggerPhase(collection: CollectionHandle, logs: LogStore, appId: string, count: number, rate?: number): Promise<Phase> {
  const since = new Date();
  const start = await insert(collection, count, rate);
  const deadline = Date.now() + 120_000;
  let entries = await logs.list(appId, { types: ['DB_TRIGGER'], start: since, limit: count + 1 });
  while (entries.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    entries = await logs.list(appId, { types: ['DB_TRIGGER'], start: since, limit: count + 1 });
  }
  if (entries.length < count) throw new Error(`only ${entries.length} of ${count} trigger runs within two minutes`);
  const lags = entries.map((entry) => Number(entry.messages?.[0]));
  const finished = Math.max(...entries.map((entry) => Date.parse(entry.completed)));
  return { events: entries.length, seconds: (finished - start) / 1000, lags };
}

async function main(): Promise<void> {
  const dataDir = makeTempDir('tessera-bench-triggers-');
  const host = await startHost({ ...loadSettings({ ...benchServerSettings, PORT: '0', HOST: '127.0.0.1', TESSERA_DATA_DIR: dataDir.path, LOG_LEVEL: 'silent', TESSERA_EXAMPLE_APP: '' }) });
  try {
    const stores = { apps: host.nest.get(AppRegistry), deployments: host.nest.get(DeploymentStore) };
    const config = benchApp();
    const { appId, deployment } = await deployTestApp(stores, 'triggersbench', config);
    await host.nest.get(MessageBus).emit(Subjects.AppsDeploymentChanged, { appId, deploymentId: deployment._id, version: deployment.version });
    const publisher = host.nest.get(ChangePublisher);
    for (let waited = 0; !publisher.following.includes(`${appId}/mongodb-atlas`); waited += 50) {
      if (waited > 30_000) throw new Error('the change publisher does not follow the bench cluster');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const db = host.nest.get(DataSources).forService(config, 'mongodb-atlas').client.db('bench');
    const logs = host.nest.get(LogStore);
    // Warm-up: the feed followed, the sandbox warm.
    await triggerPhase(db.collection('events'), logs, appId, 50);

    console.log(`Triggers bench (standalone, one process): burst ${BURST}, steady ${RATE}/s for ${SECONDS} s, load average ${loadAverage()}`);
    const feedBurst = await feedPhase(db.collection('feed'), BURST);
    console.log(report('change feed, burst (baseline)', feedBurst));
    const triggerBurst = await triggerPhase(db.collection('events'), logs, appId, BURST);
    console.log(report('trigger, burst', triggerBurst));
    console.log(report('unordered trigger, burst', await triggerPhase(db.collection('unordered'), logs, appId, BURST)));
    const steady = RATE * SECONDS;
    const feedSteady = await feedPhase(db.collection('feed'), steady, RATE);
    console.log(report(`change feed, ${RATE}/s (baseline)`, feedSteady));
    const triggerSteady = await triggerPhase(db.collection('events'), logs, appId, steady, RATE);
    console.log(report(`trigger, ${RATE}/s`, triggerSteady));
    const p99 = percentile([...triggerSteady.lags].sort((a, b) => a - b), 0.99);
    const rate = triggerBurst.events / triggerBurst.seconds;
    console.log(`goal 2,000 events/s with p99 lag < 200 ms: ${rate >= 2_000 && p99 < 200 ? 'met' : 'not met'} (${rate.toFixed(0)} events/s, p99 ${p99.toFixed(0)} ms at ${RATE}/s)`);
    console.log(`ratio to the change feed: burst events/s ${(rate / (feedBurst.events / feedBurst.seconds)).toFixed(3)}, steady p99 lag ${(p99 / Math.max(1, percentile([...feedSteady.lags].sort((a, b) => a - b), 0.99))).toFixed(1)}x`);
  } finally {
    await host.close();
    dataDir.remove();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
