import { type PlatformDatabase, withoutUndefined } from './platform-database';

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

/** The sync state of each app in `sync_states` (`_id` = app id). */
export class SyncStateStore {
  constructor(private readonly db: PlatformDatabase) {}

  async get(appId: string): Promise<SyncState> {
    const stored = await (await this.db.collection('sync_states')).findOne({ _id: appId });
    if (!stored) return { ...initialSyncState };
    const { _id: _app, ...state } = stored;
    return state as unknown as SyncState;
  }

  async save(appId: string, state: SyncState): Promise<void> {
    await (await this.db.collection('sync_states')).replaceOne({ _id: appId }, withoutUndefined(state), { upsert: true });
  }
}
