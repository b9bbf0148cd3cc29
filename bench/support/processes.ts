/**
 * Child processes for the benches that measure a server in its own process (bench/http, bench/sync): the
 * built standalone server and a bare floor server, started, read from /proc and stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';

/** The repository root, from a bench's compiled file (bench/dist/<name>/main.js). */
export const repoRoot = resolve(__dirname, '..', '..', '..');

export function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}

/** Starts a child process and resolves once its stdout matched `ready`; the match is returned. */
export async function startProcess(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`process did not start within 60 s:\n${out.slice(-2000)}\n${err.slice(-2000)}`)), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = out.match(ready);
      if (match) {
        clearTimeout(timer);
        child.stdout?.removeAllListeners('data');
        child.stdout?.resume();
        done({ child, match });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`process exited with ${code}:\n${out.slice(-2000)}\n${err.slice(-2000)}`));
    });
  });
}

/**
 * Settings every bench gives the servers it starts: the per-app request budget raised out of reach (its check
 * still runs), so a bench measures the server, not the budget. TESSERA_APP_REQUESTS_PER_SECOND overrides it.
 */
export const benchServerSettings: Record<string, string> = { TESSERA_APP_REQUESTS_PER_SECOND: process.env['TESSERA_APP_REQUESTS_PER_SECOND'] ?? '1000000' };

/**
 * The NODE_ENV the benches run the server with: `production`, as the runtime image runs it (Dockerfile,
 * hence the Kubernetes manifests), unless the bench's own environment sets one. Libraries check it
 * (graphql-js's development-mode instanceof checks, for one), so a bench without it measures a server
 * no deployment runs.
 */
export const serverNodeEnv = process.env['NODE_ENV'] ?? 'production';

/**
 * Node flags for the server under test from BENCH_SERVER_NODE_ARGS (space-separated), for profiling it:
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` (Node refuses `--cpu-prof` in NODE_OPTIONS).
 */
const serverNodeArgs = (process.env['BENCH_SERVER_NODE_ARGS'] ?? '').split(' ').filter(Boolean);

/** The built standalone server with `appDir` as its example app; resolves with its port, pid and the app's client id. */
export async function startTessera(work: string, appDir: string, appName: string, nodeArgs: string[] = []): Promise<{ child: ChildProcess; port: number; pid: number; appId: string }> {
  const port = await freePort();
  const { child, match } = await startProcess(
    ['--no-node-snapshot', ...serverNodeArgs, ...nodeArgs, 'apps/server/dist/main.js'],
    { ...process.env, NODE_ENV: serverNodeEnv, PORT: String(port), TESSERA_DATA_DIR: resolve(work, 'data'), TESSERA_EXAMPLE_APP: appDir, TESSERA_ADMIN_PASSWORD: 'bench-password', TESSERA_DATASTORE_PORT: String(await freePort()), LOG_LEVEL: 'warn', ...benchServerSettings },
    new RegExp(`app "${appName}": app id (\\S+)`),
  );
  return { child, port, pid: child.pid ?? 0, appId: match[1] ?? '' };
}

/** CPU time (user + system) of a process in milliseconds, from /proc (clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** CPU time (user + system) of a process's main thread so far, in ms, from /proc. */
export function mainThreadCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuMs(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resident memory of a process in bytes, from /proc. */
export function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) * 1024;
}

/** SIGTERM, then SIGKILL after 10 s: a clean exit lets `--cpu-prof` (BENCH_SERVER_NODE_ARGS) write its profile. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** Access tokens of `count` new anonymous users of an app (`base`: its client API URL, .../app/<app id>). */
export async function anonymousTokens(base: string, count: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${base}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    if (!response.ok) throw new Error(`anonymous login: ${response.status} ${await response.text()}`);
    tokens.push(((await response.json()) as { access_token: string }).access_token);
  }
  return tokens;
}
