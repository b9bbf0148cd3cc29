import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A TCP port that was free a moment ago on every interface, for a process the test starts that must be told its
 * port. It is drawn below the kernel's ephemeral range when there is room: a port the kernel hands out itself
 * (`listen(0)`) may be taken again between the check and the process's own listen by the local end of any
 * outgoing connection, which a busy test run opens by the thousand; a port below that range is taken only by
 * another listener, and parallel test workers drawing at random rarely meet.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  const floor = 10_000;
  if (low - floor >= 1_000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = floor + Math.floor(Math.random() * (low - floor));
      if (!FETCH_BLOCKED_PORTS.has(port) && (await canListen(port))) return port;
    }
  }
  return kernelPort();
}

/**
 * Ports of the Fetch standard's "bad port" list at or above the floor: `fetch` (undici) refuses to connect to
 * them ("bad port"), so a server the tests reach with fetch must not get one (10080 failed a CI run).
 */
export const FETCH_BLOCKED_PORTS: ReadonlySet<number> = new Set([10080]);

/** The first port of the kernel's ephemeral range (where `listen(0)` and outgoing connections take theirs). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low)) return low;
  } catch {
    // not Linux: the usual default
  }
  return 32_768;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    // The unspecified address, as the servers under test listen: it clashes with a listener on any interface.
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether `error` says that `port` was taken when something tried to listen on it (Node's listen error, or a server's output quoting it). */
export function portTakenError(error: unknown, port: number): boolean {
  const text = error instanceof Error ? error.message : String(error);
  return new RegExp(`EADDRINUSE: address already in use \\S*:${port}\\b`).test(text);
}

/**
 * Starts something that must be told its port on one from `freePort`, and on another (three tries in all) when
 * that port was taken between the check and its listen; any other failure is thrown at once.
 */
export async function startOnFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (error) {
      if (attempt >= 3 || !portTakenError(error, port)) throw error;
    }
  }
}
