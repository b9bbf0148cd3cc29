import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from './free-port';
import { makeTempDir } from './temp-dir';

const candidates = [process.env['NATS_SERVER_BIN'], '/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];

/** Path of a `nats-server` binary, or undefined when none is installed (tests then skip, saying so). */
export function findNatsServer(): string | undefined {
  for (const candidate of candidates) if (candidate && existsSync(candidate)) return candidate;
  const which = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' });
  const found = which.stdout.trim();
  return found || undefined;
}

export const natsSkipReason = 'nats-server is not installed (apt-get install nats-server); .ci/run installs it so CI runs this test';

export interface NatsServerHandle {
  url: string;
  port: number;
  /** Stops the server (SIGTERM, then SIGKILL). */
  stop(): Promise<void>;
  /** Stops and starts it again on the same port and store directory. */
  restart(): Promise<void>;
}

/** Starts a real `nats-server` with JetStream on a random port and its own store directory. */
export async function startNatsServer(options: { jetstream?: boolean } = {}): Promise<NatsServerHandle> {
  const binary = findNatsServer();
  if (!binary) throw new Error(natsSkipReason);
  const port = await freePort();
  const store = makeTempDir('tessera-nats-');
  let child: ChildProcess | undefined;

  const launch = async (): Promise<void> => {
    const args = ['-a', '127.0.0.1', '-p', String(port)];
    if (options.jetstream !== false) args.push('-js', '-sd', store.path);
    child = spawn(binary, args, { stdio: 'ignore' });
    await waitForPort(port, 10_000);
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => running.kill('SIGKILL'), 5_000);
      running.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      running.kill('SIGTERM');
    });
  };

  await launch();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    stop: async () => {
      await stop();
      store.remove();
    },
    restart: async () => {
      await stop();
      await launch();
    },
  };
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nats-server did not open port ${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
