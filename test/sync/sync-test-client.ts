import { type ClientMessage, decodeServerMessage, encodeClientMessage, type ServerMessage } from '@tessera/sync-protocol';
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
    for (;;) {
      const message = await eventually(
        () => {
          const candidate = this.received[this.read];
          if (!candidate) throw new Error('no server message yet');
          return candidate;
        },
        { timeoutMs },
      );
      this.read++;
      if (message.type !== 'log_message') return message;
    }
  }

  /** The server messages received but not read yet. */
  unread(): ServerMessage[] {
    return this.received.slice(this.read).filter((message) => message.type !== 'log_message');
  }

  close(): void {
    this.ws.terminate();
  }
}
