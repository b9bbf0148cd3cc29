/**
 * Flexible-sync benchmark: protocol-level clients (`com.mongodb.realm-query-sync#14`, through
 * @tessera/sync-protocol's codec) over real WebSockets against the built standalone server in its own
 * process. The documents are written by another writer: remote data access (`functions/call` of the
 * cluster service's insertOne and insertMany over HTTP), as an app's web client or backend writes them.
 * Each figure has a baseline measured in the same run:
 * - bootstrap: a new client subscribes to a query matching 100,000 documents; milliseconds from IDENT to
 *   the bootstrap's LastInBatch DOWNLOAD (goal < 3 s). Baseline: this process reading the same documents
 *   through remote data access (`find`, pages of 1,000 by `_id`, as the server pages them) and encoding
 *   them as changesets of 500 objects: the read and the encoding, minus WebSocket, rules and batching.
 * - matching: 1,000 sessions (one per connection) hold 1,000 different queries on `group`, `n` and `owner`
 *   (equalities, ranges, ORs, string operators); 100 groups of 10 sessions. One external insert at a time
 *   into a random group: milliseconds from the insert to the DOWNLOAD at the last of its 10 sessions
 *   (p50, p99; goal p99 < 5 ms), and from the first of those DOWNLOADs to the last (the spread: what the
 *   fan-out adds once the change reached the sync service). Baseline: the same writes with only those 10
 *   sessions connected, so nothing else to match. Stray DOWNLOADs (sessions the write does not concern)
 *   are counted. Opening those sessions is done before the 100,000 documents are seeded: see below.
 *   The goal's own measure is the server's: `tessera.sync.flexible.fan_out`, from a write's commit (the
 *   change feed's wall time) to the moment the last DOWNLOAD it caused was handed to its socket, which the
 *   server exports over OTLP to a receiver in this process; the client-side figure adds the insert's HTTP
 *   round trip and this process's own receiving of 1,000 WebSockets. The commit's time is taken before the
 *   store's durable write (the change reaches the feed once it is on disk), so that write's latency is in
 *   it, and beside it the same device's latency for bare O_DSYNC appends at the same pace, measured in
 *   the same run; `tessera.sync.flexible.from_feed` gives the delay from the change being durable (the change
 *   publisher reading it off the feed) to that last DOWNLOAD, what Tessera spends (the durable stream,
 *   matching, reading, sending), and `tessera.sync.flexible.delivery` the part from the change reaching the
 *   sync service, both in sub-millisecond buckets.
 * - fan-out throughput: 8 writers insert as fast as they can for BENCH_SECONDS, each insert concerning 10
 *   of the 1,000 sessions; inserts/s until the last DOWNLOAD arrived. Baseline: the same writers inserting
 *   into a collection no session syncs (the datastore and its change feed, sync doing nothing).
 * - opening a session whose query selects a few of the 100,000 documents (IDENT to its bootstrap), which
 *   shows what a bootstrap costs when no index serves the query.
 * Server CPU time (from /proc) is given beside each wall-clock figure: on a shared machine it is the steadier
 * measure of what the server spent.
 * BENCH_OBJECTS, BENCH_SESSIONS, BENCH_ROUNDS and BENCH_SECONDS scale it; BENCH_SERVER_NODE_ARGS passes
 * flags to the server's node (`--cpu-prof --cpu-prof-dir=<dir>` to profile it).
 */
import { closeSync, constants as fsConstants, mkdtempSync, openSync, rmSync, write as fsWrite } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decodeFlexibleServerMessage,
  encodeChangeset,
  encodeFlexibleClientMessage,
  type FlexibleClientMessage,
  type FlexibleDownloadMessage,
  type FlexibleServerMessage,
  type Instruction,
  parseChangeset,
  type QuerySet,
} from '@tessera/sync-protocol';
import WebSocket from 'ws';
import { histogramDelta, histogramPercentileBound, type HistogramSnapshot, OtlpMetricsReceiver } from '../support/otlp-receiver';
import { anonymousTokens, cpuMs, loadAverage, percentile, startTessera, stop, writeJson } from '../support/processes';

const OBJECTS = Number(process.env['BENCH_OBJECTS'] ?? 100_000);
const SESSIONS = Number(process.env['BENCH_SESSIONS'] ?? 1_000);
/** Writes measured per matching phase: their p99 is the tenth worst of 1,000 (of 200 it was the second). */
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 1_000);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const PER_GROUP = 10;
const GROUPS = Math.max(1, Math.floor(SESSIONS / PER_GROUP));
const WRITERS = 8;
/** The server's own histogram of a write's commit to the last DOWNLOAD it caused (apps/sync-service change-delivery.ts). */
const FAN_OUT_METRIC = 'tessera.sync.flexible.fan_out';
/** The same from the change publisher reading the durable change off the feed (sub-millisecond buckets). */
const FROM_FEED_METRIC = 'tessera.sync.flexible.from_feed';
/** Its part from the change reaching the sync service (matching, reading, sending; monotonic clock, sub-millisecond buckets). */
const DELIVERY_METRIC = 'tessera.sync.flexible.delivery';
const OBJECTS_PER_CHANGESET = 500;
const protocols = Array.from({ length: 13 }, (_, i) => `com.mongodb.realm-query-sync#${14 - i}`);
/** The group of the seeded documents: no matching session's query holds it. */
const SEED_GROUP = -1;

interface Item {
  _id: number;
  group: number;
  n: number;
  owner: string;
  name: string;
}

// ---- the client ----

/** One flexible-sync session on its own WebSocket: BIND as a new file, IDENT with one query set. */
class FlexibleBenchClient {
  /** Called with the arrival time of every steady-state DOWNLOAD that carries changesets. */
  onChange: (at: bigint, message: FlexibleDownloadMessage) => void = () => undefined;
  private bootstrapDone: ((at: bigint) => void) | undefined;
  private readonly bootstrap: FlexibleDownloadMessage[] = [];
  private failure: Error | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => this.receive(decodeFlexibleServerMessage(new Uint8Array(data)), process.hrtime.bigint()));
  }

  static connect(url: string): Promise<FlexibleBenchClient> {
    return new Promise((done, fail) => {
      const ws = new WebSocket(url, protocols);
      ws.on('open', () => done(new FlexibleBenchClient(ws)));
      ws.on('unexpected-response', (_request, response) => fail(new Error(`upgrade refused: ${response.statusCode}`)));
      ws.on('error', fail);
    });
  }

  /**
   * BIND, IDENT with `queries` at query version 1, and the bootstrap. Resolves with the time IDENT left,
   * the time the LastInBatch DOWNLOAD arrived and the bootstrap's messages.
   */
  subscribe(queries: QuerySet): Promise<{ sent: bigint; arrived: bigint; messages: FlexibleDownloadMessage[] }> {
    let sent = 0n;
    const finished = new Promise<bigint>((done, fail) => {
      const timer = setTimeout(() => fail(this.failure ?? new Error('no bootstrap within 300 s')), 300_000);
      this.bootstrapDone = (at) => (clearTimeout(timer), done(at));
      this.identify = (ident, salt) => {
        sent = process.hrtime.bigint();
        this.send({ type: 'ident', sessionIdent: 1, clientFileIdent: ident, clientFileIdentSalt: salt, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n, queryVersion: 1, queries });
      };
    });
    this.send({ type: 'bind', sessionIdent: 1, data: { schemaVersion: 0, sessionReason: 0 }, token: '', needClientFileIdent: true, isSubserver: false });
    return finished.then((arrived) => ({ sent, arrived, messages: this.bootstrap.splice(0) }));
  }

  close(): void {
    this.ws.terminate();
  }

  private identify: (ident: number, salt: bigint) => void = () => undefined;

  private send(message: FlexibleClientMessage): void {
    this.ws.send(encodeFlexibleClientMessage(message), { binary: true });
  }

  private receive(message: FlexibleServerMessage, at: bigint): void {
    switch (message.type) {
      case 'ident':
        this.identify(message.clientFileIdent, message.clientFileIdentSalt);
        return;
      case 'download':
        if (message.batchState === 'steadyState') {
          if (message.changesets.length > 0) this.onChange(at, message);
          return;
        }
        this.bootstrap.push(message);
        if (message.batchState === 'lastInBatch') this.bootstrapDone?.(at);
        return;
      case 'error':
      case 'json_error':
      case 'query_error':
        this.failure = new Error(`server ${message.type}: ${JSON.stringify(message, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))}`);
        console.error(this.failure.message);
        return;
      case 'log_message':
      case 'mark':
      case 'pong':
      case 'unbound':
        return;
    }
  }
}

/** The objects created by a bootstrap's changesets (counted after the clock stopped). */
function objectsIn(messages: readonly FlexibleDownloadMessage[]): number {
  let count = 0;
  for (const message of messages) for (const changeset of message.changesets) for (const instruction of parseChangeset(changeset.changeset).instructions) if (instruction.type === 'CreateObject') count++;
  return count;
}

// ---- the server and its app ----

/** Flexible sync of `bench.Item` (queryable `group`, `n`, `owner`), everyone reads and writes; `bench.Other` is not synced. */
function writeFlexibleApp(dir: string): void {
  writeJson(join(dir, 'config.json'), { config_version: 20210101, name: 'flxbench', location: 'US-VA', deployment_model: 'GLOBAL' });
  writeJson(join(dir, 'auth_providers', 'anon-user.json'), { name: 'anon-user', type: 'anon-user', disabled: false });
  writeJson(join(dir, 'services', 'mongodb-atlas', 'config.json'), { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } });
  const int = { bsonType: 'int' };
  const string = { bsonType: 'string' };
  writeJson(join(dir, 'services', 'mongodb-atlas', 'rules', 'bench.Item.json'), {
    database: 'bench',
    collection: 'Item',
    roles: [{ name: 'everyone', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true, insert: true, delete: true, search: true }],
    filters: [],
    schema: { title: 'Item', bsonType: 'object', required: ['_id', 'group', 'n'], properties: { _id: int, group: int, n: int, owner: string, name: string } },
  });
  // Written by the throughput baseline; no schema, so no synced type.
  writeJson(join(dir, 'services', 'mongodb-atlas', 'rules', 'bench.Other.json'), {
    database: 'bench',
    collection: 'Other',
    roles: [{ name: 'everyone', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true, insert: true, delete: true, search: true }],
    filters: [],
  });
  writeJson(join(dir, 'sync', 'config.json'), {
    type: 'flexible',
    state: 'enabled',
    service_name: 'mongodb-atlas',
    database_name: 'bench',
    development_mode_enabled: false,
    queryable_fields_names: ['group', 'n', 'owner'],
  });
}

/** Session `i`'s query: in group `i % GROUPS`, each of its group's 10 sessions with another query shape. */
function sessionQuery(i: number): string {
  const group = i % GROUPS;
  const k = Math.floor(i / GROUPS);
  switch (k % 4) {
    case 0:
      return `group == ${group} AND n >= ${k * 10}`;
    case 1:
      return `group == ${group} AND owner BEGINSWITH "u" AND n < ${1_000_000 + i}`;
    case 2:
      return `(group == ${group} OR group == ${group + 1_000_000}) AND n != ${-i}`;
    default:
      return `group IN {${group}, ${-1_000 - i}} AND (owner == "u${i % 7}" OR owner CONTAINS "u")`;
  }
}

/** A document every session of `group` holds in its view. */
function externalItem(id: number, group: number): Item {
  return { _id: id, group, n: 500, owner: 'u1', name: `external ${id}` };
}

// ---- remote data access ----

/** One collection of the app through `functions/call` of the cluster service, as the anonymous user. */
class RemoteCollection {
  constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly collection: string,
  ) {}

  async insertOne(document: Item): Promise<void> {
    await this.call('insertOne', { document });
  }

  async insertMany(documents: Item[]): Promise<void> {
    await this.call('insertMany', { documents });
  }

  /** Up to `limit` documents of `filter` in `_id` order (plain JSON numbers and strings come back as such). */
  async find(filter: Record<string, unknown>, limit: number): Promise<Item[]> {
    return (await this.call('find', { query: filter, sort: { _id: 1 }, limit })) as Item[];
  }

  private async call(name: string, argument: Record<string, unknown>): Promise<unknown> {
    const response = await fetch(`${this.base}/functions/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
      body: JSON.stringify({ name, service: 'mongodb-atlas', arguments: [{ database: 'bench', collection: this.collection, ...argument }] }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${name}: ${response.status} ${text}`);
    return JSON.parse(text, (_key, value: unknown) => (isNumberWrapper(value) ? Number(Object.values(value)[0]) : value));
  }
}

/** `{"$numberInt": "1"}` and its kin, as relaxed or canonical EJSON may spell a number. */
function isNumberWrapper(value: unknown): value is Record<string, string> {
  if (typeof value !== 'object' || value === null) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && ['$numberInt', '$numberLong', '$numberDouble'].includes(keys[0] ?? '');
}

// ---- the measurements ----

interface Latencies {
  p50: number;
  p99: number;
  max: number;
  samples: number;
  missing: number;
}

function summarize(samples: number[], expected: number): Latencies {
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), max: samples[samples.length - 1] ?? 0, samples: samples.length, missing: expected - samples.length };
}

const ms = (from: bigint, to: bigint): number => Number(to - from) / 1e6;

async function seed(items: RemoteCollection): Promise<void> {
  for (let first = 0; first < OBJECTS; first += 5_000) {
    const batch: Item[] = [];
    for (let id = first; id < Math.min(OBJECTS, first + 5_000); id++) batch.push({ _id: id, group: SEED_GROUP, n: id, owner: `seed${id % 100}`, name: `item ${id}` });
    await items.insertMany(batch);
  }
}

/** The baseline of the bootstrap: the same documents read through the wire port and encoded as changesets. */
async function readAndEncode(items: RemoteCollection): Promise<{ ms: number; objects: number; bytes: number }> {
  const start = process.hrtime.bigint();
  let after: number | undefined;
  let objects = 0;
  let bytes = 0;
  let instructions: Instruction[] = [];
  for (;;) {
    const page = await items.find(after === undefined ? { group: SEED_GROUP } : { group: SEED_GROUP, _id: { $gt: after } }, 1_000);
    for (const doc of page) {
      const object = { type: 'Int' as const, value: doc._id };
      instructions.push({ type: 'CreateObject', table: 'Item', object });
      for (const [field, value] of Object.entries(doc)) {
        if (field === '_id') continue;
        const payload = typeof value === 'number' ? ({ type: 'Int', value } as const) : ({ type: 'String', value: String(value) } as const);
        instructions.push({ type: 'Update', table: 'Item', object, field, path: [], value: payload, isDefault: false, priorSize: 0 });
      }
      if (++objects % OBJECTS_PER_CHANGESET === 0) {
        bytes += encodeChangeset({ instructions }).length;
        instructions = [];
      }
    }
    if (page.length < 1_000) break;
    after = page[page.length - 1]?._id;
  }
  if (instructions.length > 0) bytes += encodeChangeset({ instructions }).length;
  return { ms: ms(start, process.hrtime.bigint()), objects, bytes };
}

/** Opens sessions `which`, 50 at a time, each subscribed to its own query (empty bootstraps). */
async function openSessions(url: (i: number) => string, which: readonly number[]): Promise<Map<number, FlexibleBenchClient>> {
  const opened = new Map<number, FlexibleBenchClient>();
  for (let at = 0; at < which.length; at += 50) {
    await Promise.all(
      which.slice(at, at + 50).map(async (i) => {
        const client = await FlexibleBenchClient.connect(url(i));
        await client.subscribe({ Item: sessionQuery(i) });
        opened.set(i, client);
      }),
    );
  }
  return opened;
}

/** The members of a group among the open sessions. */
function groupMembers(sessions: ReadonlyMap<number, FlexibleBenchClient>, group: number): FlexibleBenchClient[] {
  return [...sessions].filter(([i]) => i % GROUPS === group).map(([, client]) => client);
}

/**
 * One insert at a time into group `groups[round]`; the latency is until the last of the group's open
 * sessions got its DOWNLOAD. Also counts DOWNLOADs at sessions outside the group (strays).
 */
async function matchLatency(items: RemoteCollection, sessions: ReadonlyMap<number, FlexibleBenchClient>, groups: number[], firstId: number): Promise<{ latency: Latencies; spread: Latencies; strays: number }> {
  const samples: number[] = [];
  const spreads: number[] = [];
  let strays = 0;
  let round = 0;
  for (const group of groups) {
    const members = new Set(groupMembers(sessions, group));
    const id = firstId + round++;
    let first = 0n;
    let last = 0n;
    let arrived = 0;
    let wake: () => void = () => undefined;
    const all = new Promise<boolean>((done) => {
      const timer = setTimeout(() => done(false), 5_000);
      wake = () => (clearTimeout(timer), done(true));
    });
    for (const client of sessions.values()) {
      client.onChange = (at) => {
        if (!members.has(client)) return void strays++;
        first = first === 0n || at < first ? at : first;
        last = at > last ? at : last;
        if (++arrived === members.size) wake();
      };
    }
    const start = process.hrtime.bigint();
    await items.insertOne(externalItem(id, group));
    if (await all) {
      samples.push(ms(start, last));
      spreads.push(ms(first, last));
    }
  }
  for (const client of sessions.values()) client.onChange = () => undefined;
  return { latency: summarize(samples, groups.length), spread: summarize(spreads, groups.length), strays };
}

/** WRITERS loops inserting for SECONDS; resolves with inserts/s until `delivered()` (or a 60 s drain deadline). */
async function insertThroughput(items: RemoteCollection, firstId: number, delivered: (writes: number) => Promise<void>): Promise<{ perSecond: number; writes: number }> {
  let next = firstId;
  let writes = 0;
  const until = Date.now() + SECONDS * 1_000;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (Date.now() < until) {
        const id = next++;
        await items.insertOne(externalItem(id, id % GROUPS));
        writes++;
      }
    }),
  );
  await delivered(writes);
  return { perSecond: writes / (Number(process.hrtime.bigint() - start) / 1e9), writes };
}

/** Resolves once `count()` reached `expected`, or after `ms`; polled on each call of the returned `poke`. */
function waitFor(count: () => number, expected: () => number, timeoutMs: number): { done: Promise<boolean>; poke: () => void } {
  let settle: (ok: boolean) => void = () => undefined;
  const done = new Promise<boolean>((resolve) => (settle = resolve));
  const timer = setTimeout(() => settle(count() >= expected()), timeoutMs);
  return {
    done,
    poke: () => {
      if (count() >= expected()) {
        clearTimeout(timer);
        settle(true);
      }
    },
  };
}

/** The pause between two of the matching phase's writes, about: one write's round trip to its last DOWNLOAD. */
const DISK_GAP_MS = 3;

/**
 * What the storage device alone takes to make a small append durable, at the matching phase's pace: `count`
 * appends of 600 bytes (about one commit record) with O_DSYNC, as the store's write-ahead log writes them,
 * `gapMs` apart, in a file beside the server's data directory.
 */
async function diskSyncLatency(dir: string, count: number, gapMs: number): Promise<Latencies> {
  const path = join(dir, 'disk-sync-probe.log');
  const fd = openSync(path, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND | fsConstants.O_DSYNC, 0o600);
  const record = Buffer.alloc(600, 7);
  const samples: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await new Promise<void>((resolve, reject) => fsWrite(fd, record, 0, record.length, null, (error) => (error ? reject(error) : resolve())));
      samples.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
  return summarize(samples, count);
}

/** A server-side histogram's p50 and p99 as the bounds of the buckets holding them. */
function describeFanOut(histogram: HistogramSnapshot | undefined): string {
  if (!histogram || histogram.count === 0) return 'nothing recorded';
  const bound = (p: number): string => {
    const value = histogramPercentileBound(histogram, p) ?? 0;
    return Number.isFinite(value) ? `<= ${value} ms` : `> ${histogram.bounds.at(-1) ?? 0} ms`;
  };
  return `p50 ${bound(50)}, p99 ${bound(99)}, mean ${(histogram.sum / histogram.count).toFixed(2)} ms (${histogram.count} writes)`;
}

function describeLatency(l: Latencies): string {
  return `p50 ${l.p50.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms, max ${l.max.toFixed(2)} ms (${l.samples} writes${l.missing ? `, ${l.missing} not delivered within 5 s` : ''})`;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tessera-bench-flx-'));
  const appDir = join(work, 'app');
  writeFlexibleApp(appDir);
  // The server exports its metrics here: `tessera.sync.flexible.fan_out` is the goal's own measure, from the
  // commit of a write to the moment the last DOWNLOAD it caused was sent, both ends inside the server. Traces
  // go to the same endpoint; none is sampled (the other benches run without tracing too).
  const otlp = await OtlpMetricsReceiver.start();
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_METRIC_EXPORT_INTERVAL: '500', OTEL_TRACES_SAMPLER: 'always_off' });
  const histograms = (): Promise<Map<string, HistogramSnapshot>> => otlp.nextHistograms([FAN_OUT_METRIC, FROM_FEED_METRIC, DELIVERY_METRIC]);
  /** What the server recorded between two exports: the fan-out from the commit, and its part from the change's arrival. */
  const recorded = (before: Map<string, HistogramSnapshot>, after: Map<string, HistogramSnapshot>) => ({
    fanOut: histogramDelta(before.get(FAN_OUT_METRIC), after.get(FAN_OUT_METRIC)),
    fromFeed: histogramDelta(before.get(FROM_FEED_METRIC), after.get(FROM_FEED_METRIC)),
    delivery: histogramDelta(before.get(DELIVERY_METRIC), after.get(DELIVERY_METRIC)),
  });
  const server = await startTessera(work, appDir, 'flxbench', (process.env['BENCH_SERVER_NODE_ARGS'] ?? '').split(' ').filter(Boolean));
  const opened: FlexibleBenchClient[] = [];
  try {
    const base = `http://127.0.0.1:${server.port}/api/client/v2.0/app/${server.appId}`;
    const tokens = await anonymousTokens(base, 10);
    const url = (i: number): string => `${base.replace(/^http/, 'ws')}/realm-sync?baas_at=${encodeURIComponent(tokens[i % tokens.length] ?? '')}`;
    const items = new RemoteCollection(base, tokens[0] ?? '', 'Item');
    const other = new RemoteCollection(base, tokens[1] ?? '', 'Other');

    // Matching and fan-out first, on a collection holding only what they insert; opening a session on the
    // big collection (its bootstrap reads through the queryable fields' indexes made at deploy) is measured
    // apart below, once the collection holds the 100,000 documents.
    const groups = Array.from({ length: ROUNDS }, (_, round) => (round * 37) % GROUPS);
    const all = Array.from({ length: SESSIONS }, (_, i) => i);
    const firstGroup = groups[0] ?? 0;
    process.stderr.write(`matching baseline: the ${PER_GROUP} sessions of one group\n`);
    const few = await openSessions(url, all.filter((i) => i % GROUPS === firstGroup));
    opened.push(...few.values());
    await matchLatency(items, few, groups.slice(0, 20).map(() => firstGroup), 10_000_000); // warm-up
    const serverCpu = (): number => cpuMs(server.pid);
    let cpu = serverCpu();
    let before = await histograms();
    const alone = await matchLatency(items, few, groups.map(() => firstGroup), 11_000_000);
    const aloneCpu = serverCpu() - cpu;
    const aloneServer = recorded(before, await histograms());
    process.stderr.write(`opening ${SESSIONS} sessions\n`);
    const rest = await openSessions(url, all.filter((i) => !few.has(i)));
    opened.push(...rest.values());
    const sessions = new Map([...few, ...rest]);
    await matchLatency(items, sessions, groups.slice(0, 20), 12_000_000); // warm-up
    cpu = serverCpu();
    before = await histograms();
    const many = await matchLatency(items, sessions, groups, 13_000_000);
    const manyCpu = serverCpu() - cpu;
    const manyServer = recorded(before, await histograms());
    const disk = await diskSyncLatency(work, ROUNDS, DISK_GAP_MS);

    process.stderr.write('throughput baseline: inserts into a collection no session syncs\n');
    cpu = serverCpu();
    const plain = await insertThroughput(other, 20_000_000, async () => undefined);
    const plainCpu = serverCpu() - cpu;
    process.stderr.write('fan-out throughput\n');
    let deliveries = 0;
    let expected = Number.POSITIVE_INFINITY;
    const drained = waitFor(() => deliveries, () => expected, SECONDS * 1_000 + 60_000);
    for (const client of sessions.values()) {
      client.onChange = (_at, message) => {
        deliveries += message.changesets.length;
        drained.poke();
      };
    }
    cpu = serverCpu();
    const fanned = await insertThroughput(items, 30_000_000, async (writes) => {
      expected = writes * PER_GROUP;
      drained.poke();
      await drained.done;
    });
    const fannedCpu = serverCpu() - cpu;
    const undelivered = Math.max(0, fanned.writes * PER_GROUP - deliveries);
    for (const client of opened.splice(0)) client.close();

    process.stderr.write(`seeding ${OBJECTS} documents\n`);
    await seed(items);
    process.stderr.write('baseline: read and encode\n');
    await readAndEncode(items); // warm the datastore's pages and this process's code
    const encoded = await readAndEncode(items);
    process.stderr.write(`bootstrap of ${OBJECTS} documents\n`);
    const big = await FlexibleBenchClient.connect(url(0));
    cpu = serverCpu();
    const clientCpu = process.cpuUsage();
    const bootstrap = await big.subscribe({ Item: `group == ${SEED_GROUP}` });
    const bootstrapCpu = serverCpu() - cpu;
    const { user, system } = process.cpuUsage(clientCpu);
    const bootstrapClientCpu = (user + system) / 1_000;
    big.close();
    const bootstrapMs = ms(bootstrap.sent, bootstrap.arrived);
    const bootstrapObjects = objectsIn(bootstrap.messages);
    // A session whose query selects a few documents of the big collection: its bootstrap reads only those, through an index.
    const selective: number[] = [];
    for (const i of all.slice(0, 5)) {
      const client = await FlexibleBenchClient.connect(url(i));
      const { sent, arrived } = await client.subscribe({ Item: sessionQuery(i) });
      selective.push(ms(sent, arrived));
      client.close();
    }
    selective.sort((a, b) => a - b);

    console.log(`flexible sync bench: ${OBJECTS.toLocaleString('en-US')} documents, ${sessions.size.toLocaleString('en-US')} sessions in ${GROUPS} groups, load average ${loadAverage()}`);
    console.log(`  bootstrap of ${bootstrapObjects.toLocaleString('en-US')} documents (${bootstrap.messages.length} DOWNLOADs): ${Math.round(bootstrapMs).toLocaleString('en-US')} ms, server CPU ${bootstrapCpu.toLocaleString('en-US')} ms, client CPU ${Math.round(bootstrapClientCpu).toLocaleString('en-US')} ms (goal < 3,000 ms)`);
    console.log(`    baseline, read ${encoded.objects.toLocaleString('en-US')} documents through remote data access and encode them: ${Math.round(encoded.ms).toLocaleString('en-US')} ms (${(encoded.bytes / 1024 / 1024).toFixed(1)} MB of changesets)`);
    console.log(`  opening a session whose query selects a few of those documents (IDENT to its bootstrap): median ${Math.round(selective[2] ?? 0).toLocaleString('en-US')} ms of 5 (read through the queryable fields' indexes)`);
    console.log(`  external insert to the DOWNLOAD at the last of its ${PER_GROUP} sessions, ${sessions.size} sessions: ${describeLatency(many.latency)} (goal p99 < 5 ms); server CPU ${(manyCpu / groups.length).toFixed(2)} ms per write; ${many.strays} stray DOWNLOADs`);
    console.log(`    of which from the first of the ${PER_GROUP} DOWNLOADs to the last (the fan-out after matching): p50 ${many.spread.p50.toFixed(2)} ms, p99 ${many.spread.p99.toFixed(2)} ms`);
    console.log(`    baseline, only those ${few.size} sessions connected: ${describeLatency(alone.latency)}; server CPU ${(aloneCpu / groups.length).toFixed(2)} ms per write; first to last p50 ${alone.spread.p50.toFixed(2)} ms, p99 ${alone.spread.p99.toFixed(2)} ms`);
    console.log(`  server-side, a write's commit to the last DOWNLOAD it caused sent (${FAN_OUT_METRIC}, whole milliseconds): ${describeFanOut(manyServer.fanOut)} (goal p99 < 5 ms)`);
    console.log(`    baseline, only those ${few.size} sessions connected: ${describeFanOut(aloneServer.fanOut)}`);
    console.log(`    the storage device's own part: a bare O_DSYNC append of 600 bytes in the data directory's file system, one every ${DISK_GAP_MS} ms as these writes come: ${describeLatency(disk)}`);
    console.log(`  server-side, from the write being durable (the change publisher reading it off the feed) to the last DOWNLOAD it caused sent (${FROM_FEED_METRIC}): ${describeFanOut(manyServer.fromFeed)} (goal p99 < 5 ms, without the device's sync); with only ${few.size} sessions: ${describeFanOut(aloneServer.fromFeed)}`);
    console.log(`    of which from the change reaching the sync service (${DELIVERY_METRIC}: matching, reading, sending): ${describeFanOut(manyServer.delivery)}; with only ${few.size} sessions: ${describeFanOut(aloneServer.delivery)}`);
    console.log(`  fan-out throughput, ${WRITERS} writers, each insert to ${PER_GROUP} of ${sessions.size} sessions: ${Math.round(fanned.perSecond).toLocaleString('en-US')} inserts/s delivered (${(fanned.perSecond * PER_GROUP).toFixed(0)} DOWNLOADs/s), server CPU ${(fannedCpu / Math.max(1, fanned.writes)).toFixed(2)} ms per insert${undelivered ? `, ${undelivered} DOWNLOADs missing` : ''}`);
    console.log(`    baseline, the same inserts into a collection no session syncs: ${Math.round(plain.perSecond).toLocaleString('en-US')} inserts/s, server CPU ${(plainCpu / Math.max(1, plain.writes)).toFixed(2)} ms per insert`);
    const ratio = (a: number, b: number): string => (b > 0 ? (a / b).toFixed(2) : 'n/a');
    console.log(`ratios to baseline: bootstrap ${ratio(bootstrapMs, encoded.ms)}x, write-to-last-download p99 ${ratio(many.latency.p99, alone.latency.p99)}x (server-side ${ratio(histogramPercentileBound(manyServer.fanOut, 99) ?? 0, histogramPercentileBound(aloneServer.fanOut, 99) ?? 0)}x), fan-out inserts/s ${ratio(fanned.perSecond, plain.perSecond)}x; server CPU per write ${ratio(manyCpu, aloneCpu)}x (1,000 sessions to 10), per insert ${ratio(fannedCpu / Math.max(1, fanned.writes), plainCpu / Math.max(1, plain.writes))}x (fanned out to unsynced)`);
  } finally {
    for (const client of opened) client.close();
    await stop(server.child);
    await otlp.close();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
