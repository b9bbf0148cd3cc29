/**
 * The sync WebSocket endpoint, `GET /api/client/v2.0/app/:appId/realm-sync?baas_at=<access token>`.
 * Attaches an `upgrade` listener to the HTTP server the host listens on and answers refusals the way
 * realm-core reacts to them before any WebSocket exists: 404 for an unknown app, 401 for a missing, bad or
 * expired token (the client refreshes it and retries), 403 for a disabled user (the client logs out), 400
 * when no offered subprotocol is one we speak. Protocol work happens in SyncConnection.
 */
import { accessAddress, accessCheckOf } from '@tessera/app-config';
import { type IncomingMessage, type Server } from 'node:http';
import { type Duplex } from 'node:stream';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type DeployedApp, DeployedApps, LogStore, newObjectIdHex, SigningKeyStore } from '@tessera/platform';
import { negotiateSyncSubprotocol, ProtocolErrorCode, type SyncConnectionMode } from '@tessera/sync-protocol';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { FlexibleConnection } from '../flexible/flexible-connection';
import { FLEXIBLE_FILES, FlexibleHub } from '../flexible/flexible-hub';
import { SyncApps } from '../lifecycle/sync-apps.service';
import { SyncCompaction } from '../lifecycle/sync-compaction';
import { SyncConnections } from '../lifecycle/sync-connections';
import { historyKey, PartitionHub } from '../sessions/partition-hub';
import { type SyncReport } from '../sessions/session-connection';
import { SyncConnection } from '../sessions/sync-connection';
import { createSyncMetrics, type SyncMetrics } from '../sessions/sync-metrics';
import { authenticateSyncUser } from './sync-auth';

const syncPath = /^\/api\/client\/v2\.0\/app\/([^/?#]+)\/realm-sync\/?$/;

@Injectable()
export class SyncUpgradeHandler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('SyncService');
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    // ws would echo the first offered token; the client needs the highest version we speak.
    handleProtocols: (offered: Set<string>) => negotiateSyncSubprotocol([...offered])?.protocol ?? false,
  });
  private metrics: SyncMetrics | undefined;
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
    private readonly apps: SyncApps,
    private readonly hub: PartitionHub,
    private readonly connections: SyncConnections,
    private readonly compaction: SyncCompaction,
    private readonly logs: LogStore,
    private readonly flexible: FlexibleHub,
  ) {}

  onApplicationBootstrap(): void {
    // Instruments come from the meter provider registered by then (main.ts registers it before the app).
    this.metrics = createSyncMetrics();
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
    // The app's IP access list (admin API security/access_list), as the client edge applies it to HTTP requests.
    const allowed = accessCheckOf(app.config);
    if (allowed) {
      const address = accessAddress(request.socket.remoteAddress, request.headers['x-forwarded-for']);
      if (!allowed(address)) return refuse(socket, 403, `requests from ${address || 'this address'} are not allowed by the app's IP access list`, 'IPAddressNotAllowed');
    }
    const auth = await authenticateSyncUser(url.searchParams.get('baas_at') ?? undefined, appId, this.keys, await this.apps.userStore(appId));
    if (!auth.ok) {
      this.logger.warn({ appId, status: auth.status, msg: `sync connection refused: ${auth.message}` });
      return refuse(socket, auth.status, auth.message, auth.status === 401 ? 'InvalidSession' : 'UserDisabled');
    }
    const negotiated = negotiateSyncSubprotocol(request.headers['sec-websocket-protocol'] ?? '');
    if (!negotiated) return refuse(socket, 400, 'no supported sync protocol version offered (com.mongodb.realm-sync#2..14 or com.mongodb.realm-query-sync#2..14)', 'BadRequest');

    this.wss.handleUpgrade(request, socket, head, (ws: WebSocket) => this.serve(ws, appId, auth.userId, negotiated.mode));
  }

  private serve(ws: WebSocket, appId: string, userId: string, mode: SyncConnectionMode): void {
    const connection = mode === 'flexible' ? this.flexibleConnection(ws, appId, userId) : new SyncConnection(
      { send: (bytes) => ws.send(bytes, { binary: true }), close: () => ws.close() },
      {
        appId,
        userId,
        sync: () => this.apps.view(appId),
        permissions: () => this.apps.permissionScope(appId, userId),
        hub: this.hub,
        report: (report) => this.report(report),
        clientSeen: (key, ident) => this.compaction.seen(appId, key, ident),
        ...(this.metrics ? { metrics: this.metrics } : {}),
      },
    );
    const forget = this.connections.add(appId, userId, connection);
    this.metrics?.connections.add(1);
    const opened = { id: newObjectIdHex(), at: new Date(), appId, userId, mode };
    this.connectionLog('SYNC_CONNECTION_START', opened);
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      forget();
      this.metrics?.connections.add(-1);
      this.connectionLog('SYNC_CONNECTION_END', opened);
      connection.close();
    };
    ws.on('message', (data: RawData, isBinary: boolean) => {
      // Sync messages are binary frames; realm-core ignores text frames, and so do we.
      if (isBinary) connection.receive(toBytes(data));
    });
    ws.on('close', end);
    ws.on('error', end);
  }

  /** A connection of a flexible-sync client (`com.mongodb.realm-query-sync#N`): sessions in ../flexible. */
  private flexibleConnection(ws: WebSocket, appId: string, userId: string): FlexibleConnection {
    return new FlexibleConnection(
      { send: (bytes) => ws.send(bytes, { binary: true }), close: () => ws.close() },
      {
        appId,
        userId,
        sync: () => this.apps.view(appId),
        permissions: () => this.apps.permissionScope(appId, userId),
        hub: this.flexible,
        registerClientFile: (epoch) => this.hub.history(historyKey(appId, epoch, FLEXIBLE_FILES)).registerClientFile(),
        clientFile: (epoch, ident) => this.hub.storage.getClientFile(historyKey(appId, epoch, FLEXIBLE_FILES), ident),
        report: (report) => this.report(report),
        ...(this.metrics ? { metrics: this.metrics } : {}),
      },
    );
  }

  /**
   * A connection's start and end in the app's logs, as App Services logged them: the end's `started` is the
   * connection's start, so the admin API's sync connection metrics read how long each one was open.
   */
  private connectionLog(type: 'SYNC_CONNECTION_START' | 'SYNC_CONNECTION_END', opened: { id: string; at: Date; appId: string; userId: string; mode: SyncConnectionMode }): void {
    void this.logs
      .append(opened.appId, {
        type,
        messages: [],
        started: opened.at.toISOString(),
        completed: type === 'SYNC_CONNECTION_START' ? opened.at.toISOString() : new Date().toISOString(),
        user_id: opened.userId,
        connection_id: opened.id,
        sync_mode: opened.mode,
      })
      .catch((error: unknown) => this.logger.warn({ err: error, appId: opened.appId }, 'could not write a sync log entry'));
  }

  /**
   * A refusal, reset or protocol error: one log line naming app, user and partition, and an entry in the
   * app's logs (`SYNC_ERROR`, what the admin API's logs endpoint shows), as App Services logged them.
   */
  private report(report: SyncReport): void {
    const level = report.kind === 'internal_error' ? 'error' : report.kind === 'terminated' ? 'log' : 'warn';
    this.logger[level]({ ...report, msg: `sync ${report.kind.replace('_', ' ')}: ${report.message}` });
    const now = new Date().toISOString();
    void this.logs
      .append(report.appId, {
        type: 'SYNC_ERROR',
        messages: [report.message],
        started: now,
        completed: now,
        error: report.message,
        error_code: errorCodeName(report.code),
        user_id: report.userId,
        ...(report.partition !== undefined ? { partition: report.partition } : {}),
        ...(report.sessionIdent !== undefined ? { session_ident: report.sessionIdent } : {}),
        ...(report.action ? { action: report.action } : {}),
        sync_error_kind: report.kind,
      })
      .catch((error: unknown) => this.logger.warn({ err: error, appId: report.appId }, 'could not write a sync log entry'));
  }
}

const codeNames = new Map<number, string>(Object.entries(ProtocolErrorCode).map(([name, code]) => [code, name]));

/** `permissionDenied (206)`: the protocol's name for a code, as support looks it up in realm-core. */
function errorCodeName(code: number): string {
  const name = codeNames.get(code);
  return name ? `${name} (${code})` : String(code);
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
