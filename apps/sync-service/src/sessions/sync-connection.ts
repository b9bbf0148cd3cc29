/**
 * One sync WebSocket: decodes the client's binary frames, runs the sessions they open (BIND, IDENT,
 * UPLOAD, MARK, UNBIND, PING) one message at a time, and sends DOWNLOADs whenever a bound partition's
 * history grows. Protocol rules come from @tessera/sync-protocol; this class only sequences them and maps
 * outcomes to the error messages realm-core clients accept. It must never send a code the client aborts on
 * (the library's SendableErrorCode type guards that).
 */
import { type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { type PartitionDecision } from '@tessera/rules';
import {
  checkPartitionValue,
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
import { type PermissionScope, type SyncAppView } from '../lifecycle/sync-apps.service';
import { historyKey, type PartitionHub, type PartitionListener } from './partition-hub';
import { type SyncMetrics } from './sync-metrics';

/** The transport side of a connection: the WebSocket, seen through what the protocol needs. */
export interface SyncSocket {
  send(bytes: Uint8Array): void;
  close(): void;
}

export interface SyncConnectionContext {
  appId: string;
  userId: string;
  /**
   * The app's sync as it is now (mode of the live deployment, reset epoch): read at each BIND and UPLOAD,
   * so a deploy applies to new sessions and a terminate stops uploads at once.
   */
  sync(): Promise<SyncAppView>;
  /** The permission context of a BIND: the user loaded now, with its custom data. */
  permissions(): Promise<PermissionScope>;
  hub: PartitionHub;
  /** Refusals, resets and protocol errors, for the logs (the connection names app, user and partition). */
  report(report: SyncReport): void;
  /** A client file was active on a partition (IDENT, UPLOAD, end of its session): compaction keeps its history. */
  clientSeen?(key: string, clientFileIdent: number): void;
  metrics?: SyncMetrics;
}

/** What went wrong, and for whom: every field a support engineer needs to find the client. */
export interface SyncReport {
  kind: 'refused' | 'reset' | 'protocol_error' | 'terminated' | 'client_error' | 'internal_error';
  code: number;
  message: string;
  appId: string;
  userId: string;
  /** The BIND path (the partition value as the client wrote it), when the report concerns a session. */
  partition?: string;
  sessionIdent?: number;
  action?: JsonErrorAction;
}

interface Session extends PartitionListener {
  ident: number;
  key: string;
  /** The BIND path, as logs name the partition. */
  path: string;
  /** The reset epoch the session's history belongs to. */
  epoch: number;
  recoveryDisabled: boolean;
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

const tracer = trace.getTracer('@tessera/sync-service');

export class SyncConnection {
  private readonly sessions = new Map<number, Session>();
  /**
   * Session idents refused at BIND, with their path. realm-core has already pipelined IDENT (and MARK) for
   * such a session: they are ignored until the client's UNBIND frees the ident, and get no answer.
   */
  private readonly refusedBinds = new Map<number, string>();
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
    if (this.closed) return;
    this.closed = true;
    for (const session of this.sessions.values()) this.endSession(session);
    this.sessions.clear();
  }

  /** The live sessions' paths (partition values as bound), for operations. */
  get boundPaths(): string[] {
    return [...this.sessions.values()].filter((session) => !session.failed).map((session) => session.path);
  }

  /**
   * The app's sync configuration changed (spec 3): after a terminate, every live session ends and its
   * client waits for sync to come back; after a re-enable, a session of an earlier epoch is told to reset.
   */
  syncChanged(): void {
    this.enqueue(async () => {
      if (this.sessions.size === 0) return;
      const view = await this.context.sync();
      for (const session of this.sessions.values()) {
        if (session.failed) continue;
        if (view.mode.kind !== 'partition') this.terminated(session, view.mode.kind === 'flexible');
        else if (session.epoch !== view.epoch) this.resetError(session, 208, 'sync was terminated and enabled again: the client must reset', view.mode.recoveryDisabled);
      }
    });
  }

  /** Ends the connection without an error message: the client reconnects and its upgrade is refused (401/403). */
  shutDown(): void {
    this.socket.close();
    this.close();
  }

  private endSession(session: Session): void {
    this.context.hub.unlisten(session.key, session);
    if (session.clientFileIdent !== undefined) this.context.clientSeen?.(session.key, session.clientFileIdent);
    this.context.metrics?.sessions.add(-1);
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(task).catch((error: unknown) => {
      this.report({ kind: 'internal_error', code: 101, message: error instanceof Error ? error.message : String(error) });
      this.connectionError(101, 'internal server error');
    });
  }

  private report(fields: Omit<SyncReport, 'appId' | 'userId'>, session?: Session | number): void {
    const ident = typeof session === 'number' ? session : session?.ident;
    const path = typeof session === 'object' ? session.path : ident !== undefined ? this.refusedBinds.get(ident) : undefined;
    this.context.report({
      appId: this.context.appId,
      userId: this.context.userId,
      ...(ident !== undefined ? { sessionIdent: ident } : {}),
      ...(path !== undefined ? { partition: path } : {}),
      ...fields,
    });
    this.context.metrics?.errors.add(1, { kind: fields.kind, code: fields.code });
  }

  private send(message: ServerMessage): void {
    if (!this.closed) this.socket.send(encodeServerMessage(message));
  }

  /** A connection-level error (session ident 0) ends the connection. */
  private connectionError(code: SendableErrorCode, message: string): void {
    if (this.closed) return;
    if (code !== 101) this.report({ kind: 'protocol_error', code, message });
    this.send({ type: 'error', code, message, tryAgain: false, sessionIdent: 0 });
    this.socket.close();
    this.close();
  }

  /** A BIND refused: the ident stays taken (and its pipelined messages ignored) until the client's UNBIND. */
  private refuseBind(message: BindMessage, code: SendableErrorCode, text: string, action: JsonErrorAction = 'ApplicationBug'): void {
    this.refusedBinds.set(message.sessionIdent, message.path);
    this.report({ kind: code === 201 && action === 'Transient' ? 'terminated' : 'refused', code, message: text, action }, message.sessionIdent);
    this.send(jsonErrorMessage(code, message.sessionIdent, { message: text, action }));
  }

  /** Ends a live session with an error; the client answers with UNBIND and expects no UNBOUND. */
  private sessionError(session: Session, code: SendableErrorCode, message: string, action: JsonErrorAction, options: { kind?: SyncReport['kind']; recoveryDisabled?: boolean } = {}): void {
    session.failed = true;
    this.context.hub.unlisten(session.key, session);
    const kind = options.kind ?? (action === 'ClientReset' || action === 'ClientResetNoRecovery' ? 'reset' : action === 'ProtocolViolation' ? 'protocol_error' : 'refused');
    this.report({ kind, code, message, action }, session);
    this.send(jsonErrorMessage(code, session.ident, { message, action, ...(options.recoveryDisabled !== undefined ? { isRecoveryModeDisabled: options.recoveryDisabled } : {}) }));
  }

  /**
   * Tells the client its file cannot continue with this server's history: it downloads a fresh copy and,
   * unless the app disabled recovery mode, uploads its unsynced changes on top (realm-core client reset).
   */
  private resetError(session: Session, code: SendableErrorCode, message: string, recoveryDisabled: boolean): void {
    this.sessionError(session, code, message, recoveryDisabled ? 'ClientResetNoRecovery' : 'ClientReset', { recoveryDisabled });
  }

  /**
   * Sync is off for the app (spec 3, terminate). A client of a terminated app retries quietly (`Transient`)
   * until sync is enabled again, when its IDENT gets a client reset; a flexible sync app is another matter.
   */
  private terminated(session: Session, flexible: boolean): void {
    if (flexible) return this.sessionError(session, 201, 'sync was switched to flexible sync for this app', 'ApplicationBug');
    this.sessionError(session, 201, 'sync was terminated for this app: the client can sync again once it is enabled again', 'Transient', { kind: 'terminated' });
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
        return this.traced('sync.bind', message.sessionIdent, message.path, () => this.bind(message));
      case 'ident':
        return this.ident(message);
      case 'upload':
        return this.traced('sync.upload', message.sessionIdent, this.sessions.get(message.sessionIdent)?.path, () => this.upload(message));
      case 'mark':
        return this.mark(message);
      case 'unbind':
        return this.unbind(message.sessionIdent);
      case 'ping':
        this.send({ type: 'pong', timestamp: message.timestamp });
        return;
      case 'json_error':
        this.report({ kind: 'client_error', code: message.code, message: clientErrorText(message.json) }, message.sessionIdent);
        return;
    }
  }

  /** Runs a handler in a span named after the message, with the app, user and partition it concerns. */
  private async traced(name: string, sessionIdent: number, path: string | undefined, handler: () => Promise<void>): Promise<void> {
    const attributes = { 'tessera.app_id': this.context.appId, 'enduser.id': this.context.userId, 'tessera.sync.session': sessionIdent, ...(path !== undefined ? { 'tessera.sync.partition': path } : {}) };
    await tracer.startActiveSpan(name, { attributes }, async (span: Span) => {
      try {
        await handler();
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        span.end();
      }
    });
  }

  private async bind(message: BindMessage): Promise<void> {
    if (this.sessions.has(message.sessionIdent) || this.refusedBinds.has(message.sessionIdent)) return this.connectionError(107, `session ident ${message.sessionIdent} is already in use`);
    const { mode, epoch } = await this.context.sync();
    if (mode.kind === 'flexible') return this.connectionError(113, 'the app uses flexible sync: open a flexible sync configuration');
    if (mode.kind === 'disabled') {
      if (mode.terminated) return this.refuseBind(message, 201, 'sync was terminated for this app: the client can sync again once it is enabled again', 'Transient');
      return this.refuseBind(message, 201, 'partition-based sync is not enabled for this app');
    }
    let partition: PartitionValue;
    try {
      partition = parsePartitionValue(message.path);
    } catch (error) {
      if (!(error instanceof SyncProtocolError)) throw error;
      return this.refuseBind(message, 204, `attempted to bind on illegal partition: ${error.message}`);
    }
    const illegal = checkPartitionValue(mode.type, message.path, { required: mode.required });
    if (illegal) return this.refuseBind(message, 204, illegal.message);

    const scope = await this.context.permissions();
    if (!scope.ok) return this.refuseBind(message, 206, `${scope.reason}: cannot sync on partition ${message.path}`);
    let decision: PartitionDecision;
    try {
      decision = await mode.permissions.evaluate({ ...scope.context, partition: partitionForRules(message.path) });
    } catch (error) {
      // A permission that fails (a `%function` that throws, say) refuses this BIND, not the whole connection.
      return this.refuseBind(message, 206, `permission check failed on partition ${message.path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!decision.read) return this.refuseBind(message, 206, `user does not have permission to sync on partition ${message.path}`);
    const key = historyKey(this.context.appId, epoch, formatPartitionValue(partition));
    const session: Session = {
      ident: message.sessionIdent,
      key,
      path: message.path,
      epoch,
      recoveryDisabled: mode.recoveryDisabled,
      canWrite: decision.write,
      lastLatestServerVersion: -1,
      failed: false,
      historyGrew: () => this.enqueue(() => this.sendDownloads(session, false)),
    };
    this.sessions.set(message.sessionIdent, session);
    this.context.metrics?.sessions.add(1);
    if (message.needClientFileIdent) {
      const file = await this.context.hub.history(key).registerClientFile();
      this.send({ type: 'ident', sessionIdent: session.ident, clientFileIdent: file.ident, clientFileIdentSalt: file.salt });
    }
  }

  /**
   * The session a message names. Messages of a session refused at BIND are ignored (the client pipelined
   * them before it learnt of the refusal); an ident never bound is a connection error.
   */
  private boundSession(ident: number): Session | undefined {
    const session = this.sessions.get(ident);
    if (!session && !this.refusedBinds.has(ident)) this.connectionError(106, `no session with ident ${ident}`);
    return session;
  }

  private async ident(message: ClientIdentMessage): Promise<void> {
    const session = this.boundSession(message.sessionIdent);
    if (!session || session.failed) return;
    if (session.clientFileIdent !== undefined) return this.connectionError(109, 'IDENT received twice');
    const history = this.context.hub.history(session.key);
    const result = await history.bootstrapClient(message);
    if (!result.ok) {
      // An ident or salt this server never issued (a file that synced with App Services, or with this app
      // before a re-enable) resets the same way as a history the client cannot continue from.
      if (resetCodes.has(result.code)) return this.resetError(session, result.code, result.message, session.recoveryDisabled);
      return this.sessionError(session, result.code, result.message, 'ProtocolViolation');
    }
    session.clientFileIdent = message.clientFileIdent;
    session.cursor = { serverVersion: message.downloadServerVersion, clientVersion: message.downloadClientVersion };
    this.context.clientSeen?.(session.key, message.clientFileIdent);
    this.context.hub.listen(session.key, session);
    // The first DOWNLOAD goes out even when it is empty (realm-core's server does the same).
    await this.sendDownloads(session, true);
  }

  private async upload(message: UploadMessage): Promise<void> {
    const session = this.boundSession(message.sessionIdent);
    if (!session || session.failed) return;
    const ident = session.clientFileIdent;
    if (ident === undefined) return this.connectionError(109, 'UPLOAD before IDENT');
    const { mode, epoch } = await this.context.sync();
    // A terminate refuses what is uploaded from then on, even before the session hears of it.
    if (mode.kind !== 'partition') return this.terminated(session, mode.kind === 'flexible');
    if (epoch !== session.epoch) return this.resetError(session, 208, 'sync was terminated and enabled again: the client must reset', mode.recoveryDisabled);
    if (!session.canWrite && message.changesets.some((changeset) => !onlySchema(changeset.changeset))) {
      return this.sessionError(session, 206, 'user does not have write permission on this partition', 'ApplicationBug');
    }
    const progress = { progressClientVersion: message.progressClientVersion, progressServerVersion: message.progressServerVersion, lockedServerVersion: message.lockedServerVersion };
    // The hub wakes every session of the partition, on every replica, the uploader included (its upload cursor moved).
    const result = await this.context.hub.integrateUpload(session.key, ident, message.changesets, progress);
    if (!result.ok) {
      if (result.code === 212) return this.sessionError(session, result.code, result.message, 'ApplicationBug');
      if (resetCodes.has(result.code)) return this.resetError(session, result.code, result.message, session.recoveryDisabled);
      return this.sessionError(session, result.code, result.message, 'ProtocolViolation');
    }
    this.context.metrics?.uploads.add(result.versions.length);
    this.context.clientSeen?.(session.key, ident);
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
    this.endSession(session);
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
      this.context.metrics?.downloads.add(1);
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

/** The `message` of a client's JSON_ERROR body, or the body itself. */
function clientErrorText(json: string): string {
  try {
    const body = JSON.parse(json) as { message?: unknown };
    return typeof body.message === 'string' ? body.message : json;
  } catch {
    return json;
  }
}
