/**
 * The sync WebSocket endpoint, `GET /api/client/v2.0/app/:appId/realm-sync?baas_at=<access token>`.
 * Attaches an `upgrade` listener to the HTTP server the host listens on and answers refusals the way
 * realm-core reacts to them before any WebSocket exists: 404 for an unknown app, 401 for a missing, bad or
 * expired token (the client refreshes it and retries), 403 for a disabled user (the client logs out), 400
 * when no offered subprotocol is one we speak. Protocol work happens in SyncConnection.
 */
import { type IncomingMessage, type Server } from 'node:http';
import { type Duplex } from 'node:stream';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppUserStore, DataSources, type DeployedApp, DeployedApps, SigningKeyStore } from '@tessera/platform';
import { negotiateSubprotocol } from '@tessera/sync-protocol';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { PartitionHub } from '../sessions/partition-hub';
import { syncModeOf } from '../sessions/sync-config';
import { SyncConnection } from '../sessions/sync-connection';
import { authenticateSyncUser } from './sync-auth';

const syncPath = /^\/api\/client\/v2\.0\/app\/([^/?#]+)\/realm-sync\/?$/;

@Injectable()
export class SyncUpgradeHandler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('SyncService');
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    // ws would echo the first offered token; the client needs the highest version we speak.
    handleProtocols: (offered: Set<string>) => negotiateSubprotocol([...offered])?.protocol ?? false,
  });
  private readonly users = new Map<string, AppUserStore>();
  private server: Server | undefined;
  private readonly listener = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    void this.upgrade(request, socket, head).catch((error: unknown) => {
      this.logger.error(`sync upgrade failed: ${error instanceof Error ? error.message : String(error)}`);
      refuse(socket, 500, 'internal server error', 'InternalServerError');
    });
  };

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly deployed: DeployedApps,
    private readonly keys: SigningKeyStore,
    private readonly dataSources: DataSources,
    private readonly hub: PartitionHub,
  ) {}

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.server.on('upgrade', this.listener);
  }

  onApplicationShutdown(): void {
    this.server?.off('upgrade', this.listener);
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const match = syncPath.exec(url.pathname);
    if (!match?.[1]) {
      // Another listener may serve this path; when none does, the request gets an answer instead of a hang.
      if (this.server?.listenerCount('upgrade') === 1) refuse(socket, 404, 'not found', 'NotFound');
      return;
    }
    const clientAppId = decodeURIComponent(match[1]);
    let app: DeployedApp;
    try {
      app = await this.deployed.byClientAppId(clientAppId);
    } catch (error) {
      if (error instanceof Error && 'errorCode' in error && error.errorCode === 'AppNotFound') {
        return refuse(socket, 404, `cannot find app using Client App ID '${clientAppId}'`, 'AppNotFound');
      }
      throw error;
    }
    const appId = app.record._id;
    const auth = await authenticateSyncUser(url.searchParams.get('baas_at') ?? undefined, appId, this.keys, await this.userStore(appId));
    if (!auth.ok) return refuse(socket, auth.status, auth.message, auth.status === 401 ? 'InvalidSession' : 'UserDisabled');
    const negotiated = negotiateSubprotocol(request.headers['sec-websocket-protocol'] ?? '');
    if (!negotiated) return refuse(socket, 400, 'no supported sync protocol version offered (com.mongodb.realm-sync#2..14)', 'BadRequest');

    this.wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
      const connection = new SyncConnection(
        { send: (bytes) => ws.send(bytes, { binary: true }), close: () => ws.close() },
        {
          appId,
          user: auth.user,
          syncMode: async () => syncModeOf((await this.deployed.byId(appId)).config),
          hub: this.hub,
          log: (event, fields) => this.logger.warn({ ...fields, msg: event }),
        },
      );
      ws.on('message', (data: RawData, isBinary: boolean) => {
        // Sync messages are binary frames; realm-core ignores text frames, and so do we.
        if (isBinary) connection.receive(toBytes(data));
      });
      ws.on('close', () => connection.close());
      ws.on('error', () => connection.close());
    });
  }

  private async userStore(appId: string): Promise<AppUserStore> {
    let users = this.users.get(appId);
    if (!users) {
      users = new AppUserStore(this.dataSources.platform(), appId);
      this.users.set(appId, users);
    }
    await users.init();
    return users;
  }
}

/** Answers an upgrade request with an HTTP error (App Services body) and closes the socket. */
function refuse(socket: Duplex, status: number, message: string, errorCode: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: message, error_code: errorCode });
  const reason = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }[status] ?? 'Internal Server Error';
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return data;
}
