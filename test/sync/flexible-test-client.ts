import {
  decodeFlexibleServerMessage,
  encodeChangeset,
  encodeFlexibleClientMessage,
  type FlexibleClientMessage,
  type FlexibleDownloadMessage,
  type FlexibleServerMessage,
  type Instruction,
  parseChangeset,
  type QuerySet,
  type UploadMessage,
} from '@tessera/sync-protocol';
import WebSocket from 'ws';
import { type AppConfig } from '@tessera/app-config';
import { nextUnread } from './sync-test-client';

/** Every flexible-sync version realm-core v14 offers, newest first, as realm-js 12 sends them. */
export const flexibleProtocols = Array.from({ length: 13 }, (_, i) => `com.mongodb.realm-query-sync#${14 - i}`);

/** What a client's copy holds, built from the DOWNLOADs it integrated: table -> id -> fields. */
export type ClientObjects = Map<string, Map<string, Record<string, unknown>>>;

/** The text of a primary key as the tests name objects (`Task/abc`). */
function keyText(object: { type: string; value?: unknown }): string {
  return object.type === 'Null' ? 'null' : String(object.value);
}

/**
 * A flexible-sync protocol client through the library's codec: sends messages, reads server messages in
 * order, and keeps a copy of the objects its DOWNLOADs create, update and erase (top-level fields).
 */
export class FlexibleTestClient {
  readonly received: FlexibleServerMessage[] = [];
  readonly objects: ClientObjects = new Map();
  private read = 0;
  private clientVersion = 1;
  private isClosed = false;
  /** The download cursor: the last server version integrated, and the client version the server had then. */
  serverVersion = 0;
  downloadClientVersion = 0;
  /** The client file the server issued at the first BIND. */
  file?: { ident: number; salt: bigint };
  /** Uploads not acknowledged yet: a resumed client sends them again, as realm-core does after IDENT. */
  pending: UploadMessage[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const message = decodeFlexibleServerMessage(new Uint8Array(data));
      this.received.push(message);
      if (message.type === 'download') this.integrate(message);
    });
    ws.on('close', () => (this.isClosed = true));
  }

  static open(url: string, protocols: string[] = flexibleProtocols): Promise<FlexibleTestClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, protocols);
      ws.on('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
      ws.on('open', () => resolve(new FlexibleTestClient(ws)));
      ws.on('error', reject);
    });
  }

  /**
   * The same client file on a new connection, as after a restart of the app: a copy of what `previous` holds
   * and its cursors; BIND without a new ident and IDENT with the file and the download cursor (or `cursor`).
   * Returns the client; the server's answer to IDENT is to be read from it.
   */
  static async resume(url: string, previous: FlexibleTestClient, sessionIdent: number, queryVersion: number, queries: QuerySet, cursor: { serverVersion?: number; clientVersion?: number } = {}): Promise<FlexibleTestClient> {
    const file = previous.file;
    if (!file) throw new Error('the previous client never had a file');
    const client = await FlexibleTestClient.open(url);
    for (const [table, objects] of previous.objects) client.objects.set(table, new Map([...objects].map(([id, fields]) => [id, { ...fields }])));
    client.file = file;
    client.clientVersion = previous.clientVersion;
    client.pending = [...previous.pending];
    client.serverVersion = cursor.serverVersion ?? previous.serverVersion;
    client.downloadClientVersion = cursor.clientVersion ?? previous.downloadClientVersion;
    client.send({ type: 'bind', sessionIdent, data: { sessionReason: 0, schemaVersion: 0 }, token: '', needClientFileIdent: false, isSubserver: false });
    client.send({
      type: 'ident',
      sessionIdent,
      clientFileIdent: file.ident,
      clientFileIdentSalt: file.salt,
      downloadServerVersion: client.serverVersion,
      downloadClientVersion: client.downloadClientVersion,
      latestServerVersion: client.serverVersion,
      latestServerVersionSalt: 0n,
      queryVersion,
      queries,
    });
    for (const upload of client.pending) client.send({ ...upload, sessionIdent });
    return client;
  }

  get protocol(): string {
    return this.ws.protocol;
  }

  send(message: FlexibleClientMessage): void {
    this.ws.send(encodeFlexibleClientMessage(message), { binary: true });
  }

  async next(timeoutMs = 5_000): Promise<FlexibleServerMessage> {
    const { message, read } = await nextUnread(this.received, this.read, timeoutMs);
    this.read = read;
    return message;
  }

  /** Reads DOWNLOADs up to the one ending a bootstrap (`lastInBatch`). */
  async bootstrap(): Promise<FlexibleDownloadMessage[]> {
    const batch: FlexibleDownloadMessage[] = [];
    for (;;) {
      const message = await this.next();
      if (message.type !== 'download') throw new Error(`expected a download, got ${message.type}: ${JSON.stringify(message, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
      batch.push(message);
      if (message.batchState === 'lastInBatch') return batch;
    }
  }

  /** BIND with a new file, then IDENT with `queries` at `queryVersion`; returns the bootstrap. */
  async openSession(sessionIdent: number, queryVersion: number, queries: QuerySet): Promise<FlexibleDownloadMessage[]> {
    this.send({ type: 'bind', sessionIdent, data: { sessionReason: 0, schemaVersion: 0 }, token: '', needClientFileIdent: true, isSubserver: false });
    const ident = await this.next();
    if (ident.type !== 'ident') throw new Error(`expected ident, got ${ident.type}`);
    this.file = { ident: ident.clientFileIdent, salt: ident.clientFileIdentSalt };
    this.send({
      type: 'ident',
      sessionIdent,
      clientFileIdent: ident.clientFileIdent,
      clientFileIdentSalt: ident.clientFileIdentSalt,
      downloadServerVersion: 0,
      downloadClientVersion: 0,
      latestServerVersion: 0,
      latestServerVersionSalt: 0n,
      queryVersion,
      queries,
    });
    return this.bootstrap();
  }

  /**
   * Uploads one changeset of `instructions` as the client's next version, made on top of server version
   * `integrated` (by default everything the client has integrated so far).
   */
  upload(sessionIdent: number, instructions: Instruction[], integrated = this.serverVersion): UploadMessage {
    const clientVersion = ++this.clientVersion;
    const message: UploadMessage = {
      type: 'upload',
      sessionIdent,
      progressClientVersion: clientVersion,
      progressServerVersion: integrated,
      lockedServerVersion: integrated,
      changesets: [{ clientVersion, lastIntegratedServerVersion: integrated, originTimestamp: Date.now() - Date.UTC(2015, 0, 1), originFileIdent: 0, changeset: encodeChangeset({ instructions }) }],
    };
    // The client's own write shows at once; the server's answer (acknowledgement, or what undoes it) follows.
    this.apply(instructions);
    this.pending.push(message);
    this.send(message);
    return message;
  }

  /** The ids of `table` the client holds. */
  ids(table: string): string[] {
    return [...(this.objects.get(table)?.keys() ?? [])].sort();
  }

  closed(): boolean {
    return this.isClosed;
  }

  unread(): FlexibleServerMessage[] {
    return this.received.slice(this.read).filter((message) => message.type !== 'log_message');
  }

  close(): void {
    this.ws.terminate();
  }

  private integrate(message: FlexibleDownloadMessage): void {
    this.downloadClientVersion = Math.max(this.downloadClientVersion, message.downloadClientVersion);
    this.pending = this.pending.filter((upload) => upload.progressClientVersion > message.uploadClientVersion);
    for (const changeset of message.changesets) {
      this.serverVersion = Math.max(this.serverVersion, changeset.serverVersion);
      this.apply(parseChangeset(changeset.changeset).instructions);
    }
  }

  /** Applies instructions to the client's copy (top-level string fields), as a write or a download does. */
  private apply(instructions: readonly Instruction[]): void {
    for (const instruction of instructions) {
      if (!('object' in instruction)) continue;
      let table = this.objects.get(instruction.table);
      if (!table) this.objects.set(instruction.table, (table = new Map()));
      const id = keyText(instruction.object);
      if (instruction.type === 'CreateObject') table.set(id, table.get(id) ?? {});
      else if (instruction.type === 'EraseObject') table.delete(id);
      else if (instruction.type === 'Update' && instruction.path.length === 0) {
        const fields = table.get(id);
        if (fields) fields[instruction.field] = 'value' in instruction.value ? instruction.value.value : null;
      }
    }
  }
}

/** Instructions declaring `Task { _id: string, owner_id, status, name: string? }`, as a client's first upload carries them. */
export function taskSchema(): Instruction[] {
  const column = (field: string): Instruction => ({ type: 'AddColumn', table: 'Task', field, valueType: 'String', nullable: true, collectionType: 'Single', keyType: 'Null' });
  return [{ type: 'AddTable', table: 'Task', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'String', pkNullable: false } }, column('owner_id'), column('status'), column('name')];
}

/** A client creating (or writing) a task: CreateObject and a string Update per field. */
export function writeTask(id: string, fields: Record<string, string>, create = true): Instruction[] {
  const object = { type: 'String', value: id } as const;
  return [
    ...(create ? [{ type: 'CreateObject', table: 'Task', object } as Instruction] : []),
    ...Object.entries(fields).map(([field, value]): Instruction => ({ type: 'Update', table: 'Task', object, field, path: [], value: { type: 'String', value }, isDefault: false, priorSize: 0 })),
  ];
}

/** The cluster of the flexible-sync test app. */
export const FLEXIBLE_CLUSTER = 'flx-cluster';
const string = { bsonType: 'string' };

/**
 * The flexible-sync test app: Task (queryable owner_id and status) whose role reads every task but the hidden
 * ones and writes only the user's own, and Log, an asymmetric type; anonymous login.
 */
export function flexibleApp(app: AppConfig): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: FLEXIBLE_CLUSTER } },
    collectionRules: [
      {
        database: 'app',
        collection: 'Task',
        schema: { title: 'Task', bsonType: 'object', properties: { _id: string, owner_id: string, status: string, name: string } },
        roles: [{ name: 'owner', apply_when: {}, document_filters: { read: { status: { $ne: 'hidden' } }, write: { owner_id: '%%user.id' } }, read: true, write: true, insert: true, delete: true, search: true }],
      },
      {
        database: 'app',
        collection: 'Log',
        schema: { title: 'Log', bsonType: 'object', properties: { _id: string, message: string } },
        roles: [{ name: 'ingest', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true, insert: true, delete: true, search: true }],
      },
    ],
    rules: [],
    webhooks: [],
  });
  app.sync = { type: 'flexible', state: 'enabled', service_name: 'mongodb-atlas', database_name: 'app', queryable_fields_names: ['owner_id', 'status'], asymmetric_tables: ['Log'] };
}

