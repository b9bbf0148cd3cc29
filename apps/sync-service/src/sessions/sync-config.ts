/**
 * What the sync service needs from an app's sync configuration (spec 2.6), read from the live deployment:
 * sync/config.json, or the legacy forms embedded in the cluster service (`config.sync` for partition-based
 * sync, `config.flexible_sync` for flexible sync). Pure: no I/O.
 */
import { type AppConfig, effectiveSyncConfig, type SyncConfig } from '@tessera/app-config';
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
  | FlexibleSyncMode
  /** `terminated`: sync was on and was terminated (`last_disabled` set); clients wait for it to come back. */
  | { kind: 'disabled'; terminated: boolean };

/** Flexible sync as the session and query engine need it; roles stay in the collection rules. */
export interface FlexibleSyncMode {
  kind: 'flexible';
  /** The synced data source (cluster service). */
  serviceName: string | undefined;
  /** Development mode: client schemas create collections in `databaseName`. */
  developmentMode: boolean;
  databaseName: string | undefined;
  /** Fields every synced type may be queried on (always with `_id`). */
  queryableFields: readonly string[];
  /** Further queryable fields per type (collection) name. */
  collectionQueryableFields: Readonly<Record<string, readonly string[]>>;
  indexedQueryableField: string | undefined;
  /** Types clients only insert (data ingest): stored, never downloaded. */
  asymmetricTables: readonly string[];
  recoveryDisabled: boolean;
  clientMaxOfflineDays: number;
}

/** The fields a flexible-sync query on `type` may use: `_id`, the global queryable fields and the type's own. */
export function queryableFieldsFor(mode: FlexibleSyncMode, type: string): ReadonlySet<string> {
  return new Set(['_id', ...mode.queryableFields, ...(mode.collectionQueryableFields[type] ?? [])]);
}

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
  const offlineDays = sync.client_max_offline_days;
  const clientMaxOfflineDays = typeof offlineDays === 'number' && offlineDays > 0 ? offlineDays : defaultClientMaxOfflineDays;
  if (sync.type === 'flexible') return flexibleMode(sync, sync.service_name, clientMaxOfflineDays);
  const partition = sync.partition;
  if ((sync.type !== undefined && sync.type !== 'partition') || !partition?.key || !partition.type) return { kind: 'disabled', terminated: false };
  return {
    kind: 'partition',
    key: partition.key,
    type: partition.type,
    required: partition.required === true,
    permissions: compilePartitionPermissions({ read: partition.permissions?.read, write: partition.permissions?.write } as PartitionPermissionsConfig),
    recoveryDisabled: sync.is_recovery_mode_disabled === true,
    clientMaxOfflineDays,
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item !== '') : [];
}

function flexibleMode(sync: SyncConfig, serviceName: string | undefined, clientMaxOfflineDays: number): FlexibleSyncMode {
  const perCollection: Record<string, readonly string[]> = {};
  const declared = sync.collection_queryable_fields_names;
  if (declared && typeof declared === 'object' && !Array.isArray(declared)) {
    for (const [type, fields] of Object.entries(declared)) perCollection[type] = strings(fields);
  }
  return {
    kind: 'flexible',
    serviceName,
    developmentMode: sync.development_mode_enabled === true,
    databaseName: typeof sync.database_name === 'string' && sync.database_name !== '' ? sync.database_name : undefined,
    queryableFields: strings(sync.queryable_fields_names),
    collectionQueryableFields: perCollection,
    indexedQueryableField: strings(sync.indexed_queryable_fields_names)[0],
    asymmetricTables: strings(sync.asymmetric_tables),
    recoveryDisabled: sync.is_recovery_mode_disabled === true,
    clientMaxOfflineDays,
  };
}

