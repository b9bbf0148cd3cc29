/**
 * The datastore wire server: a TCP server speaking the MongoDB wire protocol in front of the embedded
 * engine, so the official driver (and the MongoDB adapter built on it) can use embedded clusters from other
 * processes. It answers as the primary of a one-member replica set. Each connection serves the embedded
 * cluster its handshake names (the driver's `appName`), stored where standalone mode keeps it
 * (`<clustersDir>/<cluster>`), so one data directory works either way.
 */
import { randomInt } from 'node:crypto';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { type Document } from '../api/data-source';
import { DatastoreError, DatastoreErrorCode } from '../api/datastore.error';
import { type EmbeddedClient, openEmbeddedClient } from '../embedded/embedded-client';
import { type ServiceStoreOptions } from '../embedded/service-store';
import { type CommandContext, type CommandServer, runCommand, type WireConnection } from './commands';
import { CursorRegistry } from './cursors';
import { WireCommandError } from './errors';
import { decodeMessage, encodeMsg, encodeReply, MAX_MESSAGE_SIZE, MessageReader, MORE_TO_COME, ProtocolError } from './protocol';
import { SessionRegistry } from './sessions';

export interface WireServerOptions {
  /** Where the embedded clusters live: cluster `name` is the store in `<clustersDir>/<name>`. */
  clustersDir: string;
  /** The cluster of connections whose handshake names none (or no valid one). */
  defaultCluster?: string;
  port?: number;
  host?: string;
  embedded?: ServiceStoreOptions;
  /** Replica set name reported in `hello`. */
  replicaSetName?: string;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /**
   * Flow control of one connection: requests read and not yet answered (default 64), and reply bytes the
   * client has not taken yet (default 32 MiB). Past either, the server stops reading from that connection
   * until it catches up, so a client that pipelines requests and never reads cannot grow its memory.
   */
  maxPendingRequests?: number;
  maxReplyBufferBytes?: number;
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

/** Cluster names the server accepts from a handshake (App Services names: letters, digits, `_`, `-`; tools such as mongosh send names with blanks and get the default cluster). */
const clusterNamePattern = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

export class WireServer implements CommandServer {
  private readonly clients = new Map<string, EmbeddedClient>();
  private readonly sockets = new Set<Socket>();
  private readonly loads = new Map<Socket, () => WireConnectionLoad>();
  readonly cursors = new CursorRegistry();
  readonly sessions = new SessionRegistry();
  private nextConnectionId = 1;
  private requestId = randomInt(1, 1_000_000);
  private closing = false;
  private readonly sweeper: NodeJS.Timeout;
  readonly replicaSetName: string;
  readonly defaultCluster: string;

  private constructor(
    private readonly server: Server,
    private readonly options: WireServerOptions,
  ) {
    this.replicaSetName = options.replicaSetName ?? 'tessera';
    this.defaultCluster = options.defaultCluster ?? 'default';
    // Idle cursors and sessions are dropped as MongoDB does (10 and 30 minutes).
    this.sweeper = setInterval(() => void this.sweep(), 60_000);
    this.sweeper.unref();
  }

  static async start(options: WireServerOptions): Promise<WireServer> {
    const server = createServer();
    const wire = new WireServer(server, options);
    server.on('connection', (socket) => wire.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return wire;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** A connection string for this server (`directConnection`: the driver keeps to this address). */
  uri(host = '127.0.0.1'): string {
    return `mongodb://${host}:${this.port}/?directConnection=true`;
  }

  get listening(): boolean {
    return this.server.listening && !this.closing;
  }

  /** The embedded client of a cluster, opened on first use and kept until the server closes. */
  clientFor(cluster: string): EmbeddedClient {
    let client = this.clients.get(cluster);
    if (!client) {
      client = openEmbeddedClient(join(this.options.clustersDir, cluster), this.options.embedded);
      this.clients.set(cluster, client);
    }
    return client;
  }

  clusterOf(handshake: Document): string {
    const client = handshake.client as Document | undefined;
    const application = client?.application as Document | undefined;
    const name = application?.name;
    return typeof name === 'string' && clusterNamePattern.test(name) ? name : this.defaultCluster;
  }

  /**
   * Drops idle cursors and sessions. Never rejects (it runs from a timer, where a rejection would be
   * unhandled and end the process): a close that fails is logged and the rest still close.
   */
  async sweep(): Promise<void> {
    const report = (what: string) => (error: unknown) =>
      this.options.log?.('error', `closing an idle ${what} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    try {
      await this.cursors.sweep(10 * 60_000, report('cursor'));
      await this.sessions.sweep(30 * 60_000, report('session'));
    } catch (error) {
      report('cursor or session')(error);
    }
  }

  private accept(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.setNoDelay(true);
    const local = (socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
    const connection: WireConnection = { id: this.nextConnectionId++, me: `${local.includes(':') ? `[${local}]` : local}:${socket.localPort ?? this.port}` };
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
      this.loads.delete(socket);
    });
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
  private async handle(socket: Socket, connection: WireConnection, raw: Buffer): Promise<void> {
    try {
      const message = decodeMessage(raw);
      const named = message.command.$db;
      const db = message.kind === 'msg' ? (typeof named === 'string' ? named : '') : message.collection.replace(/\.\$cmd$/, '');
      const context: CommandContext = { server: this, connection, db, command: message.command };
      const reply = await this.execute(context);
      if (message.kind === 'msg' && message.flags & MORE_TO_COME) return;
      if (socket.destroyed) return;
      const requestId = (this.requestId = (this.requestId + 1) % 0x7fffffff);
      const encode = (body: Document) => (message.kind === 'msg' ? encodeMsg(requestId, message.header.requestId, body) : encodeReply(requestId, message.header.requestId, body));
      let bytes: Buffer;
      try {
        bytes = encode(reply);
      } catch (error) {
        // A reply that cannot be encoded (larger than BSON allows) is answered with the failure instead.
        bytes = encode(errorReply(new WireCommandError(10334, 'BSONObjectTooLarge', `reply cannot be encoded: ${error instanceof Error ? error.message : String(error)}`)));
      }
      socket.write(bytes);
    } catch (error) {
      this.options.log?.('warn', `wire connection ${connection.id}: ${error instanceof Error ? error.message : String(error)}; closing`);
      socket.destroy();
    }
  }

  private async execute(context: CommandContext): Promise<Document> {
    try {
      return await runCommand(context);
    } catch (error) {
      return errorReply(error, this.options.log);
    }
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.sweeper);
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
    await this.cursors.closeAll();
    await this.sessions.closeAll();
    for (const client of this.clients.values()) await client.close();
    this.clients.clear();
  }
}

/** A command failure as MongoDB answers it: `{ok: 0, errmsg, code, codeName}` (plus error labels). */
export function errorReply(error: unknown, log?: WireServerOptions['log']): Document {
  if (error instanceof WireCommandError) {
    return { ok: 0, errmsg: error.message, code: error.code, codeName: error.codeName, ...(error.labels.length ? { errorLabels: error.labels } : {}) };
  }
  if (error instanceof DatastoreError) {
    // A numbered error without a name of its own (a regex's 51091, for one) is `Location<code>` in MongoDB.
    const codeName = DatastoreErrorCode[error.codeName] === error.code ? error.codeName : `Location${error.code}`;
    return { ok: 0, errmsg: error.message, code: error.code, codeName };
  }
  if (error instanceof ProtocolError) return { ok: 0, errmsg: error.message, code: 9, codeName: 'FailedToParse' };
  log?.('error', `wire command failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return { ok: 0, errmsg: error instanceof Error ? error.message : String(error), code: 1, codeName: 'InternalError' };
}
