import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from '@tessera/testing';

/**
 * A TCP relay to a NATS server that a test can cut and restore: a process connected through it loses its
 * connection (as in a network partition) while the rest of the cluster keeps theirs.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly targetPort: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), targetPort);
    await proxy.restore();
    return proxy;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Closes every relayed connection and refuses new ones until `restore()`. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((done) => server.close(() => done()));
  }

  /** Accepts and relays connections again, on the same port. */
  async restore(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          this.sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(this.port, '127.0.0.1', () => done());
    });
    this.server = server;
  }

  close(): Promise<void> {
    return this.cut();
  }
}
