import { join } from 'node:path';
import { readJsonFile, writeJsonFile } from './json-file';

/**
 * What the platform remembers about an app's sync across deployments. The admin API writes it when a
 * deployment changes the sync configuration; the sync service reads it: a client whose last session
 * started before `clientResetRequiredSince` (or that carries an older `resetEpoch`) must do a client reset.
 */
export interface SyncState {
  /** Partition-based sync was enabled at least once for this app. */
  everEnabled: boolean;
  enabled: boolean;
  /** Seconds since the epoch of the last enable, terminate and reset requirement. */
  enabledAt?: number;
  lastDisabled?: number;
  /** Increases every time sync is re-enabled after a terminate. */
  resetEpoch: number;
  clientResetRequiredSince?: number;
  /** The partition key of the live configuration. */
  partition?: { key: string; type: string };
}

export const initialSyncState: SyncState = { everEnabled: false, enabled: false, resetEpoch: 0 };

/** `<dataDir>/platform/apps/<appId>/sync-state.json`. */
export class FileSyncStateStore {
  constructor(private readonly dataDir: string) {}

  private path(appId: string): string {
    return join(this.dataDir, 'platform', 'apps', appId, 'sync-state.json');
  }

  async get(appId: string): Promise<SyncState> {
    return (await readJsonFile<SyncState>(this.path(appId))) ?? { ...initialSyncState };
  }

  async save(appId: string, state: SyncState): Promise<void> {
    await writeJsonFile(this.path(appId), state);
  }
}
