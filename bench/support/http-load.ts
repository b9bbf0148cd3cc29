/**
 * HTTP load for the benches that measure a server in its own process (bench/http, bench/endpoints):
 * keep-alive request loops over `connections` sockets, latency percentiles, the server's CPU per request
 * from /proc, the bare `node:http` floor server every such bench measures in the same run, and the
 * interleaved run of floor and case slices those benches take their ratios from (see interleaved.ts).
 */
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { aggregate, interleavedSchedule, type LoadResult, median, roundRatios, type Sample } from './interleaved';
import { cpuMs, mainThreadCpuMs, startProcess, startTessera, stop } from './processes';

export type { LoadResult } from './interleaved';

/** A server under load: its port, and its pid for CPU accounting. */
export interface LoadTarget {
  port: number;
  pid: number;
}

export interface HttpCall {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  token?: string;
  headers?: Record<string, string>;
}

/** A bare `node:http` server answering a small JSON body: the floor every case is compared with. */
export const FLOOR_SERVER = `
const http = require('node:http');
const body = JSON.stringify({ ok: true });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body));
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('listening on ' + server.address().port));
`;

export class HttpLoad {
  readonly agent: Agent;

  constructor(readonly connections: number) {
    this.agent = new Agent({ keepAlive: true, maxSockets: connections });
  }

  send(port: number, call: HttpCall): Promise<{ status: number; body: string }> {
    return new Promise((done, fail) => {
      const headers: Record<string, string> = { ...call.headers };
      if (call.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        headers['content-length'] = String(Buffer.byteLength(call.body));
      }
      if (call.token) headers['authorization'] = `Bearer ${call.token}`;
      const req = request({ host: '127.0.0.1', port, method: call.method, path: call.path, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', fail);
      });
      req.on('error', fail);
      req.end(call.body);
    });
  }

  async expectOk(port: number, call: HttpCall, check: (body: string) => boolean, what: string, status = 200): Promise<void> {
    const answer = await this.send(port, call);
    if (answer.status !== status || !check(answer.body)) throw new Error(`${what}: unexpected answer ${answer.status} ${answer.body.slice(0, 300)}`);
  }

  /** Runs `connections` request loops for `ms` unmeasured; answers and socket errors are ignored (see slice). */
  async warm(target: LoadTarget, call: HttpCall, ms: number): Promise<void> {
    const until = Date.now() + ms;
    await Promise.all(
      Array.from({ length: this.connections }, async () => {
        while (Date.now() < until) await this.send(target.port, call).catch(() => undefined);
      }),
    );
  }

  /**
   * Warms for `warmupMs` (a keep-alive socket the server closed while idle may fail its first request
   * there), then runs `connections` request loops for `seconds`, with the server's CPU read around them.
   */
  async slice(target: LoadTarget, call: HttpCall, seconds: number, warmupMs: number): Promise<Omit<Sample, 'round' | 'key'>> {
    await this.warm(target, call, warmupMs);
    const latencies: number[] = [];
    let errors = 0;
    const cpuBefore = cpuMs(target.pid);
    const mainBefore = mainThreadCpuMs(target.pid);
    const start = process.hrtime.bigint();
    const until = Date.now() + seconds * 1_000;
    await Promise.all(
      Array.from({ length: this.connections }, async () => {
        while (Date.now() < until) {
          const sent = process.hrtime.bigint();
          const { status } = await this.send(target.port, call);
          if (status !== 200) errors++;
          latencies.push(Number(process.hrtime.bigint() - sent) / 1e6);
        }
      }),
    );
    const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    return { requests: latencies.length, seconds: elapsed, cpuMs: cpuMs(target.pid) - cpuBefore, mainCpuMs: mainThreadCpuMs(target.pid) - mainBefore, errors, latencies };
  }
}

/**
 * One line per result: req/s, p50, p99, server CPU per request, the median ratio to the floor over rounds
 * and, when there are several rounds, the range of the per-round ratios.
 */
export function formatResult(result: LoadResult, ratios: readonly number[]): string {
  const ratio = median(ratios);
  const range = ratios.length > 1 ? `  (rounds ${(100 * Math.min(...ratios)).toFixed(1)}-${(100 * Math.max(...ratios)).toFixed(1)}%)` : '';
  return (
    `${result.name.padEnd(36)} ${Math.round(result.rps).toString().padStart(7)} req/s  p50 ${result.p50.toFixed(2).padStart(7)} ms  p99 ${result.p99.toFixed(2).padStart(7)} ms  ` +
    `cpu ${result.cpuMsPerRequest.toFixed(3)} ms/req${result.mainCpuMsPerRequest === undefined ? '' : ` (main ${result.mainCpuMsPerRequest.toFixed(3)})`}  ${(100 * ratio).toFixed(1).padStart(5)}% of floor${range}${result.errors ? `  ERRORS ${result.errors}` : ''}`
  );
}

/** A bench's running parts: the floor server, the Tessera server with its app, and an anonymous user's tokens. */
export interface ServerBench {
  http: HttpLoad;
  floor: LoadTarget;
  tessera: LoadTarget;
  /** The app's client app id. */
  appId: string;
  /** `/api/client/v2.0/app/<client app id>`. */
  base: string;
  token: string;
  refreshToken: string;
}

/**
 * Writes the bench app (`writeApp(dir)`), starts the floor server and the built standalone server with that
 * app (BENCH_PROFILE=<dir> writes a CPU profile of the server), logs in anonymously, runs `body`, and
 * stops everything and removes the work directory however `body` ends.
 */
export async function withServerBench(options: { name: string; appName: string; connections: number; writeApp: (dir: string) => void }, body: (bench: ServerBench) => Promise<void>): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), `tessera-bench-${options.name}-`));
  const children: ChildProcess[] = [];
  const http = new HttpLoad(options.connections);
  try {
    const appDir = join(work, 'app');
    options.writeApp(appDir);
    const floorProcess = await startProcess(['-e', FLOOR_SERVER], { ...process.env }, /listening on (\d+)/);
    children.push(floorProcess.child);
    const floor: LoadTarget = { port: Number(floorProcess.match[1]), pid: floorProcess.child.pid ?? 0 };
    const profile = process.env['BENCH_PROFILE'];
    const server = await startTessera(work, appDir, options.appName, profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(profile)}`] : []);
    children.push(server.child);
    const base = `/api/client/v2.0/app/${server.appId}`;
    const login = await http.send(server.port, { method: 'POST', path: `${base}/auth/providers/anon-user/login`, body: '{}' });
    if (login.status !== 200) throw new Error(`anonymous login failed: ${login.status} ${login.body}`);
    const tokens = JSON.parse(login.body) as { access_token: string; refresh_token: string };
    await body({ http, floor, tessera: { port: server.port, pid: server.pid }, appId: server.appId, base, token: tokens.access_token, refreshToken: tokens.refresh_token });
  } finally {
    http.agent.destroy();
    await Promise.all(children.map(stop));
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * How an interleaved run is cut: first `warmupSeconds` of each case and of the floor unmeasured, then `rounds`
 * of `sliceSeconds` per slice, each after `sliceWarmupMs` unmeasured.
 */
export interface InterleaveOptions {
  warmupSeconds: number;
  rounds: number;
  sliceSeconds: number;
  sliceWarmupMs: number;
}

/**
 * Unmeasured load per case (and for the floor) before the rounds. The server compiles its hot paths in its
 * first seconds under load: measured with 20 connections, a trivial `functions/call` took 280-300 us of
 * server CPU per request over its first 2.5 s and 180-200 us from then on, so a one-second warm-up put part
 * of the compiling into the first rounds. What the benches report is the server's steady state.
 */
const WARMUP_SECONDS = 5;

/** Warm-up, rounds, slice length and per-slice lead-in, from BENCH_WARMUP_SECONDS, BENCH_ROUNDS and BENCH_SLICE_SECONDS when set. */
export function interleaveOptions(): InterleaveOptions {
  return {
    warmupSeconds: Number(process.env['BENCH_WARMUP_SECONDS'] ?? WARMUP_SECONDS),
    rounds: Number(process.env['BENCH_ROUNDS'] ?? 4),
    sliceSeconds: Number(process.env['BENCH_SLICE_SECONDS'] ?? 1),
    sliceWarmupMs: 200,
  };
}

/** One case's figures over its slices, and its ratio to the floor in each round. */
export interface CaseMeasure {
  key: string;
  result: LoadResult;
  ratios: number[];
}

/**
 * Warms the floor and each case (`[key, name]`, those of BENCH_CASES when set, for profiling one path) up
 * for a second, then runs them interleaved (interleaved.ts): answers the floor's figures over all its
 * slices, each case's figures and per-round ratios, and every slice in run order (for pairRatio).
 */
export async function measureInterleaved(
  bench: ServerBench,
  cases: ReadonlyArray<readonly [string, string]>,
  calls: Record<string, HttpCall>,
  options: InterleaveOptions,
): Promise<{ floor: LoadResult; measured: CaseMeasure[]; samples: Sample[] }> {
  const only = process.env['BENCH_CASES']?.split(',');
  const ran = cases.filter(([key]) => calls[key] && (!only || only.includes(key)));
  const floorCall: HttpCall = { method: 'GET', path: '/' };
  const targetOf = (key: string | undefined): { target: LoadTarget; call: HttpCall } => {
    const call = key === undefined ? floorCall : calls[key];
    if (!call) throw new Error(`no call for case ${key}`);
    return { target: key === undefined ? bench.floor : bench.tessera, call };
  };
  for (const key of [undefined, ...ran.map(([k]) => k)]) {
    const { target, call } = targetOf(key);
    await bench.http.warm(target, call, options.warmupSeconds * 1_000);
  }
  const samples: Sample[] = [];
  for (const slot of interleavedSchedule(
    ran.map(([key]) => key),
    options.rounds,
  )) {
    const { target, call } = targetOf(slot.key);
    samples.push({ ...slot, ...(await bench.http.slice(target, call, options.sliceSeconds, options.sliceWarmupMs)) });
  }
  const ratios = roundRatios(samples);
  return {
    floor: aggregate('floor: bare node:http', samples, undefined),
    measured: ran.map(([key, name]) => ({ key, result: aggregate(name, samples, key), ratios: ratios.get(key) ?? [] })),
    samples,
  };
}
