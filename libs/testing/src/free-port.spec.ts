import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { freePort } from './free-port';

const listen = (port: number, host: string): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, () => resolve(server));
  });

describe('freePort', () => {
  it('gives a port below the kernel ephemeral range, which a process can then listen on', async () => {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(low);
    }
    const server = await listen(ports[0], '0.0.0.0');
    await new Promise((done) => server.close(done));
  });

});
