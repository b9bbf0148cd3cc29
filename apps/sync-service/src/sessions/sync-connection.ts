/**
 * One sync WebSocket: decodes the client's binary frames, runs the sessions they open (BIND, IDENT,
 * UPLOAD, MARK, UNBIND, PING) one message at a time, and sends DOWNLOADs whenever a bound partition's
 * history grows. Protocol rules come from @tessera/sync-protocol; this class only sequences them and maps
 * outcomes to the error messages realm-core clients accept. It must never send a code the client aborts on
 * (the library's SendableErrorCode type guards that).
 */
import { checkPartitionValue } from '@tessera/platform';
import { type RuleUser } from '@tessera/rules';
import {
  type ClientIdentMessage,
  type ClientMessage,
  decodeClientMessage,
  type DownloadCursor,
  downloadMessage,
  encodeServerMessage,
  formatPartitionValue,
  type JsonErrorAction,
  jsonErrorMessage,
  type MarkMessage,
  parseChangeset,
  parsePartitionValue,
  type PartitionValue,
  type SendableErrorCode,
  type ServerMessage,
  SyncProtocolError,
  type UploadMessage,
  type BindMessage,
} from '@tessera/sync-protocol';
import { EJSON } from 'bson';
import { PartitionHub, type PartitionListener } from './partition-hub';
import { type SyncMode } from './sync-config';

/** The transport side of a connection: the WebSocket, seen through what the protocol needs. */
export interface SyncSocket {
  send(bytes: Uint8Array): void;
  close(): void;
}

export interface SyncConnectionContext {
  appId: string;
  user: RuleUser;
  /** The sync mode of the app's live configuration (read at each BIND, so a deploy applies to new sessions). */
  syncMode(): Promise<SyncMode>;
  hub: PartitionHub;
  log(event: string, fields: Record<string, unknown>): void;
}

interface Session extends PartitionListener {
  ident: number;
  key: string;
  canWrite: boolean;
  clientFileIdent?: number;
  cursor?: DownloadCursor;
  lastLatestServerVersion: number;
  /** A session error was sent: the client will UNBIND and expects no UNBOUND. */
  failed: boolean;
}

/** Session-level errors after which the client's local file cannot continue with this server's history. */
const resetCodes = new Set<number>([208, 209, 210, 211, 222]);
/**
 * A DOWNLOAD is cut once its changesets pass this many bytes. realm-core's server cuts at 128 KiB
 * (recording g of the conformance traffic: the first batch stops right after the 836 KiB changeset).
 */
const downloadBatchBytes = 128 * 1024;

export class SyncConnection {
  private readonly sessions = new Map<number, Session>();
  /** Session idents refused at BIND: the client still sends UNBIND for them, and expects no UNBOUND. */
  private readonly refusedBinds = new Set<number>();
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly socket: SyncSocket,
    private readonly context: SyncConnectionContext,
  ) {}

  /** Queues a frame: messages of one connection are handled strictly in order. */
  receive(bytes: Uint8Array): void {
    this.enqueue(() => this.handleFrame(bytes));
  }

  /** The socket closed: the connection's sessions stop listening to their partitions. */
  close(): void {
    this.closed = true;
    for (const session of this.sessions.values()) this.context.hub.unlisten(session.key, session);
    this.sessions.clear();
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(task).catch((error: unknown) => {
      this.context.log('sync connection failed', { appId: this.context.appId, error: error instanceof Error ? error.message : String(error) });
      this.connectionError(101, 'internal server error');
    });
  }

  private send(message: ServerMessage): void {
    if (!this.closed) this.socket.send(encodeServerMessage(message));
  }

  /** A connection-level error (session ident 0) ends the connection. */
  private connectionError(code: SendableErrorCode, message: string): void {
    this.send({ type: 'error', code, message, tryAgain: false, sessionIdent: 0 });
    this.socket.close();
    this.close();
  }

  private sessionError(session: Session | number, code: SendableErrorCode, message: string, action: JsonErrorAction): void {
    const ident = typeof session === 'number' ? session : session.ident;
    const known = this.sessions.get(ident);
    if (known) {
      known.failed = true;
      this.context.hub.unlisten(known.key, known);
    } else {
      this.refusedBinds.add(ident);
    }
    this.send(jsonErrorMessage(code, ident, { message, action }));
  }

  private async handleFrame(bytes: Uint8Array): Promise<void> {
    if (this.closed) return;
    let message: ClientMessage;
    try {
      message = decodeClientMessage(bytes);
    } catch (error) {
      if (!(error instanceof SyncProtocolError)) throw error;
      this.connectionError(error.kind === 'unknown_message' ? 102 : error.kind === 'bad_decompression' ? 110 : 103, error.message);
      return;
    }
    switch (message.type) {
      case 'bind':
        return this.bind(message);
      case 'ident':
        return this.ident(message);
      case 'upload':
        return this.upload(message);
      case 'mark':
        return this.mark(message);
      case 'unbind':
        return this.unbind(message.sessionIdent);
      case 'ping':
        this.send({ type: 'pong', timestamp: message.timestamp });
        return;
      case 'json_error':
        this.context.log('sync client reported an error', { appId: this.context.appId, code: message.code, session: message.sessionIdent });
        return;
    }
  }

  private async bind(message: BindMessage): Promise<void> {
    if (this.sessions.has(message.sessionIdent) || this.refusedBinds.has(message.sessionIdent)) return this.connectionError(107, `session ident ${message.sessionIdent} is already in use`);
    const mode = await this.context.syncMode();
    if (mode.kind === 'flexible') return this.connectionError(113, 'the app uses flexible sync: open a flexible sync configuration');
    if (mode.kind === 'disabled') {
      return this.sessionError(message.sessionIdent, 201, 'partition-based sync is not enabled for this app', 'ApplicationBug');
    }
    let partition: PartitionValue;
    try {
      partition = parsePartitionValue(message.path);
    } catch (error) {
      if (!(error instanceof SyncProtocolError)) throw error;
      return this.sessionError(message.sessionIdent, 204, `attempted to bind on illegal partition: ${error.message}`, 'ApplicationBug');
    }
    const illegal = checkPartitionValue(mode.type, message.path, { required: mode.required });
    if (illegal) return this.sessionError(message.sessionIdent, 204, illegal.message, 'ApplicationBug');

    const decision = await mode.permissions.evaluate({ user: this.context.user, partition: partitionForRules(message.path) });
    if (!decision.read) {
      return this.sessionError(message.sessionIdent, 206, `user does not have permission to sync on partition ${message.path}`, 'ApplicationBug');
    }
    const key = PartitionHub.key(this.context.appId, formatPartitionValue(partition));
    const session: Session = {
      ident: message.sessionIdent,
      key,
      canWrite: decision.write,
      lastLatestServerVersion: -1,
      failed: false,
      historyGrew: () => this.enqueue(() => this.sendDownloads(session, false)),
    };
    this.sessions.set(message.sessionIdent, session);
    if (message.needClientFileIdent) {
      const file = await this.context.hub.history(key).registerClientFile();
      this.send({ type: 'ident', sessionIdent: session.ident, clientFileIdent: file.ident, clientFileIdentSalt: file.salt });
    }
  }

  /** The session a message names, or a connection error when it was never bound. */
  private boundSession(ident: number): Session | undefined {
    const session = this.sessions.get(ident);
    if (!session) this.connectionError(106, `no session with ident ${ident}`);
    return session;
  }

  private async ident(message: ClientIdentMessage): Promise<void> {
    const session = this.boundSession(message.sessionIdent);
    if (!session || session.failed) return;
    if (session.clientFileIdent !== undefined) return this.connectionError(109, 'IDENT received twice');
    const history = this.context.hub.history(session.key);
    const result = await history.bootstrapClient(message);
    if (!result.ok) return this.sessionError(session, result.code, result.message, resetCodes.has(result.code) ? 'ClientReset' : 'ProtocolViolation');
    session.clientFileIdent = message.clientFileIdent;
    session.cursor = { serverVersion: message.downloadServerVersion, clientVersion: message.downloadClientVersion };
    this.context.hub.listen(session.key, session);
    // The first DOWNLOAD goes out even when it is empty (realm-core's server does the same).
    await this.sendDownloads(session, true);
  }

  private async upload(message: UploadMessage): Promise<void> {
    const session = this.boundSession(message.sessionIdent);
    if (!session || session.failed) return;
    const ident = session.clientFileIdent;
    if (ident === undefined) return this.connectionError(109, 'UPLOAD before IDENT');
    if (!session.canWrite && message.changesets.some((changeset) => !onlySchema(changeset.changeset))) {
      return this.sessionError(session, 206, 'user does not have write permission on this partition', 'ApplicationBug');
    }
    const progress = { progressClientVersion: message.progressClientVersion, progressServerVersion: message.progressServerVersion, lockedServerVersion: message.lockedServerVersion };
    // The hub wakes every session of the partition, on every replica, the uploader included (its upload cursor moved).
    const result = await this.context.hub.integrateUpload(session.key, ident, message.changesets, progress);
    if (!result.ok) {
      return this.sessionError(session, result.code, result.message, result.code === 212 ? 'ApplicationBug' : resetCodes.has(result.code) ? 'ClientReset' : 'ProtocolViolation');
    }
    await this.context.hub.history(session.key).noteDownloadProgress(ident, message.progressServerVersion);
  }

  private async mark(message: MarkMessage): Promise<void> {
    const session = this.boundSession(message.sessionIdent);
    if (!session || session.failed) return;
    if (session.clientFileIdent === undefined) return this.connectionError(109, 'MARK before IDENT');
    // Download completion: answer once everything in the history at this moment has been sent.
    await this.sendDownloads(session, false);
    this.send({ type: 'mark', sessionIdent: session.ident, requestIdent: message.requestIdent });
  }

  private unbind(ident: number): Promise<void> {
    if (this.refusedBinds.delete(ident)) return Promise.resolve();
    const session = this.sessions.get(ident);
    if (!session) {
      this.connectionError(106, `no session with ident ${ident}`);
      return Promise.resolve();
    }
    this.sessions.delete(ident);
    this.context.hub.unlisten(session.key, session);
    if (!session.failed) this.send({ type: 'unbound', sessionIdent: ident });
    return Promise.resolve();
  }

  /**
   * Sends DOWNLOADs until the session's cursor reaches the head; with `force`, at least one. Like
   * realm-core's server, nothing goes out while the history has not grown: an UPLOAD that integrates
   * nothing new (progress only, or changesets integrated before) gets no DOWNLOAD.
   */
  private async sendDownloads(session: Session, force: boolean): Promise<void> {
    const ident = session.clientFileIdent;
    if (this.closed || session.failed || ident === undefined || !session.cursor || this.sessions.get(session.ident) !== session) return;
    const history = this.context.hub.history(session.key);
    let mustSend = force;
    for (;;) {
      const cursor: DownloadCursor = session.cursor;
      const batch = await history.download(ident, cursor, downloadBatchBytes);
      const news =
        batch.changesets.length > 0 ||
        batch.downloadServerVersion !== cursor.serverVersion ||
        batch.latestServerVersion !== session.lastLatestServerVersion;
      if (!news && !mustSend) return;
      this.send(downloadMessage(session.ident, batch));
      mustSend = false;
      session.cursor = { serverVersion: batch.downloadServerVersion, clientVersion: batch.downloadClientVersion };
      session.lastLatestServerVersion = batch.latestServerVersion;
      if (batch.downloadServerVersion >= batch.latestServerVersion) return;
    }
  }
}

/** Schema instructions a read-only client writes when it opens its file; they change no data. */
function onlySchema(changeset: Uint8Array): boolean {
  if (changeset.length === 0) return true;
  try {
    return parseChangeset(changeset).instructions.every((instruction) => instruction.type === 'AddTable' || instruction.type === 'AddColumn');
  } catch {
    return false;
  }
}

/** `%%partition` as rules see it: the BIND path as Extended JSON, so ObjectIds and longs keep their types. */
function partitionForRules(path: string): unknown {
  const text = path.trim();
  if (/^-?[0-9]+$/.test(text)) return EJSON.parse(`{"$numberLong":"${text}"}`);
  return EJSON.parse(text);
}
