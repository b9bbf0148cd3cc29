/**
 * What the sync service needs from an app's sync configuration (spec 2.6), read from the live deployment:
 * sync/config.json, or the legacy form embedded as `config.sync` of the cluster service. Pure: no I/O.
 */
import { type AppConfig, effectiveSyncConfig } from '@tessera/app-config';
import { compilePartitionPermissions, type CompiledPartitionPermissions, type PartitionPermissionsConfig } from '@tessera/rules';

export type SyncMode =
  | {
      kind: 'partition';
      key: string;
      type: string;
      required: boolean;
      permissions: CompiledPartitionPermissions;
      /** `is_recovery_mode_disabled`: a client reset discards unsynced changes instead of recovering them. */
      recoveryDisabled: boolean;
      /** `client_max_offline_days`: compaction stops keeping history for clients offline longer than this. */
      clientMaxOfflineDays: number;
    }
  | { kind: 'flexible' }
  /** `terminated`: sync was on and was terminated (`last_disabled` set); clients wait for it to come back. */
  | { kind: 'disabled'; terminated: boolean };

/** Spec 8: 30 days when sync was enabled through the UI; the same when the configuration says nothing. */
export const defaultClientMaxOfflineDays = 30;

const compiled = new WeakMap<AppConfig, SyncMode>();

/** The sync mode of a configuration; compiled permissions are cached per configuration object. */
export function syncModeOf(config: AppConfig): SyncMode {
  let mode = compiled.get(config);
  if (!mode) {
    mode = readSyncMode(config);
    compiled.set(config, mode);
  }
  return mode;
}

function readSyncMode(config: AppConfig): SyncMode {
  const sync = effectiveSyncConfig(config);
  if (!sync) return { kind: 'disabled', terminated: false };
  const enabled = sync.state === 'enabled' || sync.state === true;
  if (!enabled) return { kind: 'disabled', terminated: sync.last_disabled !== undefined };
  if (sync.type === 'flexible') return { kind: 'flexible' };
  const partition = sync.partition;
  if ((sync.type !== undefined && sync.type !== 'partition') || !partition?.key || !partition.type) return { kind: 'disabled', terminated: false };
  const offlineDays = sync.client_max_offline_days;
  return {
    kind: 'partition',
    key: partition.key,
    type: partition.type,
    required: partition.required === true,
    permissions: compilePartitionPermissions({ read: partition.permissions?.read, write: partition.permissions?.write } as PartitionPermissionsConfig),
    recoveryDisabled: sync.is_recovery_mode_disabled === true,
    clientMaxOfflineDays: typeof offlineDays === 'number' && offlineDays > 0 ? offlineDays : defaultClientMaxOfflineDays,
  };
}
