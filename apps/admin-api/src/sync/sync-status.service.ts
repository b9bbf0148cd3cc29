/**
 * The App Services sync endpoints realm-cli, the UI and realm-core's test harness read (progress, state,
 * config), and Tessera's view of connected clients and partition histories, asked of the sync service
 * over the bus (`sync.status.read`: any replica answers for all of them).
 */
import { Injectable, Optional } from '@nestjs/common';
import { Subjects, type SyncStatusResponse } from '@tessera/contracts';
import { type AppConfig } from '@tessera/app-config';
import { MessageBus } from '@tessera/messaging';
import { type AppRecord } from '@tessera/platform';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { isSyncEnabled, locateSync } from '../deploy/sync-transition';

/** How long the admin API waits for the sync service. */
const statusTimeoutMs = 5_000;

export interface SyncProgress {
  /** Per synced namespace: Tessera seeds a partition from the collections when a client first opens it, so nothing is pending. */
  progress: Record<string, { complete: boolean }>;
  accepting_clients: boolean;
}

@Injectable()
export class SyncStatusService {
  constructor(
    private readonly state: AppStateService,
    @Optional() private readonly bus?: MessageBus,
  ) {}

  /**
   * `GET .../sync/progress`. realm-core's harness waits until every entry of `progress` is `complete`, and
   * takes an empty `progress` for an initial sync still running: with sync enabled there is one entry per
   * synced namespace (the collections with a schema in the synced database, else the database itself).
   */
  async progress(record: AppRecord): Promise<SyncProgress> {
    const app = await this.state.liveApp(record);
    const located = locateSync(app);
    if (!located || !isSyncEnabled(located.sync)) return { progress: {}, accepting_clients: false };
    const progress: Record<string, { complete: boolean }> = {};
    for (const namespace of syncedNamespaces(app, located.serviceName, located.sync.database_name)) progress[namespace] = { complete: true };
    return { progress, accepting_clients: true };
  }

  /** `GET .../sync/state`: `enabled`, or empty when partition-based sync is off or terminated (as realm-core's harness reads it). */
  async syncState(record: AppRecord): Promise<{ state: string }> {
    const located = locateSync(await this.state.liveApp(record));
    return { state: located && isSyncEnabled(located.sync) ? 'enabled' : '' };
  }

  /** `GET .../sync/config`. */
  async config(record: AppRecord): Promise<{ development_mode_enabled: boolean }> {
    const located = locateSync(await this.state.liveApp(record));
    return { development_mode_enabled: located?.sync.development_mode_enabled === true };
  }

  /** `PUT .../sync/config` `{ development_mode_enabled }`: deployed at once, as the UI's toggle was. */
  async setConfig(record: AppRecord, body: unknown, adminId: string | undefined): Promise<void> {
    const enabled = (body as { development_mode_enabled?: unknown } | undefined)?.development_mode_enabled;
    if (typeof enabled !== 'boolean') throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the body must be { "development_mode_enabled": true | false }');
    await this.state.edit(record, adminId, (app) => {
      const located = locateSync(app);
      if (!located) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'partition-based sync is not configured for this app');
      located.sync.development_mode_enabled = enabled;
    });
  }

  /** What the sync service knows of the app now, across its replicas. */
  status(record: AppRecord): Promise<SyncStatusResponse> {
    return this.ask((bus) => bus.request(Subjects.SyncStatusRead, { appId: record._id }, { timeoutMs: statusTimeoutMs }));
  }

  /**
   * `PUT .../sync/force_reset` `{ file_ident, partition? }` (realm-core's harness): the client file's next
   * IDENT or UPLOAD gets a client reset. Idents are per partition here: name the partition when one is
   * found in several.
   */
  async forceReset(record: AppRecord, body: unknown): Promise<void> {
    const { file_ident: fileIdent, partition } = (typeof body === 'object' && body !== null ? body : {}) as { file_ident?: unknown; partition?: unknown };
    if (typeof fileIdent !== 'number' || !Number.isSafeInteger(fileIdent) || fileIdent < 1 || (partition !== undefined && (typeof partition !== 'string' || partition.length > 4096))) {
      throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the body must be { "file_ident": <positive integer>, "partition": <partition value as the client binds it, optional> }');
    }
    const answer = await this.ask((bus) => bus.request(Subjects.SyncClientReset, { appId: record._id, fileIdent, ...(partition !== undefined ? { partition } : {}) }, { timeoutMs: statusTimeoutMs }));
    switch (answer.outcome) {
      case 'reset':
        return;
      case 'not_found':
        throw new AdminApiError(AdminApiErrorCode.ClientFileNotFound, `no sync client file ${fileIdent}${partition !== undefined ? ` in partition ${partition}` : ''}`);
      case 'ambiguous':
        throw new AdminApiError(AdminApiErrorCode.BadRequest, `sync client file ${fileIdent} exists in several partitions (${answer.partitions.join(', ')}): name one with "partition"`);
      case 'invalid_partition':
        throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `invalid partition value: ${String(partition)}`);
    }
  }

  private async ask<T>(request: (bus: MessageBus) => Promise<T>): Promise<T> {
    if (!this.bus) throw new AdminApiError(AdminApiErrorCode.SyncServiceUnavailable, 'the sync service is not reachable from this process');
    try {
      return await request(this.bus);
    } catch (error) {
      throw new AdminApiError(AdminApiErrorCode.SyncServiceUnavailable, `the sync service did not answer: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** `database.collection` of every collection rule with a schema in the synced database, or the database alone. */
function syncedNamespaces(app: AppConfig, serviceName: string | undefined, databaseName: string | undefined): string[] {
  const service = app.services.find((candidate) => candidate.config.name === serviceName) ?? app.services.find((candidate) => candidate.collectionRules.length > 0);
  const namespaces = (service?.collectionRules ?? [])
    .filter((rule) => rule.schema !== undefined && (databaseName === undefined || databaseName === '' || rule.database === databaseName))
    .map((rule) => `${rule.database}.${rule.collection}`);
  if (namespaces.length > 0) return namespaces.sort();
  return [databaseName || serviceName || 'sync'];
}
