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
import { type CommonClientMessage, type CommonServerMessage, SessionConnection, type SessionConnectionContext, type SyncSocket } from './session-connection';

export interface SyncConnectionContext extends SessionConnectionContext {
  /**
   * The app's sync as it is now (mode of the live deployment, reset epoch): read at each BIND and UPLOAD,
   * so a deploy applies to new sessions and a terminate stops uploads at once.
   */
  sync(): Promise<SyncAppView>;
  /** The permission context of a BIND: the user loaded now, with its custom data. */
  permissions(): Promise<PermissionScope>;
  hub: PartitionHub;
  /** A client file was active on a partition (IDENT, UPLOAD, end of its session): compaction keeps its history. */
  clientSeen?(key: string, clientFileIdent: number): void;
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

export class SyncConnection extends SessionConnection<Session, ClientMessage, ServerMessage> {
  constructor(
    socket: SyncSocket,
    private readonly context: SyncConnectionContext,
  ) {
    super(socket, context);
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

  protected decode(bytes: Uint8Array): ClientMessage {
    return decodeClientMessage(bytes);
  }

  protected encode(message: ServerMessage | CommonServerMessage): Uint8Array {
    return encodeServerMessage(message);
  }

  protected override pathOf(session: Session): string {
    return session.path;
  }

  protected stopSession(session: Session): void {
    this.context.hub.unlisten(session.key, session);
    if (session.clientFileIdent !== undefined) this.context.clientSeen?.(session.key, session.clientFileIdent);
    this.context.metrics?.sessions.add(-1);
  }

  /**
   * Sync is off for the app (spec 3, terminate). A client of a terminated app retries quietly (`Transient`)
   * until sync is enabled again, when its IDENT gets a client reset; a flexible sync app is another matter.
   */
  private terminated(session: Session, flexible: boolean): void {
    if (flexible) return this.sessionError(session, 201, 'sync was switched to flexible sync for this app', 'ApplicationBug');
    this.sessionError(session, 201, 'sync was terminated for this app: the client can sync again once it is enabled again', 'Transient', { kind: 'terminated' });
  }

  protected handle(message: Exclude<ClientMessage, CommonClientMessage>): Promise<void> {
    switch (message.type) {
      case 'bind':
        return this.traced('sync.bind', message.sessionIdent, message.path, () => this.bind(message));
      case 'ident':
        return this.ident(message);
      case 'upload':
        return this.traced('sync.upload', message.sessionIdent, this.sessions.get(message.sessionIdent)?.path, () => this.upload(message));
      case 'mark':
        return this.mark(message);
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

  private refusePartition(message: BindMessage, code: SendableErrorCode, text: string, action: JsonErrorAction = 'ApplicationBug'): void {
    this.refuseBind(message.sessionIdent, code, text, action, message.path);
  }

  private async bind(message: BindMessage): Promise<void> {
    if (!this.identFree(message.sessionIdent)) return;
    const { mode, epoch } = await this.context.sync();
    if (mode.kind === 'flexible') return this.connectionError(113, 'the app uses flexible sync: open a flexible sync configuration');
    if (mode.kind === 'disabled') {
      if (mode.terminated) return this.refusePartition(message, 201, 'sync was terminated for this app: the client can sync again once it is enabled again', 'Transient');
      return this.refusePartition(message, 201, 'partition-based sync is not enabled for this app');
    }
    let partition: PartitionValue;
    try {
      partition = parsePartitionValue(message.path);
    } catch (error) {
      if (!(error instanceof SyncProtocolError)) throw error;
      return this.refusePartition(message, 204, `attempted to bind on illegal partition: ${error.message}`);
    }
    const illegal = checkPartitionValue(mode.type, message.path, { required: mode.required });
    if (illegal) return this.refusePartition(message, 204, illegal.message);

    const scope = await this.context.permissions();
    if (!scope.ok) return this.refusePartition(message, 206, `${scope.reason}: cannot sync on partition ${message.path}`);
    let decision: PartitionDecision;
    try {
      decision = await mode.permissions.evaluate({ ...scope.context, partition: partitionForRules(message.path) });
    } catch (error) {
      // A permission that fails (a `%function` that throws, say) refuses this BIND, not the whole connection.
      return this.refusePartition(message, 206, `permission check failed on partition ${message.path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!decision.read) return this.refusePartition(message, 206, `user does not have permission to sync on partition ${message.path}`);
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
