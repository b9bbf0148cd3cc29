import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { startOnFreePort } from './free-port';

export const repositoryRoot = resolve(__dirname, '..', '..', '..');

export interface ServerProcess {
  url: string;
  port: number;
  /** Process id (also the id of its process group). */
  pid: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** What the process wrote to stdout alone so far (the log and the banner, without stderr). */
  stdout(): string;
  /** Milliseconds from spawn until the process printed that it is running. */
  readyAfterMs: number;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs Tessera as users do, as a child process on a random port, and waits until it prints its banner.
 * `command` defaults to the built entry point; pass `['npm', 'start']` to go through the npm script.
 */
export async function startServerProcess(options: { env?: Record<string, string>; command?: string[]; timeoutMs?: number } = {}): Promise<ServerProcess> {
  // A port found free can still be taken before the child listens on it: then the child starts again on another.
  return startOnFreePort((port) => launch(port, options));
}

async function launch(port: number, options: { env?: Record<string, string>; command?: string[]; timeoutMs?: number }): Promise<ServerProcess> {
  const [executable, ...args] = options.command ?? [process.execPath, '--no-node-snapshot', 'apps/server/dist/main.js'];
  const started = Date.now();
  const child: ChildProcess = spawn(executable, args, {
    cwd: repositoryRoot,
    // The datastore wire server (standalone mode) on a random port too: parallel servers never contend for 27017.
    env: { ...process.env, PORT: String(port), TESSERA_DATASTORE_PORT: '0', LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

  const timeoutMs = options.timeoutMs ?? 60_000;
  await new Promise<void>((ready, fail) => {
    const timer = setInterval(() => {
      if (output.includes('Tessera is running')) {
        clearInterval(timer);
        ready();
      } else if (child.exitCode !== null || Date.now() - started > timeoutMs) {
        clearInterval(timer);
        killGroup(child, 'SIGKILL');
        fail(new Error(`server did not start (exit ${child.exitCode}):\n${output}`));
      }
    }, 20);
  });
  const readyAfterMs = Date.now() - started;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? 0,
    output: () => output,
    stdout: () => stdout,
    readyAfterMs,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) killGroup(child, signal);
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}
