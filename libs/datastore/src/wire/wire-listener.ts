/**
 * A MongoDB wire-protocol listener: TCP (or TLS when a certificate is given), message framing, one request
 * at a time per connection in order, and flow control. What a command means is the caller's `execute`
 * (the datastore's WireServer, the app endpoint of the process host); this module must not know commands.
 */
import { randomInt } from 'node:crypto';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { type Document } from '../api/data-source';
import { WireCommandError } from './errors';
import { decodeMessage, encodeMsg, encodeReply, MAX_MESSAGE_SIZE, MessageReader, MORE_TO_COME } from './protocol';

/** One client connection, as commands see it. */
export interface WireConnectionInfo {
  readonly id: number;
  /** `host:port` the client reached this server at (reported as `me` and the replica set's host). */
  readonly me: string;
  /** The client's address (for login throttling and logs). */
  readonly remoteAddress: string;
}

/** One request: the connection, the database it names (`$db`) and the command document. */
export type WireExecute = (connection: WireConnectionInfo, db: string, command: Document) => Promise<Document>;

export interface WireListenerOptions {
  port?: number;
  host?: string;
  /** PEM certificate chain and key: the listener speaks TLS (the driver's `tls=true`). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /**
   * Flow control of one connection: requests read and not yet answered (default 64), and reply bytes the
   * client has not taken yet (default 32 MiB). Past either, the server stops reading from that connection
   * until it catches up, so a client that pipelines requests and never reads cannot grow its memory.
   */
  maxPendingRequests?: number;
  maxReplyBufferBytes?: number;
  /** Called when a connection closes (its per-connection state can go). */
  onClose?: (connection: WireConnectionInfo) => void;
}

/** What one connection holds in the server's memory (flow control; observability). */
export interface WireConnectionLoad {
  id: number;
  /** Requests read off the socket and not answered yet. */
  pendingRequests: number;
  /** Bytes of requests received and not yet read off as messages. */
  bufferedRequestBytes: number;
  /** Reply bytes written and not yet taken by the client. */
  bufferedReplyBytes: number;
  /** Reading from the socket is paused until the connection catches up. */
  readingPaused: boolean;
}

/** What the listener carried since it started (serverStatus's `network` and `connections`). */
export interface WireTraffic {
  bytesIn: number;
  bytesOut: number;
  numRequests: number;
  currentConnections: number;
  totalConnections: number;
}

export class WireListener {
  private readonly traffic = { bytesIn: 0, bytesOut: 0, numRequests: 0 };
  private readonly sockets = new Set<Socket>();
  private readonly byId = new Map<number, Socket>();
  private readonly loads = new Map<Socket, () => WireConnectionLoad>();
  private nextConnectionId = 1;
  private requestId = randomInt(1, 1_000_000);
  private closing = false;

  private constructor(
    private readonly server: Server,
    private readonly options: WireListenerOptions,
    private readonly execute: WireExecute,
  ) {}

  /** Listens; `execute` answers every command and must not throw (a throw closes the connection). */
  static async start(options: WireListenerOptions, execute: WireExecute): Promise<WireListener> {
    const server: Server = options.tls ? createTlsServer({ cert: options.tls.cert, key: options.tls.key }) : createServer();
    const listener = new WireListener(server, options, execute);
    server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => listener.accept(socket));
    // A failed TLS handshake concerns that client only.
    server.on('tlsClientError', (error: Error) => options.log?.('warn', `wire TLS handshake failed: ${error.message}`));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return listener;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get listening(): boolean {
    return this.server.listening && !this.closing;
  }

  private accept(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.setNoDelay(true);
    const local = (socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
    const connection: WireConnectionInfo = {
      id: this.nextConnectionId++,
      me: `${local.includes(':') ? `[${local}]` : local}:${socket.localPort ?? this.port}`,
      remoteAddress: (socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
    };
    this.byId.set(connection.id, socket);
    const reader = new MessageReader(MAX_MESSAGE_SIZE);
    const maxPending = this.options.maxPendingRequests ?? 64;
    const maxReplyBuffer = this.options.maxReplyBufferBytes ?? 32 * 1024 * 1024;
    let pending = 0;
    let chain = Promise.resolve();
    // Reading stops while the client is behind (too many requests queued, or replies it has not taken).
    const flow = () => {
      if (socket.destroyed) return;
      const behind = pending >= maxPending || socket.writableLength > maxReplyBuffer;
      if (behind && !socket.isPaused()) socket.pause();
      else if (!behind && socket.isPaused()) socket.resume();
    };
    const pump = () => {
      // Messages past the cap stay in the reader (at most what one read brought) until the queue shortens.
      while (pending < maxPending) {
        let message: Buffer | undefined;
        try {
          message = reader.next();
        } catch (error) {
          this.options.log?.('warn', `wire connection ${connection.id}: ${error instanceof Error ? error.message : String(error)}; closing`);
          socket.destroy();
          return;
        }
        if (!message) break;
        const request = message;
        pending++;
        // One request at a time per connection, in order, as drivers expect; none while replies pile up.
        chain = chain
          .then(() => this.drained(socket, maxReplyBuffer))
          .then(() => this.handle(socket, connection, request))
          .finally(() => {
            pending--;
            pump();
          });
      }
      flow();
    };
    socket.on('data', (chunk: Buffer) => {
      this.traffic.bytesIn += chunk.length;
      reader.push(chunk);
      pump();
    });
    socket.on('drain', flow);
    this.loads.set(socket, () => ({
      id: connection.id,
      pendingRequests: pending,
      bufferedRequestBytes: reader.buffered,
      bufferedReplyBytes: socket.writableLength,
      readingPaused: socket.isPaused(),
    }));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.byId.delete(connection.id);
      this.loads.delete(socket);
      this.options.onClose?.(connection);
    });
  }

  /** Closes one connection (its user lost access); false when it is gone already. */
  disconnect(id: number): boolean {
    const socket = this.byId.get(id);
    if (!socket) return false;
    socket.destroy();
    return true;
  }

  /** Bytes and requests received, bytes answered, and connections, since the listener started. */
  trafficStats(): WireTraffic {
    return { ...this.traffic, currentConnections: this.sockets.size, totalConnections: this.nextConnectionId - 1 };
  }

  /** Each open connection's load. */
  connectionLoads(): WireConnectionLoad[] {
    return [...this.loads.values()].map((load) => load());
  }

  /** Resolves once the socket's unsent replies are at most `limit` bytes (or it closed). */
  private drained(socket: Socket, limit: number): Promise<void> {
    if (socket.destroyed || socket.writableLength <= limit) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      socket.on('drain', done);
      socket.on('close', done);
    });
  }

  /** Answers one message. Never throws: a failure it cannot answer closes the connection. */
  private async handle(socket: Socket, connection: WireConnectionInfo, raw: Buffer): Promise<void> {
    try {
      this.traffic.numRequests++;
      const message = decodeMessage(raw);
      const named = message.command.$db;
      const db = message.kind === 'msg' ? (typeof named === 'string' ? named : '') : message.collection.replace(/\.\$cmd$/, '');
      const reply = await this.execute(connection, db, message.command);
      if (message.kind === 'msg' && message.flags & MORE_TO_COME) return;
      if (socket.destroyed) return;
      const requestId = (this.requestId = (this.requestId + 1) % 0x7fffffff);
      const encode = (body: Document) => (message.kind === 'msg' ? encodeMsg(requestId, message.header.requestId, body) : encodeReply(requestId, message.header.requestId, body));
      let bytes: Buffer;
      try {
        bytes = encode(reply);
      } catch (error) {
        // A reply that cannot be encoded (larger than BSON allows) is answered with the failure instead.
        const failure = new WireCommandError(10334, 'BSONObjectTooLarge', `reply cannot be encoded: ${error instanceof Error ? error.message : String(error)}`);
        bytes = encode({ ok: 0, errmsg: failure.message, code: failure.code, codeName: failure.codeName });
      }
      this.traffic.bytesOut += bytes.length;
      socket.write(bytes);
    } catch (error) {
      this.options.log?.('warn', `wire connection ${connection.id}: ${error instanceof Error ? error.message : String(error)}; closing`);
      socket.destroy();
    }
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }
}
