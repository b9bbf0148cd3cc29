/**
 * One flexible-sync WebSocket (`com.mongodb.realm-query-sync#N`): runs the sessions its client opens (BIND
 * with a JSON body, IDENT with the active query set, QUERY, UPLOAD, MARK, UNBIND, PING) one message at a
 * time. A session's view is its subscriptions intersected with its role's read filter (flexible-view); a
 * bootstrap sends the view in DOWNLOAD batches, a query change sends what entered and erases what left;
 * uploads go to the collections after the role's write filter and the subscriptions allowed them, and
 * what they refused is undone by a compensating write (231). Changes made elsewhere arrive through the
 * FlexibleHub. A query the server cannot serve is a QUERY_ERROR (226), never a dropped connection.
 */
import { randomUUID } from 'node:crypto';
import { isRqlError } from '@tessera/rql';
import { openSyncSession, type SyncSession } from '@tessera/rules';
import {
  applyToDocuments,
  compensatingWriteMessage,
  decodeFlexibleClientMessage,
  documentPrimaryKey,
  type DocumentSet,
  encodeChangeset,
  encodeFlexibleServerMessage,
  type FlexibleBindMessage,
  type FlexibleClientMessage,
  type FlexibleDownloadMessage,
  type FlexibleIdentMessage,
  type FlexibleServerMessage,
  type Instruction,
  objectInstructions,
  objectKey,
  parseChangeset,
  type PrimaryKey,
  primaryKeyToBson,
  type QueryMessage,
  type QuerySet,
  queryErrorMessage,
  type RejectedUpdate,
  refusedWriteReason,
  type RefusalCause,
  schemaInstructions,
  SERVER_FILE_IDENT,
  SyncProtocolError,
  type SyncedPrimaryKey,
  type SyncSchema,
  touchedObjects,
  type UploadMessage,
} from '@tessera/sync-protocol';
import { type PermissionScope, type SyncAppView } from '../lifecycle/sync-apps.service';
import { type CommonClientMessage, type CommonServerMessage, type ConnectionSession, SessionConnection, type SessionConnectionContext, type SyncSocket } from '../sessions/session-connection';
import { queryableFieldsFor } from '../sessions/sync-config';
import { type ChangeDelivery, type ChangeInstant, changeInstant } from './change-delivery';
import { type FlexibleApp, type FlexibleHub, type FlexibleListener, type FlexibleWrite, heldKey } from './flexible-hub';
import { inView, type FlexibleView, translateQuerySet, type ViewTable, viewFilter } from './flexible-view';
import { type FlexibleFileState, flexibleFileKey, loadFileState, snapshotCovers } from './flexible-client-files';

type Document = Record<string, unknown>;

/** A changeset's instructions headed by the schema of the types whose objects it creates (once per type). */
function withSchema(schema: SyncSchema, instructions: readonly Instruction[]): Instruction[] {
  const created = new Set(instructions.flatMap((instruction) => (instruction.type === 'CreateObject' ? [instruction.table] : [])));
  return created.size === 0 ? [...instructions] : [...schemaInstructions(schema, created), ...instructions];
}

/**
 * What a changed document sends to a session that has it in view is the same for every such session: its
 * instructions under the schema, and their changeset bytes. The sessions a change reached share one read of
 * the document (FlexibleHub.current), so these are made once per read, keyed by the document read, instead
 * of once per session. A document that is not a shared read (an upload's, a bootstrap's) is not kept here.
 */
interface SharedObjectChange {
  schema: SyncSchema;
  table: string;
  /** Undefined when the document does not translate (the session then treats it as out of its view). */
  object: PrimaryKey | undefined;
  instructions: readonly Instruction[];
  /** The changeset of `withSchema(schema, instructions)`, and those instructions; made on first use. */
  download?: { instructions: readonly Instruction[]; changeset: Uint8Array };
}
const sharedChanges = new WeakMap<Document, SharedObjectChange>();

function sharedObjectChange(schema: SyncSchema, table: string, id: unknown, doc: Document): SharedObjectChange {
  const known = sharedChanges.get(doc);
  if (known && known.schema === schema && known.table === table) return known;
  const written = objectInstructions(schema, table, doc);
  const object = written.ok ? documentPrimaryKey(schema, table, id) : undefined;
  const change: SharedObjectChange = { schema, table, object, instructions: written.ok && object ? written.instructions : [] };
  sharedChanges.set(doc, change);
  return change;
}

function sharedDownload(change: SharedObjectChange): { instructions: readonly Instruction[]; changeset: Uint8Array } {
  if (!change.download) {
    const instructions = withSchema(change.schema, change.instructions);
    change.download = { instructions, changeset: encodeChangeset({ instructions: [...instructions] }) };
  }
  return change.download;
}

export interface FlexibleConnectionContext extends SessionConnectionContext {
  sync(): Promise<SyncAppView>;
  permissions(): Promise<PermissionScope>;
  hub: FlexibleHub;
  /** Issues a client file ident and salt (the app's file registry, shared with partition sync). */
  registerClientFile(epoch: number): Promise<{ ident: number; salt: bigint }>;
  /** A client file the registry issued in `epoch` (null: never issued, or issued before a re-enable). */
  clientFile(epoch: number, ident: number): Promise<{ salt: bigint; expired: boolean } | null>;
}

/** Objects per bootstrap changeset (one changeset per DOWNLOAD message). */
export const BOOTSTRAP_OBJECTS_PER_MESSAGE = 500;
/** The salt of the latest server version: flexible sessions do not resume from a stored history. */
const VERSION_SALT = 0n;
/**
 * How long after a change of what a client holds its snapshot is written at most (changes in between go with
 * it, and the snapshots of the other sessions due by then).
 * The snapshot written when the session ends is the one reconnects normally use; this one covers a process
 * that stops without ending its sessions, and is spaced out so that busy sessions do not write all the time.
 */
const SNAPSHOT_DELAY_MS = 2_000;
/** Beyond this many objects held, no snapshot is written: such a client resets when it reconnects. */
const SNAPSHOT_MAX_OBJECTS = 200_000;
/** How long an IDENT waits for the snapshot of a connection that has just ended (on this or another replica). */
const SNAPSHOT_WAIT_MS = [100, 250, 500, 1_000];

interface HeldObject {
  table: string;
  object: PrimaryKey;
}

class FlexibleSession implements FlexibleListener, ConnectionSession {
  readonly id = randomUUID();
  clientFileIdent?: number;
  queryVersion = 0;
  view: FlexibleView = { tables: new Map() };
  /** The roles chosen for the session, per type (apply_when evaluated once, with the user at IDENT). */
  readonly roles = new Map<string, SyncSession>();
  /** The objects the client holds from this server, by heldKey. */
  readonly held = new Map<string, HeldObject>();
  serverVersion = 0;
  /** The last client version integrated, and the server version the client had then. */
  clientVersion = 0;
  uploadServerVersion = 0;
  failed = false;
  scope?: Extract<PermissionScope, { ok: true }>;
  /** The reset epoch the session was bound in, and its client file's key in the stored states. */
  epoch = 0;
  recoveryDisabled = false;
  fileKey?: string;
  /** The app's rules and sync configuration when the session started (FlexibleApp.fingerprint). */
  fingerprint?: string;
  /** Objects erased at a server version the client may not have integrated yet (by heldKey). */
  readonly released = new Map<string, HeldObject & { version: number }>();
  /** A snapshot of what the client holds is due (within SNAPSHOT_DELAY_MS of the first change). */
  snapshotDue = false;

  constructor(
    readonly appId: string,
    readonly ident: number,
    private readonly onChange: (session: FlexibleSession, table: string, id: unknown, delivery?: ChangeDelivery) => void,
  ) {}

  documentChanged(table: string, id: unknown, delivery?: ChangeDelivery): void {
    this.onChange(this, table, id, delivery);
  }
}

export class FlexibleConnection extends SessionConnection<FlexibleSession, FlexibleClientMessage, FlexibleServerMessage> {
  constructor(
    socket: SyncSocket,
    private readonly context: FlexibleConnectionContext,
  ) {
    super(socket, context);
  }

  /** The live sessions, as operations list them (a flexible session has no partition: its query version). */
  get boundPaths(): string[] {
    return [...this.sessions.values()].filter((session) => !session.failed).map((session) => `flexible query version ${session.queryVersion}`);
  }

  /** The app's sync changed: a session of a terminated, re-enabled or switched app ends (the client retries or resets). */
  syncChanged(): void {
    this.enqueue(async () => {
      if (this.sessions.size === 0) return;
      const view = await this.context.sync();
      const app = await this.context.hub.app(this.context.appId);
      for (const session of this.sessions.values()) {
        if (session.failed || this.ended(session, view) || app?.fingerprint === session.fingerprint) continue;
        // Still the same sync, other rules: protocol 14's session_closed (200), after which the client binds again
        // about a second later and the same query version is bootstrapped under the new permissions.
        this.sessionError(session, 200, 'permissions changed: the session restarts and downloads its view again', 'Transient');
      }
    });
  }

  /**
   * Ends a session whose sync is gone (spec 3): after a terminate the client retries quietly until sync is
   * enabled again; after a re-enable its file belongs to an earlier epoch and it resets. True when it ended.
   */
  private ended(session: FlexibleSession, { mode, epoch }: SyncAppView): boolean {
    if (mode.kind === 'disabled') this.sessionError(session, 201, 'sync was terminated for this app: the client can sync again once it is enabled again', 'Transient');
    else if (mode.kind === 'partition') this.sessionError(session, 201, 'sync was switched to partition-based sync for this app', 'ApplicationBug');
    else if (epoch !== session.epoch) this.resetError(session, 208, 'sync was terminated and enabled again: the client must reset', mode.recoveryDisabled);
    else return false;
    return true;
  }

  protected decode(bytes: Uint8Array): FlexibleClientMessage {
    return decodeFlexibleClientMessage(bytes);
  }

  protected encode(message: FlexibleServerMessage | CommonServerMessage): Uint8Array {
    return encodeFlexibleServerMessage(message);
  }

  protected stopSession(session: FlexibleSession): void {
    this.context.hub.unregister(session, session.held.keys());
    // After the message being handled, if any: its upload may still move the client's upload cursor.
    this.enqueue(() => this.saveSnapshot(session));
  }

  /** Writes what the client holds (FlexibleClientFiles), so that a reconnect can erase what left its view. */
  private async saveSnapshot(session: FlexibleSession): Promise<void> {
    this.context.hub.snapshotTaken(session);
    session.snapshotDue = false;
    const fileKey = session.fileKey;
    if (!fileKey || session.held.size + session.released.size > SNAPSHOT_MAX_OBJECTS) return;
    const app = await this.context.hub.app(this.context.appId);
    if (!app) return;
    // Taken here, in the connection's order; written with the other sessions' (the queue does not wait for it:
    // a later snapshot of the same file supersedes it, and changes reaching this session are not held up).
    const snapshot = {
      serverVersion: session.serverVersion,
      clientVersion: session.clientVersion,
      objects: [...session.held.values()].map((held) => ({ t: held.table, id: primaryKeyToBson(held.object) })),
      released: [...session.released.values()].map((held) => ({ t: held.table, id: primaryKeyToBson(held.object), v: held.version })),
    };
    this.context.hub.snapshots.save(fileKey, snapshot).catch((error: unknown) => {
      // The session goes on; only a reconnect of this file is affected (it resets).
      this.report({ kind: 'internal_error', code: 101, message: `could not save what client file ${session.clientFileIdent} holds: ${error instanceof Error ? error.message : String(error)}` }, session);
    });
  }

  /** What the client holds changed: a snapshot is written shortly (one for a burst of changes, with other sessions'). */
  private snapshotSoon(session: FlexibleSession): void {
    if (session.snapshotDue || !session.fileKey || session.failed) return;
    session.snapshotDue = true;
    this.context.hub.snapshotSoon(
      session,
      () => {
        session.snapshotDue = false;
        if (!this.closed && !session.failed) this.enqueue(() => this.saveSnapshot(session));
      },
      SNAPSHOT_DELAY_MS,
    );
  }

  protected handle(message: Exclude<FlexibleClientMessage, CommonClientMessage>): Promise<void> {
    switch (message.type) {
      case 'bind':
        return this.bind(message);
      case 'ident':
        return this.ident(message);
      case 'query':
        return this.query(message);
      case 'upload':
        return this.upload(message);
      case 'mark':
        return this.mark(message.sessionIdent, message.requestIdent);
    }
  }

  private mark(ident: number, requestIdent: number): Promise<void> {
    const session = this.live(ident);
    if (!session) return Promise.resolve();
    if (session.clientFileIdent === undefined) {
      this.connectionError(109, 'MARK before IDENT');
      return Promise.resolve();
    }
    // Everything this server has for the session was sent when it happened: download is complete.
    this.send({ type: 'mark', sessionIdent: session.ident, requestIdent });
    return Promise.resolve();
  }

  /** The session a message names, unless it failed (the client has not yet sent its UNBIND). */
  private live(ident: number): FlexibleSession | undefined {
    const session = this.boundSession(ident);
    return session?.failed ? undefined : session;
  }

  private async bind(message: FlexibleBindMessage): Promise<void> {
    if (!this.identFree(message.sessionIdent)) return;
    const { mode, epoch } = await this.context.sync();
    if (mode.kind === 'partition') return this.connectionError(114, 'the app uses partition-based sync: open a partition-based sync configuration');
    if (mode.kind === 'disabled') {
      if (mode.terminated) return this.refuseBind(message.sessionIdent, 201, 'sync was terminated for this app: the client can sync again once it is enabled again', 'Transient');
      return this.refuseBind(message.sessionIdent, 201, 'flexible sync is not enabled for this app', 'ApplicationBug');
    }
    const scope = await this.context.permissions();
    if (!scope.ok) return this.refuseBind(message.sessionIdent, 206, `${scope.reason}: cannot sync`, 'ApplicationBug');
    const session = new FlexibleSession(this.context.appId, message.sessionIdent, (s, table, id, delivery) => this.enqueue(() => this.externalChange(s, table, id, delivery)));
    session.scope = scope;
    session.fingerprint = (await this.context.hub.app(this.context.appId))?.fingerprint;
    session.epoch = epoch;
    session.recoveryDisabled = mode.recoveryDisabled;
    this.sessions.set(message.sessionIdent, session);
    this.context.hub.register(session);
    if (message.needClientFileIdent) {
      const file = await this.context.registerClientFile(epoch);
      this.send({ type: 'ident', sessionIdent: session.ident, clientFileIdent: file.ident, clientFileIdentSalt: file.salt });
    }
  }

  private async ident(message: FlexibleIdentMessage): Promise<void> {
    const session = this.live(message.sessionIdent);
    if (!session) return;
    if (session.clientFileIdent !== undefined) return this.connectionError(109, 'IDENT received twice');
    // A file this server never issued in the current epoch (one from before a terminate and re-enable, or from
    // another server) cannot continue: the client resets, recovering its unsynced changes unless disabled.
    const file = await this.context.clientFile(session.epoch, message.clientFileIdent);
    if (!file) return this.resetError(session, 208, `unknown client file ident ${message.clientFileIdent}: the client must reset`, session.recoveryDisabled);
    if (file.salt !== message.clientFileIdentSalt) return this.resetError(session, 211, 'client file ident salt mismatch: the client must reset', session.recoveryDisabled);
    if (file.expired) return this.resetError(session, 222, 'client file expired: the client must reset', session.recoveryDisabled);
    const app = await this.context.hub.app(this.context.appId);
    if (!app) return this.sessionError(session, 201, 'flexible sync is not enabled for this app', 'ApplicationBug');
    const fileKey = flexibleFileKey(this.context.appId, session.epoch, message.clientFileIdent);
    const state = await this.fileState(app, fileKey, message.downloadServerVersion);
    if (state === 'unknown') {
      return this.resetError(session, 222, 'the server does not know what this client file holds (its last session ended without saving it): the client must reset', session.recoveryDisabled);
    }
    session.clientFileIdent = message.clientFileIdent;
    session.fileKey = fileKey;
    // A client continuing from an earlier connection gets versions after the one it has; the changesets it
    // re-sends that were integrated before are skipped.
    session.serverVersion = message.downloadServerVersion;
    session.clientVersion = Math.max(message.downloadClientVersion, state?.clientVersion ?? 0);
    for (const entry of state?.held?.objects ?? []) this.restoreHeld(app, session, entry.t, entry.id);
    for (const entry of state?.held?.released ?? []) if (entry.v > message.downloadServerVersion) this.restoreHeld(app, session, entry.t, entry.id);
    await this.changeQuery(session, message.queryVersion, message.queries);
  }

  /**
   * The stored state of a client file, waiting a little for the snapshot of a session that has just ended;
   * 'unknown' when the client has integrated more than any snapshot says (it may hold objects the server
   * cannot name), null for a file that never had a session that held anything.
   */
  private async fileState(app: FlexibleApp, key: string, downloadServerVersion: number): Promise<FlexibleFileState | null | 'unknown'> {
    let state = await loadFileState(app.client, this.context.hub.snapshots, key);
    for (const delay of SNAPSHOT_WAIT_MS) {
      if (snapshotCovers(state, downloadServerVersion) || (downloadServerVersion === 0 && (state?.clientVersion ?? 0) === 0)) return state;
      await new Promise((resolve) => setTimeout(resolve, delay));
      state = await loadFileState(app.client, this.context.hub.snapshots, key);
    }
    return snapshotCovers(state, downloadServerVersion) ? state : 'unknown';
  }

  /** An object the client may hold from an earlier connection (a snapshot entry whose type still syncs). */
  private restoreHeld(app: FlexibleApp, session: FlexibleSession, table: string, id: unknown): void {
    const object = documentPrimaryKey(app.schema, table, id);
    if (object) session.held.set(heldKey(table, id), { table, object });
  }

  private async query(message: QueryMessage): Promise<void> {
    const session = this.live(message.sessionIdent);
    if (!session) return;
    if (session.clientFileIdent === undefined) return this.connectionError(109, 'QUERY before IDENT');
    if (message.queryVersion < session.queryVersion) return this.sessionError(session, 227, `query version ${message.queryVersion} is older than the active ${session.queryVersion}`, 'ProtocolViolation');
    await this.changeQuery(session, message.queryVersion, message.queries);
  }

  /** The session's role on a type's collection, chosen once per session (apply_when with the session's user). */
  private async role(session: FlexibleSession, app: FlexibleApp, table: string): Promise<SyncSession> {
    let role = session.roles.get(table);
    if (!role) {
      role = await openSyncSession(app.rules(table), session.scope?.context ?? {}, { queryableFields: [...queryableFieldsFor(app.mode, table)] });
      session.roles.set(table, role);
    }
    return role;
  }

  /**
   * Makes `queries` the session's view and bootstraps it: every object of the new view (what entered, and
   * what stayed, which the client may have changed offline), then erasures of what the client holds outside
   * it. A query the server does not serve is answered with QUERY_ERROR and leaves the view as it was.
   */
  private async changeQuery(session: FlexibleSession, queryVersion: number, queries: QuerySet): Promise<void> {
    const app = await this.context.hub.app(this.context.appId);
    if (!app) return this.sessionError(session, 201, 'flexible sync is not enabled for this app', 'ApplicationBug');
    let translated;
    try {
      translated = translateQuerySet(app.mode, app.schema, queries);
    } catch (error) {
      if (!isRqlError(error)) throw error;
      this.report({ kind: 'refused', code: 226, message: error.message }, session.ident);
      this.send(queryErrorMessage(session.ident, queryVersion, error.message));
      return;
    }
    const tables = new Map<string, ViewTable>();
    for (const [table, query] of translated) tables.set(table, { table, query, role: await this.role(session, app, table) });
    this.context.hub.subscribe(session, translated, session.view.tables.keys());
    session.view = { tables };
    session.queryVersion = queryVersion;

    const present = new Map<string, HeldObject>();
    const chunks: Instruction[][] = [];
    // The first changeset carries every synced type, subscribed or not (asymmetric ones too): a fresh copy made
    // for a client reset must hold every class the client's file has, or realm-core refuses to recover into it.
    let chunk: Instruction[] = schemaInstructions(app.schema, app.schema.keys());
    let objects = 0;
    for (const entry of tables.values()) {
      const filter = viewFilter(entry);
      const ref = app.collectionOf(entry.table);
      if (!filter || !ref) continue;
      const collection = app.client.db(ref.db).collection(ref.coll);
      // One read through the filter: with the queryable fields indexed (declared-indexes.ts) the planner reads
      // only the matching documents, once. Paging by `_id > after` sorted by `_id` made it choose between a
      // scan of the whole collection and re-reading and sorting every match for each page (9 s for 100,000
      // documents through an index, against 0.1 s read at once). The whole view is held until it is sent anyway.
      for (const doc of await collection.find(filter).toArray()) {
        if (!inView(session.view, entry.table, doc)) continue;
        const written = objectInstructions(app.schema, entry.table, doc);
        const object = documentPrimaryKey(app.schema, entry.table, doc['_id']);
        if (!written.ok || !object) continue;
        if (chunk.length === 0) chunk.push(...schemaInstructions(app.schema, [entry.table]));
        chunk.push(...written.instructions);
        present.set(heldKey(entry.table, doc['_id']), { table: entry.table, object });
        if (++objects % BOOTSTRAP_OBJECTS_PER_MESSAGE === 0) {
          chunks.push(chunk);
          chunk = [];
        }
      }
    }
    for (const [key, held] of session.held) {
      if (!present.has(key)) chunk.push({ type: 'EraseObject', table: held.table, object: held.object });
    }
    if (chunk.length > 0) chunks.push(chunk);
    for (const key of session.held.keys()) if (!present.has(key)) this.context.hub.hold(session, key, false);
    for (const key of present.keys()) this.context.hub.hold(session, key, true);
    session.held.clear();
    for (const [key, held] of present) session.held.set(key, held);

    // A bootstrap carries at least one changeset (the schema of the subscribed types, maybe nothing): realm-core
    // never finishes integrating a bootstrap of no changesets.
    if (chunks.length === 0) chunks.push(schemaInstructions(app.schema, app.schema.keys()));
    chunks.forEach((instructions, i) => {
      const last = i === chunks.length - 1;
      this.send(this.download(session, instructions, last ? 'lastInBatch' : 'moreToCome', (i + 1) / chunks.length, true));
    });
  }

  /** A DOWNLOAD of one server changeset at the next server version (none when `instructions` is empty, unless in a bootstrap). */
  private download(
    session: FlexibleSession,
    instructions: readonly Instruction[],
    batchState: FlexibleDownloadMessage['batchState'],
    progressEstimate: number,
    bootstrap = false,
    /** The instructions' changeset when it is already encoded (one change sent to many sessions). */
    encoded?: Uint8Array,
  ): FlexibleDownloadMessage {
    const changesets = [];
    if (instructions.length > 0 || bootstrap) {
      session.serverVersion = Math.max(session.serverVersion + 1, this.context.hub.nextVersion());
      this.noteSent(session, instructions);
      const changeset = encoded ?? encodeChangeset({ instructions: [...instructions] });
      changesets.push({ serverVersion: session.serverVersion, lastIntegratedClientVersion: session.clientVersion, originTimestamp: Date.now() - Date.UTC(2015, 0, 1), originFileIdent: SERVER_FILE_IDENT, originalChangesetSize: changeset.length, changeset });
    }
    return {
      type: 'download',
      sessionIdent: session.ident,
      downloadServerVersion: session.serverVersion,
      downloadClientVersion: session.clientVersion,
      latestServerVersion: session.serverVersion,
      latestServerVersionSalt: VERSION_SALT,
      uploadClientVersion: session.clientVersion,
      uploadServerVersion: session.uploadServerVersion,
      queryVersion: session.queryVersion,
      batchState,
      progressEstimate,
      changesets,
    };
  }

  /**
   * A changeset goes out at the session's server version: its erasures are kept (by version) until the client
   * has integrated them, so that a reconnect before then erases those objects again; a snapshot is due.
   */
  private noteSent(session: FlexibleSession, instructions: readonly Instruction[]): void {
    for (const instruction of instructions) {
      if (instruction.type !== 'EraseObject' && instruction.type !== 'CreateObject') continue;
      const key = heldKey(instruction.table, primaryKeyToBson(instruction.object));
      if (instruction.type === 'CreateObject') session.released.delete(key);
      else session.released.set(key, { table: instruction.table, object: instruction.object, version: session.serverVersion });
    }
    this.snapshotSoon(session);
  }

  /** A document changed elsewhere: it enters, changes in, or leaves the session's view (or none of these). */
  private async externalChange(session: FlexibleSession, table: string, id: unknown, delivery?: ChangeDelivery): Promise<void> {
    let sentAt: ChangeInstant | undefined;
    try {
      if (await this.sendChange(session, table, id)) sentAt = changeInstant();
    } finally {
      delivery?.done(sentAt);
    }
  }

  /** Sends what a change elsewhere does to the session's view; true when a DOWNLOAD went out. */
  private async sendChange(session: FlexibleSession, table: string, id: unknown): Promise<boolean> {
    if (this.closed || session.failed || session.clientFileIdent === undefined || this.sessions.get(session.ident) !== session) return false;
    const app = await this.context.hub.app(this.context.appId);
    const ref = app?.collectionOf(table);
    if (!app || !ref) return false;
    // The document as it is now, not as the change left it: this session's own upload, or a write fanned out
    // later, may have changed it since, and the client must end up with what the collection holds. The
    // sessions the change reached read it once (FlexibleHub.current), each after its turn came.
    const current = await this.context.hub.current(app, ref, table, id);
    if (current && inView(session.view, table, current)) {
      const change = sharedObjectChange(app.schema, table, id, current);
      if (change.object) {
        this.holdObject(session, heldKey(table, id), table, change.object);
        const { instructions, changeset } = sharedDownload(change);
        this.send(this.download(session, instructions, 'steadyState', 1, false, changeset));
        return true;
      }
    }
    const instructions = withSchema(app.schema, this.objectState(session, app, table, id, current));
    if (instructions.length === 0) return false;
    this.send(this.download(session, instructions, 'steadyState', 1));
    return true;
  }

  /** The client holds the object now. */
  private holdObject(session: FlexibleSession, key: string, table: string, object: PrimaryKey): void {
    session.held.set(key, { table, object });
    this.context.hub.hold(session, key, true);
  }

  /**
   * The instructions that bring the client's copy of one object to `after` as the view allows it: the whole
   * object when it is in the view, an erasure when the client holds it and it is not (no schema: withSchema
   * adds it once per changeset). Updates what is held.
   */
  private objectState(session: FlexibleSession, app: FlexibleApp, table: string, id: unknown, after: Document | null): Instruction[] {
    const schema = app.schema;
    const key = heldKey(table, id);
    const held = session.held.get(key);
    if (after && inView(session.view, table, after)) {
      const written = objectInstructions(schema, table, after);
      const object = documentPrimaryKey(schema, table, id);
      if (written.ok && object) {
        this.holdObject(session, key, table, object);
        return written.instructions;
      }
    }
    if (!held) return [];
    session.held.delete(key);
    this.context.hub.hold(session, key, false);
    return [{ type: 'EraseObject', table, object: held.object }];
  }

  private async upload(message: UploadMessage): Promise<void> {
    const session = this.live(message.sessionIdent);
    if (!session) return;
    const fileKey = session.fileKey;
    if (fileKey === undefined) return this.connectionError(109, 'UPLOAD before IDENT');
    // A terminate refuses what is uploaded from then on, even before the session hears of it.
    if (this.ended(session, await this.context.sync())) return;
    const app = await this.context.hub.app(this.context.appId);
    if (!app) return this.sessionError(session, 201, 'flexible sync is not enabled for this app', 'ApplicationBug');
    const fresh = message.changesets.filter((changeset) => changeset.clientVersion > session.clientVersion);
    // Progress only (or changesets integrated before): nothing to apply and nothing to acknowledge.
    if (fresh.length === 0) return;
    let instructions: Instruction[];
    try {
      instructions = fresh.flatMap((changeset) => (changeset.changeset.length === 0 ? [] : parseChangeset(changeset.changeset).instructions));
    } catch (error) {
      if (!(error instanceof SyncProtocolError)) throw error;
      return this.sessionError(session, 112, `bad changeset: ${error.message}`, 'ProtocolViolation');
    }
    const schemaRefusal = await this.context.hub.acceptSchema(app, instructions);
    if (schemaRefusal) return this.sessionError(session, 225, schemaRefusal, 'ApplicationBug');

    const writes: FlexibleWrite[] = [];
    const rejected: RejectedUpdate[] = [];
    const answer: Instruction[] = [];
    // The client wrote without having integrated everything this session sent it (a bootstrap or a change made
    // elsewhere crossed the upload on the wire). The client merges such a changeset with its own write, by its
    // rules and before the server has integrated the write, so its copy of a written object may end differently
    // from the collection: the acknowledgement then carries every written object as the collection holds it,
    // which the client applies as it is (it already integrated its own write).
    const crossed = fresh.some((changeset) => changeset.lastIntegratedServerVersion < session.serverVersion);
    const objects = touchedObjects(instructions).filter((object) => app.collectionOf(object.table) !== undefined);
    for (const object of objects) {
      const ref = app.collectionOf(object.table)!;
      const id = primaryKeyToBson(object.object);
      const collection = app.client.db(ref.db).collection(ref.coll);
      const pre = (await collection.findOne({ _id: id }));
      const working = (await collection.findOne({ _id: id }));
      const docs: DocumentSet = new Map([[object.key, { table: object.table, object: object.object, doc: working }]]);
      applyToDocuments(
        instructions.filter((instruction) => 'object' in instruction && instruction.table === object.table && objectKey(instruction.table, instruction.object) === object.key),
        docs,
      );
      const post = docs.get(object.key)?.doc ?? null;
      if (pre === null && post === null) continue;
      const refusal = await this.refusal(session, app, object.table, pre, post);
      if (refusal) {
        rejected.push({ table: object.table, primaryKey: object.object as SyncedPrimaryKey, reason: refusedWriteReason(object.table, object.object as SyncedPrimaryKey, refusal) });
        // Undo on the client: back to the stored object when it is in the view, gone otherwise.
        const key = heldKey(object.table, id);
        if (pre && inView(session.view, object.table, pre)) answer.push(...this.objectState(session, app, object.table, id, pre));
        else {
          session.held.delete(key);
          this.context.hub.hold(session, key, false);
          answer.push({ type: 'EraseObject', table: object.table, object: object.object });
        }
        continue;
      }
      writes.push({ table: object.table, id, after: post });
      if (app.mode.asymmetricTables.includes(object.table)) continue;
      const key = heldKey(object.table, id);
      if (post && inView(session.view, object.table, post)) {
        if (crossed) answer.push(...this.objectState(session, app, object.table, id, post));
        session.held.set(key, { table: object.table, object: object.object });
        this.context.hub.hold(session, key, true);
      } else if (session.held.has(key) || post !== null) {
        // Written, but no longer (or never) in the view: the client lets go of it. The client holds what it has
        // just written even when this session never sent it the object (a create of an id the collection
        // already holds, written elsewhere before this upload arrived: realm-core merges the two).
        session.held.delete(key);
        this.context.hub.hold(session, key, false);
        answer.push({ type: 'EraseObject', table: object.table, object: object.object });
      }
    }
    const last = fresh[fresh.length - 1];
    const version = this.context.hub.nextVersion();
    await this.context.hub.write(app, writes, session.id, version, { key: fileKey, clientVersion: last?.clientVersion ?? session.clientVersion });
    for (const write of writes) if (!app.mode.asymmetricTables.includes(write.table)) this.context.hub.changed(app.appId, write.table, write.id, write.after, session);
    if (last) session.clientVersion = last.clientVersion;
    session.uploadServerVersion = Math.max(session.uploadServerVersion, message.progressServerVersion);
    // The client has integrated every version up to its download progress: erasures up to there are done.
    for (const [key, released] of session.released) if (released.version <= message.progressServerVersion) session.released.delete(key);
    this.snapshotSoon(session);
    // The upload is acknowledged by the DOWNLOAD (its client version); with it, what undoes refused writes. The
    // compensating-write error goes first: the client reports it once it integrates that DOWNLOAD's version.
    const acknowledgement = this.download(session, withSchema(app.schema, answer), 'steadyState', 1);
    if (rejected.length > 0) {
      this.report({ kind: 'refused', code: 231, message: rejected.map((update) => update.reason).join('; ') }, session.ident);
      this.send(compensatingWriteMessage(session.ident, { rejectedClientVersion: last?.clientVersion ?? session.clientVersion, compensatingWriteServerVersion: session.serverVersion, updates: rejected }));
    }
    this.send(acknowledgement);
  }

  /** Why a client's write to one object is refused (a compensating write), or undefined when it is allowed. */
  private async refusal(session: FlexibleSession, app: FlexibleApp, table: string, pre: Document | null, post: Document | null): Promise<RefusalCause | undefined> {
    const role = await this.role(session, app, table);
    if (app.mode.asymmetricTables.includes(table)) {
      // Data ingest: objects are only inserted.
      if (pre !== null || post === null) return 'permission';
      return role.checkWrite('insert', undefined, post).allowed ? undefined : 'permission';
    }
    const entry = session.view.tables.get(table);
    if (pre !== null && !inView(session.view, table, pre)) return 'outside_view';
    if (pre === null) {
      if (!post || !entry?.query.matches(post)) return 'outside_view';
      return role.checkWrite('insert', undefined, post).allowed ? undefined : 'permission';
    }
    if (post === null) return role.checkWrite('delete', pre, undefined).allowed ? undefined : 'permission';
    return role.checkWrite('update', pre, post).allowed ? undefined : 'permission';
  }
}
