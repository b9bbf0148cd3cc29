/**
 * What a sync WebSocket does the same in both modes (partition-based `realm-sync#N` and flexible
 * `realm-query-sync#N`): handle frames strictly in order on one queue, map undecodable frames and unexpected
 * failures to connection errors, keep the live and the refused sessions, answer PING, UNBIND and the
 * client's JSON_ERROR, and send session errors with the action the client obeys. The modes' own messages
 * (BIND, IDENT, UPLOAD, MARK, QUERY) and what a session is stay in their connection classes; this must not
 * learn about partitions or queries.
 */
import {
  type ClientJsonErrorMessage,
  type JsonErrorAction,
  jsonErrorMessage,
  type PingMessage,
  type SendableErrorCode,
  type ServerMessage,
  SyncProtocolError,
  type UnbindMessage,
} from '@tessera/sync-protocol';
import { type SyncMetrics } from './sync-metrics';

/** The transport side of a connection: the WebSocket, seen through what the protocol needs. */
export interface SyncSocket {
  send(bytes: Uint8Array): void;
  close(): void;
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

/** Who is on the connection, and where its reports go. */
export interface SessionConnectionContext {
  appId: string;
  userId: string;
  /** Refusals, resets and protocol errors, for the logs. */
  report(report: SyncReport): void;
  metrics?: SyncMetrics;
}

/** A session as the shared part sees it. */
export interface ConnectionSession {
  readonly ident: number;
  /** A session error was sent: the client will UNBIND and expects no UNBOUND. */
  failed: boolean;
}

/** The server messages both modes send unchanged. */
export type CommonServerMessage = Exclude<ServerMessage, { type: 'download' }>;
/** The client messages both modes handle the same way. */
export type CommonClientMessage = PingMessage | UnbindMessage | ClientJsonErrorMessage;

export interface SessionErrorOptions {
  kind?: SyncReport['kind'];
  recoveryDisabled?: boolean;
}

export abstract class SessionConnection<Session extends ConnectionSession, ClientMsg extends { type: string }, ServerMsg extends { type: string }> {
  protected readonly sessions = new Map<number, Session>();
  /**
   * Session idents refused at BIND, with the path a report names (partition sync). realm-core has already
   * pipelined IDENT (and MARK) for such a session: they are ignored until the client's UNBIND frees the ident.
   */
  protected readonly refusedBinds = new Map<number, string | undefined>();
  protected closed = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    protected readonly socket: SyncSocket,
    private readonly base: SessionConnectionContext,
  ) {}

  /** Decodes one client frame; throws SyncProtocolError for a frame that is not a message of this mode. */
  protected abstract decode(bytes: Uint8Array): ClientMsg;
  protected abstract encode(message: ServerMsg | CommonServerMessage): Uint8Array;
  /** Handles a message of the mode (everything but PING, UNBIND and JSON_ERROR). */
  protected abstract handle(message: Exclude<ClientMsg, CommonClientMessage>): Promise<void>;
  /** A session stops: it no longer hears of changes (its queries, partitions and holdings are let go). */
  protected abstract stopSession(session: Session): void;
  /** The partition a report names for a session, if the mode has one. */
  protected pathOf(_session: Session): string | undefined {
    return undefined;
  }

  /** Queues a frame: messages of one connection are handled strictly in order. */
  receive(bytes: Uint8Array): void {
    this.enqueue(() => this.handleFrame(bytes));
  }

  /** The socket closed: the connection's sessions stop. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    // A failed session was stopped when its error went out.
    for (const session of this.sessions.values()) if (!session.failed) this.stopSession(session);
    this.sessions.clear();
  }

  /** Ends the connection without an error message: the client reconnects and its upgrade is refused (401/403). */
  shutDown(): void {
    this.socket.close();
    this.close();
  }

  protected enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(task).catch((error: unknown) => {
      this.report({ kind: 'internal_error', code: 101, message: error instanceof Error ? error.message : String(error) });
      this.connectionError(101, 'internal server error');
    });
  }

  protected report(fields: Omit<SyncReport, 'appId' | 'userId'>, session?: Session | number): void {
    const ident = typeof session === 'number' ? session : session?.ident;
    const path = typeof session === 'object' ? this.pathOf(session) : ident !== undefined ? this.refusedBinds.get(ident) : undefined;
    this.base.report({
      appId: this.base.appId,
      userId: this.base.userId,
      ...(ident !== undefined ? { sessionIdent: ident } : {}),
      ...(path !== undefined ? { partition: path } : {}),
      ...fields,
    });
    this.base.metrics?.errors.add(1, { kind: fields.kind, code: fields.code });
  }

  protected send(message: ServerMsg | CommonServerMessage): void {
    if (!this.closed) this.socket.send(this.encode(message));
  }

  /** A connection-level error (session ident 0) ends the connection. */
  protected connectionError(code: SendableErrorCode, message: string): void {
    if (this.closed) return;
    if (code !== 101) this.report({ kind: 'protocol_error', code, message });
    this.send({ type: 'error', code, message, tryAgain: false, sessionIdent: 0 });
    this.socket.close();
    this.close();
  }

  /** A BIND refused: the ident stays taken (and its pipelined messages ignored) until the client's UNBIND. */
  protected refuseBind(ident: number, code: SendableErrorCode, text: string, action: JsonErrorAction, path?: string): void {
    this.refusedBinds.set(ident, path);
    this.report({ kind: code === 201 && action === 'Transient' ? 'terminated' : 'refused', code, message: text, action }, ident);
    this.send(jsonErrorMessage(code, ident, { message: text, action }));
  }

  /** Whether BIND may use this ident (a second BIND of a live or refused ident ends the connection). */
  protected identFree(ident: number): boolean {
    if (!this.sessions.has(ident) && !this.refusedBinds.has(ident)) return true;
    this.connectionError(107, `session ident ${ident} is already in use`);
    return false;
  }

  /** Ends a live session with an error; the client answers with UNBIND and expects no UNBOUND. */
  protected sessionError(session: Session, code: SendableErrorCode, message: string, action: JsonErrorAction, options: SessionErrorOptions = {}): void {
    session.failed = true;
    this.stopSession(session);
    const kind =
      options.kind ??
      (action === 'ClientReset' || action === 'ClientResetNoRecovery' ? 'reset' : action === 'ProtocolViolation' ? 'protocol_error' : action === 'Transient' ? 'terminated' : 'refused');
    this.report({ kind, code, message, action }, session);
    this.send(jsonErrorMessage(code, session.ident, { message, action, ...(options.recoveryDisabled !== undefined ? { isRecoveryModeDisabled: options.recoveryDisabled } : {}) }));
  }

  /**
   * Tells the client its file cannot continue with this server: it downloads a fresh copy and, unless the app
   * disabled recovery mode, uploads its unsynced changes on top (realm-core client reset).
   */
  protected resetError(session: Session, code: SendableErrorCode, message: string, recoveryDisabled: boolean): void {
    this.sessionError(session, code, message, recoveryDisabled ? 'ClientResetNoRecovery' : 'ClientReset', { recoveryDisabled });
  }

  /**
   * The session a message names. Messages of a session refused at BIND are ignored (the client pipelined
   * them before it learnt of the refusal); an ident never bound is a connection error.
   */
  protected boundSession(ident: number): Session | undefined {
    const session = this.sessions.get(ident);
    if (!session && !this.refusedBinds.has(ident)) this.connectionError(106, `no session with ident ${ident}`);
    return session;
  }

  private async handleFrame(bytes: Uint8Array): Promise<void> {
    if (this.closed) return;
    let message: ClientMsg;
    try {
      message = this.decode(bytes);
    } catch (error) {
      if (!(error instanceof SyncProtocolError)) throw error;
      this.connectionError(error.kind === 'unknown_message' ? 102 : error.kind === 'bad_decompression' ? 110 : 103, error.message);
      return;
    }
    if (isCommon(message)) return this.handleCommon(message);
    return this.handle(message as Exclude<ClientMsg, CommonClientMessage>);
  }

  private handleCommon(message: CommonClientMessage): Promise<void> {
    switch (message.type) {
      case 'ping':
        this.send({ type: 'pong', timestamp: message.timestamp });
        break;
      case 'json_error':
        this.report({ kind: 'client_error', code: message.code, message: clientErrorText(message.json) }, message.sessionIdent);
        break;
      case 'unbind':
        this.unbind(message.sessionIdent);
        break;
    }
    return Promise.resolve();
  }

  private unbind(ident: number): void {
    if (this.refusedBinds.has(ident)) {
      this.refusedBinds.delete(ident);
      return;
    }
    const session = this.sessions.get(ident);
    if (!session) return this.connectionError(106, `no session with ident ${ident}`);
    this.sessions.delete(ident);
    // A failed session was stopped when its error went out.
    if (!session.failed) {
      this.stopSession(session);
      this.send({ type: 'unbound', sessionIdent: ident });
    }
  }
}

function isCommon(message: { type: string }): message is CommonClientMessage {
  return message.type === 'ping' || message.type === 'unbind' || message.type === 'json_error';
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
