import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { FETCH_BLOCKED_PORTS, freePort, portTakenError, startOnFreePort } from './free-port';

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


  it('starts again on another port when the first was taken before the start listened, and only then', async () => {
    const tried: number[] = [];
    const started = await startOnFreePort(async (port) => {
      tried.push(port);
      if (tried.length === 1) throw new Error(`server did not start (exit 1):\nTessera failed to start: listen EADDRINUSE: address already in use 0.0.0.0:${port}`);
      return `listening on ${port}`;
    });
    expect(tried).toHaveLength(2);
    expect(tried[1]).not.toBe(tried[0]);
    expect(started).toBe(`listening on ${tried[1]}`);

    // Any other failure, or another port's, is the caller's at once.
    let calls = 0;
    await expect(startOnFreePort(() => (calls++, Promise.reject(new Error('bad configuration'))))).rejects.toThrow('bad configuration');
    await expect(startOnFreePort(() => (calls++, Promise.reject(new Error('listen EADDRINUSE: address already in use 127.0.0.1:1'))))).rejects.toThrow('127.0.0.1:1');
    expect(calls).toBe(2);
    // A port that stays taken: three tries, then the failure.
    let taken = 0;
    await expect(startOnFreePort((port) => (taken++, Promise.reject(Object.assign(new Error(`listen EADDRINUSE: address already in use :::${port}`), { code: 'EADDRINUSE' }))))).rejects.toThrow('EADDRINUSE');
    expect(taken).toBe(3);
  });

  it("never gives a port fetch refuses (the Fetch standard's bad ports)", async () => {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    // The first draw lands on 10080; the next one is taken instead.
    const random = vi.spyOn(Math, 'random').mockReturnValueOnce((10_080 - 10_000) / (low - 10_000) + 1e-9);
    try {
      const port = await freePort();
      expect(FETCH_BLOCKED_PORTS.has(port)).toBe(false);
      expect(random).toHaveBeenCalledTimes(2);
    } finally {
      random.mockRestore();
    }
  });

  it('tells a taken port by the port, not by a longer one that starts with it', () => {
    expect(portTakenError(new Error('listen EADDRINUSE: address already in use 127.0.0.1:12345'), 12345)).toBe(true);
    expect(portTakenError('Tessera failed to start: listen EADDRINUSE: address already in use 0.0.0.0:12345\n', 12345)).toBe(true);
    expect(portTakenError(new Error('listen EADDRINUSE: address already in use 127.0.0.1:123456'), 12345)).toBe(false);
    expect(portTakenError(new Error('listen EACCES: permission denied 0.0.0.0:12345'), 12345)).toBe(false);
  });
});
