import { type ClientMessage, decodeServerMessage, encodeChangeset, encodeClientMessage, type ServerMessage, type UploadMessage } from '@tessera/sync-protocol';
import { eventually } from '@tessera/testing';
import WebSocket from 'ws';

/** Every version realm-core v14.14 offers, newest first, as realm-js 12 sends them. */
export const realmJsProtocols = Array.from({ length: 13 }, (_, i) => `com.mongodb.realm-sync#${14 - i}`);

export function syncUrl(baseUrl: string, clientAppId: string, token: string | undefined): string {
  const ws = baseUrl.replace(/^http/, 'ws');
  return `${ws}/api/client/v2.0/app/${encodeURIComponent(clientAppId)}/realm-sync${token === undefined ? '' : `?baas_at=${encodeURIComponent(token)}`}`;
}

export type UpgradeOutcome = { status: number; body: string } | { client: SyncTestClient };

/** Opens a sync WebSocket; a refused upgrade resolves with its HTTP status and body. */
export function openSync(url: string, protocols: string[] = realmJsProtocols): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols);
    ws.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    ws.on('open', () => resolve({ client: new SyncTestClient(ws) }));
    ws.on('error', (error) => reject(error));
  });
}

export async function connect(url: string, protocols?: string[]): Promise<SyncTestClient> {
  const outcome = await openSync(url, protocols);
  if ('status' in outcome) throw new Error(`upgrade refused: ${outcome.status} ${outcome.body}`);
  return outcome.client;
}

/** A sync client speaking the protocol through the library's codec: sends messages, reads server messages in order. */
export class SyncTestClient {
  readonly received: ServerMessage[] = [];
  private read = 0;
  closed = false;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => this.received.push(decodeServerMessage(new Uint8Array(data))));
    ws.on('close', () => (this.closed = true));
  }

  get protocol(): string {
    return this.ws.protocol;
  }

  send(message: ClientMessage): void {
    this.ws.send(encodeClientMessage(message), { binary: true });
  }

  sendRaw(bytes: Uint8Array): void {
    this.ws.send(bytes, { binary: true });
  }

  /** The next server message not read yet (log messages skipped). */
  async next(timeoutMs = 5_000): Promise<ServerMessage> {
    const { message, read } = await nextUnread(this.received, this.read, timeoutMs);
    this.read = read;
    return message;
  }

  /**
   * BIND with a new file and IDENT from scratch, as a first open does: the session is then live and has
   * had its first DOWNLOAD. Fails on any other answer.
   */
  async openSession(sessionIdent: number, path: string): Promise<{ fileIdent: number; salt: bigint; download: ServerMessage }> {
    this.send({ type: 'bind', sessionIdent, path, token: '', needClientFileIdent: true, isSubserver: false });
    const ident = await this.next();
    if (ident.type !== 'ident') throw new Error(`expected ident, got ${JSON.stringify(ident, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
    this.send({
      type: 'ident',
      sessionIdent,
      clientFileIdent: ident.clientFileIdent,
      clientFileIdentSalt: ident.clientFileIdentSalt,
      downloadServerVersion: 0,
      downloadClientVersion: 0,
      latestServerVersion: 0,
      latestServerVersionSalt: 0n,
    });
    return { fileIdent: ident.clientFileIdent, salt: ident.clientFileIdentSalt, download: await this.next() };
  }

  /** The server messages received but not read yet. */
  unread(): ServerMessage[] {
    return this.received.slice(this.read).filter((message) => message.type !== 'log_message');
  }

  close(): void {
    this.ws.terminate();
  }
}

/**
 * An UPLOAD of one changeset that declares `Task { _id: string, _partition: string, name: string }` and
 * creates task `id` in `partition`, as a realm-core client's first write does. `clientVersion` counts the
 * client's commits; `serverVersion` is the server version the client had integrated.
 */
export function createTaskUpload(sessionIdent: number, partition: string, id: string, clientVersion = 2, serverVersion = 0): UploadMessage {
  const object = { type: 'String', value: id } as const;
  const changeset = encodeChangeset({
    instructions: [
      { type: 'AddTable', table: 'Task', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'String', pkNullable: false } },
      { type: 'AddColumn', table: 'Task', field: '_partition', valueType: 'String', nullable: true, collectionType: 'Single', keyType: 'Null' },
      { type: 'AddColumn', table: 'Task', field: 'name', valueType: 'String', nullable: false, collectionType: 'Single', keyType: 'Null' },
      { type: 'CreateObject', table: 'Task', object },
      { type: 'Update', table: 'Task', object, field: '_partition', path: [], value: { type: 'String', value: partition }, isDefault: false, priorSize: 0 },
      { type: 'Update', table: 'Task', object, field: 'name', path: [], value: { type: 'String', value: `task ${id}` }, isDefault: false, priorSize: 0 },
    ],
  });
  return {
    type: 'upload',
    sessionIdent,
    progressClientVersion: clientVersion,
    progressServerVersion: serverVersion,
    lockedServerVersion: serverVersion,
    changesets: [{ clientVersion, lastIntegratedServerVersion: serverVersion, originTimestamp: Date.now() - Date.UTC(2015, 0, 1), originFileIdent: 0, changeset }],
  };
}

/**
 * The first message of `received` at or after index `from` that is not a LOG_MESSAGE, waiting for it to
 * arrive, and the index after it: the reading of both the partition and the flexible test clients.
 */
export async function nextUnread<T extends { type: string }>(received: readonly T[], from: number, timeoutMs: number): Promise<{ message: T; read: number }> {
  let read = from;
  for (;;) {
    const message = await eventually(
      () => {
        const candidate = received[read];
        if (!candidate) throw new Error('no server message yet');
        return candidate;
      },
      { timeoutMs },
    );
    read++;
    if (message.type !== 'log_message') return { message, read };
  }
}
