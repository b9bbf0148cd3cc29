/**
 * Sync benchmark: partition-based sync as Realm clients use it, over real WebSockets against the built
 * standalone server in its own process, beside a bare `ws` relay (the floor) in the same run. The relay
 * forwards each client's frame to the other clients of its partition, acknowledges it to the sender, keeps
 * what it relayed for a late joiner, and broadcasts an HTTP POST: what a sync server does, minus history,
 * merge, permissions and storage.
 *
 * Measured with clients that speak the protocol through @tessera/sync-protocol's codec (BIND, IDENT,
 * UPLOAD, DOWNLOAD), on each target:
 * - fan-out: 100 clients on one partition; one uploads a new object at a time, latency from the upload
 *   to the DOWNLOAD at each of the 99 others (p50, p99; goal p99 < 50 ms);
 * - throughput: the 100 clients upload at once, each its next changeset when the last was acknowledged
 *   (changesets/s);
 * - memory per idle connection: server RSS growth with 2,000 bound, idle sessions (goal < 100 KB);
 * - initial download: a new client's first open of a partition holding 100,000 small objects (goal < 2 s);
 * - external write: an insert through remote data access until the DOWNLOAD at a bound client (p50, p99;
 *   goal p99 < 100 ms). If the server never delivers it, the bench says so and goes on. First, one such
 *   write right after the initial download's upload, reported apart: it waits behind the server writing
 *   those 100,000 objects to the collection and the change events of those writes; then the time until the
 *   collection holds them all (write-back), and one more write to let the feed catch up before the rounds.
 * BENCH_CLIENTS, BENCH_IDLE, BENCH_OBJECTS and BENCH_SECONDS scale it down. The last line gives the ratios
 * to the floor.
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ClientMessage,
  decodeServerMessage,
  encodeChangeset,
  encodeClientMessage,
  type Instruction,
  parseChangeset,
  type ServerMessage,
  type UploadChangeset,
} from '@tessera/sync-protocol';
import WebSocket from 'ws';
import { anonymousTokens, loadAverage, percentile, rssBytes, startProcess, startTessera, stop, writeJson } from '../support/processes';

const CLIENTS = Number(process.env['BENCH_CLIENTS'] ?? 100);
const IDLE = Number(process.env['BENCH_IDLE'] ?? 2_000);
const OBJECTS = Number(process.env['BENCH_OBJECTS'] ?? 100_000);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 100);
const EXTERNAL_ROUNDS = 50;
const OBJECTS_PER_CHANGESET = 1_000;
/** realm-js 12 offers these protocol versions (realm-core v14). */
const protocols = Array.from({ length: 13 }, (_, i) => `com.mongodb.realm-sync#${14 - i}`);
/** Milliseconds from 1970 to realm's epoch, 2015-01-01. */
const realmEpoch = Date.UTC(2015, 0, 1);

// ---- what the clients upload ----

const schemaInstructions: Instruction[] = [
  { type: 'AddTable', table: 'Item', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'Int', pkNullable: false } },
  { type: 'AddColumn', table: 'Item', field: 'name', valueType: 'String', nullable: false, collectionType: 'Single', keyType: 'Null' },
  { type: 'AddColumn', table: 'Item', field: 'n', valueType: 'Int', nullable: false, collectionType: 'Single', keyType: 'Null' },
];

/** Objects `first` .. `first + count - 1` of table Item, each with a name and a number, as realm-core writes a new object. */
function createObjects(first: number, count: number): Uint8Array {
  const instructions: Instruction[] = [];
  for (let id = first; id < first + count; id++) {
    const object = { type: 'Int' as const, value: id };
    instructions.push({ type: 'CreateObject', table: 'Item', object });
    instructions.push({ type: 'Update', table: 'Item', object, field: 'name', path: [], value: { type: 'String', value: `item ${id}` }, isDefault: false, priorSize: 0 });
    instructions.push({ type: 'Update', table: 'Item', object, field: 'n', path: [], value: { type: 'Int', value: id }, isDefault: false, priorSize: 0 });
  }
  return encodeChangeset({ instructions });
}

// ---- the two targets ----

/** A connected client bound to one partition whose first download is complete. */
interface BenchClient {
  /** Sends changesets (encoded); resolves when the server acknowledged them. */
  upload(changesets: Uint8Array[]): Promise<void>;
  /** Called with the arrival time of each message carrying another client's changes. */
  /** `payloads`: the changesets (Tessera) or the frame (floor) that carried them. */
  onRemote: (at: bigint, payloads: readonly Uint8Array[]) => void;
  /** The highest server version this client has downloaded (0 for the floor). */
  serverVersion(): number;
  close(): void;
}

interface Target {
  name: string;
  pid: number;
  open(partition: string, user: number): Promise<BenchClient>;
  /** Opens a new client and resolves when it has downloaded everything the partition holds. */
  initialDownload(partition: string, user: number, latestServerVersion: number): Promise<void>;
  /** Writes one new object of `partition` through the target's HTTP side. */
  externalWrite(partition: string, id: number): Promise<void>;
  /** The documents of `partition` in the collection (the floor keeps none: undefined). */
  documentsIn(partition: string): Promise<number | undefined>;
  close(): Promise<void>;
}

function connectWs(url: string, protocolList?: string[]): Promise<WebSocket> {
  return new Promise((done, fail) => {
    const ws = new WebSocket(url, protocolList);
    ws.on('open', () => done(ws));
    ws.on('unexpected-response', (_req, res) => fail(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.on('error', fail);
  });
}

/** A protocol client of Tessera's sync service: one session, BIND and IDENT as a new client file. */
class TesseraClient implements BenchClient {
  onRemote: (at: bigint, payloads: readonly Uint8Array[]) => void = () => undefined;
  private fileIdent = 0;
  private clientVersion = 0;
  private downloadServerVersion = 0;
  private downloadClientVersion = 0;
  private acknowledged = 0;
  private waiters: Array<{ version: number; done: () => void }> = [];
  private caughtUp: ((message: ServerMessage) => boolean) | undefined;
  private failure: Error | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => this.receive(decodeServerMessage(new Uint8Array(data)), process.hrtime.bigint()));
  }

  /** Connects, binds `partition` and resolves once `ready` accepts a DOWNLOAD (by default: the first one). */
  static async open(url: string, partition: string, ready: (message: ServerMessage) => boolean = () => true): Promise<TesseraClient> {
    const client = new TesseraClient(await connectWs(url, protocols));
    const opened = new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no download for partition ${partition} within 120 s`)), 120_000);
      client.caughtUp = (message) => {
        if (!ready(message)) return false;
        clearTimeout(timer);
        done();
        return true;
      };
    });
    client.send({ type: 'bind', sessionIdent: 1, path: JSON.stringify(partition), token: '', needClientFileIdent: true, isSubserver: false });
    await opened;
    return client;
  }

  serverVersion(): number {
    return this.downloadServerVersion;
  }

  upload(changesets: Uint8Array[]): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const uploads: UploadChangeset[] = changesets.map((changeset) => ({
      clientVersion: ++this.clientVersion,
      lastIntegratedServerVersion: this.downloadServerVersion,
      originTimestamp: Date.now() - realmEpoch,
      originFileIdent: 0,
      changeset,
    }));
    const version = this.clientVersion;
    const acked = new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(this.failure ?? new Error(`upload of client version ${version} not acknowledged within 60 s`)), 60_000);
      this.waiters.push({ version, done: () => (clearTimeout(timer), done()) });
    });
    this.send({ type: 'upload', sessionIdent: 1, progressClientVersion: this.downloadClientVersion, progressServerVersion: this.downloadServerVersion, lockedServerVersion: this.downloadServerVersion, changesets: uploads });
    return acked;
  }

  close(): void {
    this.ws.terminate();
  }

  private send(message: ClientMessage): void {
    this.ws.send(encodeClientMessage(message), { binary: true });
  }

  private receive(message: ServerMessage, at: bigint): void {
    if (message.type === 'ident') {
      this.fileIdent = message.clientFileIdent;
      this.send({
        type: 'ident',
        sessionIdent: 1,
        clientFileIdent: message.clientFileIdent,
        clientFileIdentSalt: message.clientFileIdentSalt,
        downloadServerVersion: 0,
        downloadClientVersion: 0,
        latestServerVersion: 0,
        latestServerVersionSalt: 0n,
      });
    } else if (message.type === 'download') {
      this.downloadServerVersion = message.downloadServerVersion;
      this.downloadClientVersion = message.downloadClientVersion;
      const remote = message.changesets.filter((changeset) => changeset.originFileIdent !== this.fileIdent);
      if (remote.length > 0) this.onRemote(at, remote.map((changeset) => changeset.changeset));
      if (message.uploadClientVersion > this.acknowledged) {
        this.acknowledged = message.uploadClientVersion;
        this.waiters = this.waiters.filter((waiter) => (waiter.version <= this.acknowledged ? (waiter.done(), false) : true));
      }
      if (this.caughtUp?.(message)) this.caughtUp = undefined;
    } else if (message.type === 'error') {
      this.failure = new Error(`sync error ${message.code}: ${message.message}`);
      console.error(this.failure.message);
    }
  }
}

async function startTesseraTarget(work: string): Promise<Target> {
  const appDir = join(work, 'app');
  writeSyncApp(appDir);
  // BENCH_SERVER_NODE_ARGS: flags for the server's node (`--cpu-prof --cpu-prof-dir=...` to profile it).
  const server = await startTessera(work, appDir, 'syncbench', (process.env['BENCH_SERVER_NODE_ARGS'] ?? '').split(' ').filter(Boolean));
  // BENCH_SERVER_LOG: a file that gets the server's log (warnings and errors) for a run that goes wrong.
  const log = process.env['BENCH_SERVER_LOG'];
  if (log) for (const out of [server.child.stdout, server.child.stderr]) out?.on('data', (chunk: Buffer) => appendFileSync(log, chunk));
  const base = `http://127.0.0.1:${server.port}/api/client/v2.0/app/${server.appId}`;
  const tokens = await anonymousTokens(base, 10);
  const syncUrl = (user: number): string => `${base.replace(/^http/, 'ws')}/realm-sync?baas_at=${encodeURIComponent(tokens[user % tokens.length] ?? '')}`;
  return {
    name: 'tessera',
    pid: server.pid,
    open: (partition, user) => TesseraClient.open(syncUrl(user), partition),
    async initialDownload(partition, user, latest) {
      let changesets = 0;
      const client = await TesseraClient.open(syncUrl(user), partition, (message) => {
        if (message.type !== 'download') return false;
        changesets += message.changesets.length;
        return message.downloadServerVersion >= Math.max(latest, message.latestServerVersion) && message.downloadableBytes === 0;
      });
      process.stderr.write(`[tessera] initial download: ${changesets} changesets up to server version ${client.serverVersion()}\n`);
      client.close();
    },
    async externalWrite(partition, id) {
      const document = { _id: { $numberLong: String(id) }, _partition: partition, name: `external ${id}`, n: { $numberLong: String(id) } };
      const response = await fetch(`${base}/functions/call`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[0]}` },
        body: JSON.stringify({ name: 'insertOne', service: 'mongodb-atlas', arguments: [{ database: 'bench', collection: 'Item', document }] }),
      });
      if (!response.ok) throw new Error(`insertOne: ${response.status} ${await response.text()}`);
    },
    async documentsIn(partition) {
      const response = await fetch(`${base}/functions/call`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[0]}` },
        body: JSON.stringify({ name: 'count', service: 'mongodb-atlas', arguments: [{ database: 'bench', collection: 'Item', query: { _partition: partition } }] }),
      });
      if (!response.ok) throw new Error(`count: ${response.status} ${await response.text()}`);
      const count = (await response.json()) as number | Record<string, string>;
      return Number(typeof count === 'object' ? Object.values(count)[0] : count);
    },
    close: () => stop(server.child),
  };
}

/** The app: anonymous login, partition-based sync on `_partition` (string), anyone may read and write. */
function writeSyncApp(dir: string): void {
  writeJson(join(dir, 'config.json'), { config_version: 20210101, name: 'syncbench', location: 'US-VA', deployment_model: 'GLOBAL' });
  writeJson(join(dir, 'auth_providers', 'anon-user.json'), { name: 'anon-user', type: 'anon-user', disabled: false });
  writeJson(join(dir, 'services', 'mongodb-atlas', 'config.json'), { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } });
  writeJson(join(dir, 'services', 'mongodb-atlas', 'rules', 'bench.Item.json'), {
    database: 'bench',
    collection: 'Item',
    roles: [{ name: 'everyone', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }],
    filters: [],
    schema: { title: 'Item', bsonType: 'object', required: ['_id', 'name', 'n'], properties: { _id: { bsonType: 'long' }, _partition: { bsonType: 'string' }, name: { bsonType: 'string' }, n: { bsonType: 'long' } } },
  });
  writeJson(join(dir, 'sync', 'config.json'), {
    type: 'partition',
    state: 'enabled',
    service_name: 'mongodb-atlas',
    development_mode_enabled: false,
    database_name: 'bench',
    partition: { key: '_partition', type: 'string', required: false, permissions: { read: true, write: true } },
  });
}

/**
 * The floor: a `ws` relay. A binary frame goes to every other client of the sender's partition (the URL
 * path) and is kept for later joiners; the sender gets a one-byte acknowledgement; a text frame "replay"
 * sends back what the partition holds, then "done"; an HTTP POST to /<partition> is relayed like a frame.
 */
const FLOOR_SERVER = `
const http = require('node:http');
const { WebSocketServer } = require('ws');
const partitions = new Map();
const partition = (name) => { let p = partitions.get(name); if (!p) partitions.set(name, (p = { clients: new Set(), frames: [] })); return p; };
const relay = (p, frame, from) => { p.frames.push(frame); for (const c of p.clients) if (c !== from) c.send(frame, { binary: true }); };
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => { relay(partition(req.url), Buffer.concat(chunks), undefined); res.writeHead(200, { 'content-length': 2 }).end('{}'); });
});
const wss = new WebSocketServer({ server });
wss.on('connection', (ws, req) => {
  const p = partition(req.url);
  p.clients.add(ws);
  ws.on('message', (data, isBinary) => {
    if (!isBinary) { for (const f of p.frames) ws.send(f, { binary: true }); ws.send('done'); return; }
    relay(p, data, ws);
    ws.send(Buffer.of(0), { binary: true });
  });
  ws.on('close', () => p.clients.delete(ws));
});
server.listen(0, '127.0.0.1', () => console.log('listening on ' + server.address().port));
`;

class FloorClient implements BenchClient {
  onRemote: (at: bigint, payloads: readonly Uint8Array[]) => void = () => undefined;
  private acks: Array<() => void> = [];

  constructor(
    private readonly ws: WebSocket,
    private readonly replayed?: () => void,
  ) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const at = process.hrtime.bigint();
      if (!isBinary) {
        if (data.toString() === 'done') this.replayed?.();
      } else if (data.length === 1) this.acks.shift()?.();
      else this.onRemote(at, [new Uint8Array(data)]);
    });
  }

  /** The relay registers a connection before its handshake answer leaves: once open, the client is in. */
  static async open(url: string): Promise<FloorClient> {
    return new FloorClient(await connectWs(url));
  }

  serverVersion(): number {
    return 0;
  }

  upload(changesets: Uint8Array[]): Promise<void> {
    // The same bytes Tessera gets: an UPLOAD message carrying the changesets.
    const frame = encodeClientMessage({
      type: 'upload',
      sessionIdent: 1,
      progressClientVersion: 0,
      progressServerVersion: 0,
      lockedServerVersion: 0,
      changesets: changesets.map((changeset, i) => ({ clientVersion: i + 1, lastIntegratedServerVersion: 0, originTimestamp: 0, originFileIdent: 0, changeset })),
    });
    const acked = new Promise<void>((done) => this.acks.push(done));
    this.ws.send(frame, { binary: true });
    return acked;
  }

  close(): void {
    this.ws.terminate();
  }
}

async function startFloorTarget(): Promise<Target> {
  const { child, match } = await startProcess(['-e', FLOOR_SERVER], { ...process.env }, /listening on (\d+)/);
  const port = Number(match[1]);
  return {
    name: 'floor',
    pid: child.pid ?? 0,
    open: (partition) => FloorClient.open(`ws://127.0.0.1:${port}/${partition}`),
    async initialDownload(partition) {
      const ws = await connectWs(`ws://127.0.0.1:${port}/${partition}`);
      await new Promise<void>((done) => {
        new FloorClient(ws, done);
        ws.send('replay');
      });
      ws.terminate();
    },
    async externalWrite(partition, id) {
      const response = await fetch(`http://127.0.0.1:${port}/${partition}`, { method: 'POST', body: JSON.stringify({ _id: id, _partition: partition, name: `external ${id}`, n: id }) });
      await response.arrayBuffer();
    },
    documentsIn: async () => undefined,
    close: () => stop(child),
  };
}

// ---- the measurements ----

interface Latencies {
  p50: number;
  p99: number;
  /** Deliveries that never came (counted out of `expected`). */
  missing: number;
  expected: number;
}

function summarize(samples: number[], expected: number): Latencies {
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), missing: expected - samples.length, expected };
}

/** Resolves after `ms`, or earlier when `until()` holds (checked on every remote arrival through `poke`). */
function waitUntil(until: () => boolean, ms: number): { promise: Promise<boolean>; poke: () => void } {
  let settle: (value: boolean) => void = () => undefined;
  const promise = new Promise<boolean>((done) => (settle = done));
  const timer = setTimeout(() => settle(until()), ms);
  const poke = (): void => {
    if (until()) {
      clearTimeout(timer);
      settle(true);
    }
  };
  return { promise, poke };
}

async function openMany(target: Target, partition: string, count: number): Promise<BenchClient[]> {
  const clients: BenchClient[] = [];
  for (let i = 0; i < count; i += 50) clients.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => target.open(partition, i + k)))));
  return clients;
}

async function fanOut(target: Target, clients: BenchClient[], firstId: number): Promise<Latencies> {
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const sender = clients[round % clients.length];
    if (!sender) throw new Error('no clients');
    const receivers = clients.filter((client) => client !== sender);
    let arrived = 0;
    const wait = waitUntil(() => arrived === receivers.length, 5_000);
    const start = process.hrtime.bigint();
    for (const receiver of receivers) {
      receiver.onRemote = (at) => {
        receiver.onRemote = () => undefined;
        samples.push(Number(at - start) / 1e6);
        arrived++;
        wait.poke();
      };
    }
    await Promise.all([sender.upload([createObjects(firstId + round, 1)]), wait.promise]);
    for (const receiver of receivers) receiver.onRemote = () => undefined;
  }
  return summarize(samples, ROUNDS * (clients.length - 1));
}

async function throughput(clients: BenchClient[], firstId: number): Promise<number> {
  let next = firstId;
  let done = 0;
  const until = Date.now() + SECONDS * 1_000;
  const start = process.hrtime.bigint();
  await Promise.all(
    clients.map(async (client) => {
      while (Date.now() < until) {
        await client.upload([createObjects(next++, 1)]);
        done++;
      }
    }),
  );
  return done / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function idleMemory(target: Target): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const before = rssBytes(target.pid);
  const clients = await openMany(target, 'idle', IDLE);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const after = rssBytes(target.pid);
  for (const client of clients) client.close();
  return (after - before) / IDLE;
}

async function initialDownload(target: Target): Promise<number> {
  const writer = await target.open('big', 0);
  await writer.upload([encodeChangeset({ instructions: schemaInstructions })]);
  const perUpload = 10;
  for (let first = 0; first < OBJECTS; first += OBJECTS_PER_CHANGESET * perUpload) {
    const changesets: Uint8Array[] = [];
    for (let k = first; k < Math.min(OBJECTS, first + OBJECTS_PER_CHANGESET * perUpload); k += OBJECTS_PER_CHANGESET) changesets.push(createObjects(1_000_000 + k, Math.min(OBJECTS_PER_CHANGESET, OBJECTS - k)));
    await writer.upload(changesets);
  }
  const latest = writer.serverVersion();
  writer.close();
  const start = process.hrtime.bigint();
  await target.initialDownload('big', 1, latest);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Whether a changeset (Tessera) or a relayed JSON body (floor) creates object `id`. */
function carriesObject(payload: Uint8Array, id: number): boolean {
  if (payload[0] === 0x7b) {
    try {
      return (JSON.parse(Buffer.from(payload).toString('utf8')) as { _id?: number })._id === id;
    } catch {
      // Not the relay's JSON: a changeset that happens to start with this byte.
    }
  }
  try {
    return parseChangeset(payload).instructions.some((instruction) => instruction.type === 'CreateObject' && 'value' in instruction.object && Number(instruction.object.value) === id);
  } catch {
    return false;
  }
}

/**
 * One external write right after the initial download's upload: the server is still writing those objects
 * to the collection and their change events (sync's own writes: not sent back, but still published for
 * triggers) are in the feed ahead of it. Milliseconds until its DOWNLOAD (undefined: not within 120 s); the
 * latency rounds start once it arrived, on a server that caught up.
 */
async function externalBehindBacklog(target: Target, id: number): Promise<number | undefined> {
  const client = await target.open('ext', 0);
  let arrival: bigint | undefined;
  const wait = waitUntil(() => arrival !== undefined, 120_000);
  client.onRemote = (at, payloads) => {
    if (arrival !== undefined || !payloads.some((payload) => carriesObject(payload, id))) return;
    arrival = at;
    wait.poke();
  };
  const start = process.hrtime.bigint();
  await target.externalWrite('ext', id);
  await wait.promise;
  client.close();
  return arrival === undefined ? undefined : Number(arrival - start) / 1e6;
}

/**
 * Milliseconds from now until the collection holds every object of the initial download (the server applies
 * uploads to the collections after acknowledging them); undefined for the floor, or after 300 s.
 */
async function writeBack(target: Target): Promise<number | undefined> {
  const start = Date.now();
  while (Date.now() - start < 300_000) {
    const count = await target.documentsIn('big');
    if (count === undefined) return undefined;
    if (count >= OBJECTS) return Date.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

async function externalWrites(target: Target): Promise<Latencies> {
  const client = await target.open('ext', 0);
  const samples: number[] = [];
  for (let round = 0; round < EXTERNAL_ROUNDS; round++) {
    let arrived = false;
    const wait = waitUntil(() => arrived, 3_000);
    const start = process.hrtime.bigint();
    const id = 5_000_000 + round;
    // Only the DOWNLOAD carrying this round's object counts: a late one of an earlier round must not.
    client.onRemote = (at, payloads) => {
      if (arrived || !payloads.some((payload) => carriesObject(payload, id))) return;
      arrived = true;
      samples.push(Number(at - start) / 1e6);
      wait.poke();
    };
    await target.externalWrite('ext', id);
    if (!(await wait.promise) && round >= 2 && samples.length === 0) break; // never delivered: no point waiting 50 times
  }
  client.close();
  return summarize(samples, EXTERNAL_ROUNDS);
}

interface Figures {
  fanOut: Latencies;
  changesetsPerSecond: number;
  bytesPerIdleConnection: number;
  initialDownloadMs: number;
  external: Latencies;
  externalBehindBacklogMs: number | undefined;
  writeBackMs: number | undefined;
}

/** Progress on stderr: the whole run takes minutes. */
function step(target: Target, what: string): void {
  process.stderr.write(`[${target.name}] ${what}\n`);
}

async function measure(target: Target): Promise<Figures> {
  // First, on a fresh process: after the other phases the heap has room to spare and RSS would not grow.
  step(target, `${IDLE} idle connections`);
  const bytesPerIdleConnection = await idleMemory(target);
  step(target, `opening ${CLIENTS} clients`);
  const clients = await openMany(target, 'shared', CLIENTS);
  // Every realm-core client uploads its schema first; the first one creates the table.
  await Promise.all(clients.map((client) => client.upload([encodeChangeset({ instructions: schemaInstructions })])));
  step(target, 'fan-out');
  const fanOutLatencies = await fanOut(target, clients, 1);
  step(target, 'throughput');
  const changesetsPerSecond = await throughput(clients, 100_000);
  for (const client of clients) client.close();
  step(target, `initial download of ${OBJECTS} objects`);
  const initialDownloadMs = await initialDownload(target);
  step(target, 'an external write behind the write-back of the initial download');
  const externalBehindBacklogMs = await externalBehindBacklog(target, 4_999_998);
  step(target, 'write-back of the initial download');
  const writeBackMs = await writeBack(target);
  // Once the collection holds every object, one more external write: it arrives after the last echoes.
  await externalBehindBacklog(target, 4_999_999);
  step(target, 'external writes');
  return { fanOut: fanOutLatencies, changesetsPerSecond, bytesPerIdleConnection, initialDownloadMs, external: await externalWrites(target), externalBehindBacklogMs, writeBackMs };
}

function describe(figures: Figures): string[] {
  const latency = (l: Latencies): string => (l.expected === l.missing ? `never delivered (${l.missing} of ${l.expected} missing)` : `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms${l.missing ? `, ${l.missing} of ${l.expected} missing` : ''}`);
  return [
    `  fan-out to ${CLIENTS - 1} clients: ${latency(figures.fanOut)}`,
    `  throughput: ${Math.round(figures.changesetsPerSecond).toLocaleString('en-US')} changesets/s`,
    `  memory per idle connection (${IDLE.toLocaleString('en-US')}): ${(figures.bytesPerIdleConnection / 1024).toFixed(1)} KB`,
    `  initial download of ${OBJECTS.toLocaleString('en-US')} objects: ${Math.round(figures.initialDownloadMs).toLocaleString('en-US')} ms`,
    `  external write to download: ${latency(figures.external)}`,
    `  external write right after the ${OBJECTS.toLocaleString('en-US')}-object upload (behind its write-back): ${figures.externalBehindBacklogMs === undefined ? 'not delivered within 120 s' : `${Math.round(figures.externalBehindBacklogMs).toLocaleString('en-US')} ms`}`,
    ...(figures.writeBackMs === undefined ? [] : [`  write-back: every object of the upload in the collection ${Math.round(figures.writeBackMs).toLocaleString('en-US')} ms after that write arrived`]),
  ];
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tessera-bench-sync-'));
  const started: Target[] = [];
  try {
    const floor = await startFloorTarget();
    started.push(floor);
    const floorFigures = await measure(floor);
    await floor.close();
    const tessera = await startTesseraTarget(work);
    started.push(tessera);
    const figures = await measure(tessera);
    console.log(`sync bench: ${CLIENTS} clients, ${SECONDS} s throughput, load average ${loadAverage()}`);
    console.log('floor (bare ws relay):');
    for (const line of describe(floorFigures)) console.log(line);
    console.log('tessera:');
    for (const line of describe(figures)) console.log(line);
    console.log('goals: fan-out p99 < 50 ms, idle connection < 100 KB, initial download < 2,000 ms, external write p99 < 100 ms');
    const ratio = (a: number, b: number): string => (b > 0 ? (a / b).toFixed(2) : 'n/a');
    const external = figures.external.expected === figures.external.missing ? 'never delivered' : ratio(figures.external.p99, floorFigures.external.p99);
    console.log(
      `ratio to floor: fan-out p99 ${ratio(figures.fanOut.p99, floorFigures.fanOut.p99)}x, changesets/s ${ratio(figures.changesetsPerSecond, floorFigures.changesetsPerSecond)}x, ` +
        `idle memory ${ratio(figures.bytesPerIdleConnection, floorFigures.bytesPerIdleConnection)}x, initial download ${ratio(figures.initialDownloadMs, floorFigures.initialDownloadMs)}x, external write p99 ${external}`,
    );
  } finally {
    await Promise.all(started.map((target) => target.close()));
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
