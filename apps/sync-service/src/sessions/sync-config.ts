/**
 * What the sync service needs from an app's sync configuration (spec 2.6), read from the live deployment.
 * Pure: no I/O.
 */
import { type AppConfig } from '@tessera/app-config';
import { compilePartitionPermissions, type CompiledPartitionPermissions, type PartitionPermissionsConfig } from '@tessera/rules';

export type SyncMode =
  | { kind: 'partition'; key: string; type: string; required: boolean; permissions: CompiledPartitionPermissions }
  | { kind: 'flexible' }
  | { kind: 'disabled' };

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
  const sync = config.sync;
  if (!sync) return { kind: 'disabled' };
  const enabled = sync.state === 'enabled' || sync.state === true;
  if (!enabled) return { kind: 'disabled' };
  if (sync.type === 'flexible') return { kind: 'flexible' };
  const partition = sync.partition;
  if ((sync.type !== undefined && sync.type !== 'partition') || !partition?.key || !partition.type) return { kind: 'disabled' };
  return {
    kind: 'partition',
    key: partition.key,
    type: partition.type,
    required: partition.required === true,
    permissions: compilePartitionPermissions({ read: partition.permissions?.read, write: partition.permissions?.write } as PartitionPermissionsConfig),
  };
}
