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
  const [low] = ephemeralRange();
  const floor = 10_000;
  if (low - floor >= 1_000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = floor + Math.floor(Math.random() * (low - floor));
      if (await canListen(port)) return port;
    }
  }
  return kernelPort();
}

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low, high];
  } catch {
    // not Linux: the usual default
  }
  return [32_768, 60_999];
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
