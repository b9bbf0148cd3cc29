/**
 * HTTP load for the benches that measure a server in its own process (bench/http, bench/endpoints):
 * keep-alive request loops over `connections` sockets, latency percentiles, the server's CPU per request
 * from /proc, and the bare `node:http` floor server every such bench measures in the same run.
 */
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuMs, percentile, startProcess, startTessera, stop } from './processes';

export interface LoadResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number;
  errors: number;
}

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

  constructor(
    readonly connections: number,
    readonly seconds: number,
  ) {
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

  /** Runs `connections` request loops for `seconds` (after a one-second warm-up) and measures the server's CPU. */
  async load(name: string, target: LoadTarget, call: HttpCall, seconds = this.seconds): Promise<LoadResult> {
    const run = async (ms: number, latencies: number[] | undefined): Promise<number> => {
      let errors = 0;
      const until = Date.now() + ms;
      await Promise.all(
        Array.from({ length: this.connections }, async () => {
          while (Date.now() < until) {
            const start = process.hrtime.bigint();
            const { status } = await this.send(target.port, call);
            if (status !== 200) errors++;
            latencies?.push(Number(process.hrtime.bigint() - start) / 1e6);
          }
        }),
      );
      return errors;
    };
    await run(1_000, undefined);
    const latencies: number[] = [];
    const cpuBefore = cpuMs(target.pid);
    const start = Date.now();
    const errors = await run(seconds * 1_000, latencies);
    const elapsed = (Date.now() - start) / 1_000;
    const cpu = cpuMs(target.pid) - cpuBefore;
    latencies.sort((a, b) => a - b);
    return { name, rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuMsPerRequest: cpu / latencies.length, errors };
  }
}

/** One line per result: req/s, p50, p99, server CPU per request and the share of the floor. */
export function formatResult(result: LoadResult, floorRps: number): string {
  return (
    `${result.name.padEnd(36)} ${Math.round(result.rps).toString().padStart(7)} req/s  p50 ${result.p50.toFixed(2).padStart(7)} ms  p99 ${result.p99.toFixed(2).padStart(7)} ms  ` +
    `cpu ${result.cpuMsPerRequest.toFixed(3)} ms/req  ${((100 * result.rps) / floorRps).toFixed(1).padStart(5)}% of floor${result.errors ? `  ERRORS ${result.errors}` : ''}`
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
export async function withServerBench(options: { name: string; appName: string; connections: number; seconds: number; writeApp: (dir: string) => void }, body: (bench: ServerBench) => Promise<void>): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), `tessera-bench-${options.name}-`));
  const children: ChildProcess[] = [];
  const http = new HttpLoad(options.connections, options.seconds);
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
 * Loads the floor, then each case (`[key, name]`, those of BENCH_CASES when set, for profiling one path)
 * with its call; answers the results, the floor's first, and the cases that ran.
 */
export async function measureCases(bench: ServerBench, cases: ReadonlyArray<readonly [string, string]>, calls: Record<string, HttpCall>): Promise<{ results: LoadResult[]; ran: Array<readonly [string, string]>; floorRps: number }> {
  const only = process.env['BENCH_CASES']?.split(',');
  const ran = cases.filter(([key]) => !only || only.includes(key));
  const results: LoadResult[] = [await bench.http.load('floor: bare node:http', bench.floor, { method: 'GET', path: '/' })];
  for (const [key, name] of ran) {
    const call = calls[key];
    if (call) results.push(await bench.http.load(name, bench.tessera, call));
  }
  return { results, ran, floorRps: results[0]?.rps ?? 1 };
}
