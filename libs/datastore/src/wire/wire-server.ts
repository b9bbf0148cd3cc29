/**
 * The datastore wire server: a MongoDB wire-protocol listener in front of the embedded engine, so the
 * official driver (and the MongoDB adapter built on it) can use embedded clusters from other processes. It
 * answers as the primary of a one-member replica set. Each connection serves the embedded cluster its
 * handshake names (the driver's `appName`), stored where standalone mode keeps it (`<clustersDir>/<cluster>`),
 * so one data directory works either way. With `credentials`, a connection must authenticate with
 * SCRAM-SHA-256 before any command other than the handshake (wire-auth.ts).
 */
import { join } from 'node:path';
import { Binary, Long } from 'bson';
import { type Document } from '../api/data-source';
import { DatastoreError, DatastoreErrorCode } from '../api/datastore.error';
import { commitTimestamp } from '../embedded/change-stream';
import { type EmbeddedClient, openEmbeddedClient } from '../embedded/embedded-client';
import { type ServiceStoreOptions } from '../embedded/service-store';
import { type CommandServer, runCommand, type WireConnection } from './commands';
import { CursorRegistry } from './cursors';
import { WireMetrics } from './metrics';
import { WireCommandError } from './errors';
import { ProtocolError } from './protocol';
import { SessionRegistry } from './sessions';
import { DatastoreAuthenticator } from './wire-auth';
import { type WireConnectionInfo, type WireConnectionLoad, WireListener, type WireTraffic } from './wire-listener';

export type { WireConnectionLoad };

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
  /** The one user clients authenticate as (SCRAM-SHA-256); without it the server is open to any client. */
  credentials?: { user: string; password: string };
  /** PEM certificate chain and key: the server speaks TLS only. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Flow control of one connection (see WireListenerOptions). */
  maxPendingRequests?: number;
  maxReplyBufferBytes?: number;
}

const handshakeCommands = new Set(['hello', 'isMaster', 'ismaster']);

const emptySignature = new Binary(Buffer.alloc(20), 0);

/** Cluster names the server accepts from a handshake (App Services names: letters, digits, `_`, `-`; tools such as mongosh send names with blanks and get the default cluster). */
const clusterNamePattern = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

/**
 * The application names MongoDB's database tools send, whatever the connection string says: they name the
 * tool, not a cluster, so their connections get the default cluster (or `mongorestore` would write where
 * `mongodump` never reads), or the one a `<user>+<cluster>` user name names (wire-auth.ts).
 */
const databaseTools = new Set(['mongodump', 'mongorestore', 'mongoimport', 'mongoexport', 'mongofiles', 'mongostat', 'mongotop', 'bsondump']);

export class WireServer implements CommandServer {
  private readonly clients = new Map<string, EmbeddedClient>();
  private readonly connections = new Map<number, WireConnection & { requestedCluster?: string }>();
  private listener?: WireListener;
  private readonly auth?: DatastoreAuthenticator;
  readonly cursors = new CursorRegistry();
  readonly sessions = new SessionRegistry();
  readonly metrics = new WireMetrics();
  private closing = false;
  private readonly sweeper: NodeJS.Timeout;
  readonly replicaSetName: string;
  readonly defaultCluster: string;

  private constructor(private readonly options: WireServerOptions) {
    this.replicaSetName = options.replicaSetName ?? 'tessera';
    this.defaultCluster = options.defaultCluster ?? 'default';
    if (options.credentials) this.auth = new DatastoreAuthenticator(options.credentials.user, options.credentials.password, (name) => clusterNamePattern.test(name));
    // Idle cursors and sessions are dropped as MongoDB does (10 and 30 minutes).
    this.sweeper = setInterval(() => void this.sweep(), 60_000);
    this.sweeper.unref();
  }

  static async start(options: WireServerOptions): Promise<WireServer> {
    const wire = new WireServer(options);
    try {
      wire.listener = await WireListener.start(
        {
          port: options.port,
          host: options.host,
          tls: options.tls,
          log: options.log,
          maxPendingRequests: options.maxPendingRequests,
          maxReplyBufferBytes: options.maxReplyBufferBytes,
          onClose: (connection) => {
            wire.connections.delete(connection.id);
            wire.auth?.forget(connection.id);
          },
        },
        (connection, db, command) => wire.execute(connection, db, command),
      );
    } catch (error) {
      clearInterval(wire.sweeper);
      throw error;
    }
    return wire;
  }

  get port(): number {
    if (!this.listener) throw new Error('the wire server is not listening');
    return this.listener.port;
  }

  /** A connection string for this server (`directConnection`: the driver keeps to this address). */
  uri(host = '127.0.0.1'): string {
    return `mongodb://${host}:${this.port}/?directConnection=true`;
  }

  get listening(): boolean {
    return (this.listener?.listening ?? false) && !this.closing;
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
    return typeof name === 'string' && clusterNamePattern.test(name) && !databaseTools.has(name) ? name : this.defaultCluster;
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

  /** Bytes, requests and connections the listener carried since it started. */
  traffic(): WireTraffic {
    return this.listener?.trafficStats() ?? { bytesIn: 0, bytesOut: 0, numRequests: 0, currentConnections: 0, totalConnections: 0 };
  }

  /** Each open connection's load. */
  connectionLoads(): WireConnectionLoad[] {
    return this.listener?.connectionLoads() ?? [];
  }

  private async execute(info: WireConnectionInfo, db: string, command: Document): Promise<Document> {
    let connection = this.connections.get(info.id);
    if (!connection) {
      connection = { id: info.id, me: info.me };
      this.connections.set(info.id, connection);
    }
    try {
      if (this.auth) {
        const answered = this.auth.intercept(info.id, command);
        if (answered) {
          // Authenticated now: the connection gets the cluster its user name named, else the one its
          // handshake named.
          const named = this.auth.clusterOf(info.id);
          if (named !== undefined) {
            connection.cluster = named;
            connection.requestedCluster = undefined;
          } else if (this.auth.isAuthenticated(info.id) && connection.requestedCluster !== undefined) {
            connection.cluster = connection.requestedCluster;
            connection.requestedCluster = undefined;
          }
          return answered;
        }
        if (!this.auth.isAuthenticated(info.id) && handshakeCommands.has(Object.keys(command)[0] ?? '')) {
          // Before authentication a handshake opens no cluster of its own (an anonymous client naming
          // thousands would open thousands): it is answered on the default cluster, its name kept.
          connection.requestedCluster = this.clusterOf(command);
          connection.cluster = this.defaultCluster;
        }
        const reply = await runCommand({ server: this, connection, db, command }).catch((error: unknown) => errorReply(error, this.options.log));
        return this.withClusterTime(connection, this.auth.decorateHandshake(info.id, command, reply));
      }
      return this.withClusterTime(connection, await runCommand({ server: this, connection, db, command }));
    } catch (error) {
      return this.withClusterTime(connection, errorReply(error, this.options.log));
    }
  }

  /**
   * `operationTime` and `$clusterTime`, as a replica set member puts them on every reply, failures
   * included: the time of the cluster's last commit. Drivers keep the highest they saw and send it back as
   * `readConcern.afterClusterTime` in a causally consistent session (every session by default), and
   * transactions' commands expect it there. The signature is empty: there are no keys to sign with.
   */
  private withClusterTime(connection: WireConnection, reply: Document): Document {
    const cluster = connection.cluster ?? this.defaultCluster;
    const client = this.clients.get(cluster);
    if (!client || 'operationTime' in reply) return reply;
    const { seq, time } = client.store.lastCommit();
    const clusterTime = commitTimestamp(seq, time);
    return { ...reply, operationTime: clusterTime, $clusterTime: { clusterTime, signature: { hash: emptySignature, keyId: Long.ZERO } } };
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.sweeper);
    await this.listener?.close();
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
    return { ok: 0, errmsg: error.message, code: error.code, codeName, ...(error.errorResponse ?? {}) };
  }
  if (error instanceof ProtocolError) return { ok: 0, errmsg: error.message, code: 9, codeName: 'FailedToParse' };
  log?.('error', `wire command failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return { ok: 0, errmsg: error instanceof Error ? error.message : String(error), code: 1, codeName: 'InternalError' };
}
