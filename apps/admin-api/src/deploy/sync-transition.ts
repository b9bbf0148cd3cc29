// The sync state machine of spec section 3 and the stateful sync rules of 2.6 and 8, as a pure function
// of the live configuration, the proposed one and what the platform remembers. validateApp checks what
// one configuration says on its own; this checks what may change between two of them. Both sync modes
// go through it: partition-based (locked rules, deprecated for new apps) and flexible (queryable fields
// and roles may change while enabled; the synced cluster and the mode may not).

import { isFederatedType, type AppConfig, type ConfigViolation, type SyncConfig } from '@tessera/app-config';
import type { SyncState } from '@tessera/platform';

/** The sync configuration of an app, wherever it is written. */
export interface LocatedSync {
  sync: SyncConfig;
  /** Absent means partition (what every caller located before flexible sync existed). */
  mode?: SyncMode;
  serviceName: string | undefined;
  /** The file and the JSON path prefix of the sync document (current layout). */
  file: string;
  base: string;
}

export interface SyncTransitionContext {
  /** Settings: allow enabling partition-based sync on an app that never had it. */
  allowNewPartitionSync: boolean;
  /** The proposed configuration comes from an import onto an app that has no configuration of its own yet. */
  firstImport: boolean;
  nowSeconds: number;
}

export type SyncTransition =
  | { ok: true; state: SyncState; event: 'none' | 'enabled' | 're-enabled' | 'terminated' | 'updated' }
  | { ok: false; code: 'PartitionSyncNotAllowed' | 'SyncRulesLocked'; message: string; violations: ConfigViolation[] };

export type SyncMode = 'partition' | 'flexible';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isSyncEnabled(sync: SyncConfig | undefined): boolean {
  return sync !== undefined && (sync.state === 'enabled' || sync.state === true);
}

function isPartitionSync(sync: SyncConfig): boolean {
  return sync.type === 'partition' || (sync.type === undefined && sync.partition !== undefined);
}

export function modeOf(located: LocatedSync | undefined): SyncMode | undefined {
  return located ? (located.mode ?? 'partition') : undefined;
}

/**
 * The app's sync configuration: sync/config.json first (partition or flexible), else one embedded in a
 * cluster service (`config.sync`, partition; `config.flexible_sync`, the older form of flexible sync).
 */
export function locateSync(app: AppConfig): LocatedSync | undefined {
  if (app.sync) {
    const serviceName = typeof app.sync.service_name === 'string' ? app.sync.service_name : undefined;
    if (isPartitionSync(app.sync)) return { sync: app.sync, mode: 'partition', serviceName, file: 'sync/config.json', base: '' };
    if (app.sync.type === 'flexible') return { sync: app.sync, mode: 'flexible', serviceName, file: 'sync/config.json', base: '' };
  }
  for (const service of app.services) {
    if (isFederatedType(service.config.type)) continue;
    const file = `services/${service.config.name}/config.json`;
    const sync = service.config.config?.sync;
    if (sync && isPlainObject(sync) && isPartitionSync(sync)) return { sync, mode: 'partition', serviceName: service.config.name, file, base: 'config.sync.' };
    const flexible = service.config.config?.['flexible_sync'];
    if (flexible && isPlainObject(flexible)) return { sync: flexible, mode: 'flexible', serviceName: service.config.name, file, base: 'config.flexible_sync.' };
  }
  return undefined;
}

/**
 * What an enabled configuration fixes. Partition: the key, its type, the permissions and the synced
 * service. Flexible: only the synced service (queryable fields and roles may change: protocol 14 clients
 * bootstrap again instead of resetting).
 */
function rulesOf(located: LocatedSync): string {
  if (modeOf(located) === 'flexible') return JSON.stringify(['flexible', located.serviceName ?? null]);
  const partition = located.sync.partition ?? {};
  return JSON.stringify([located.serviceName ?? null, partition.key ?? null, partition.type ?? null, partition.required ?? null, canonical(partition.permissions ?? null)]);
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (isPlainObject(value)) return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical(value[key])]));
  return value;
}

/**
 * Decides a change of sync configuration. On success returns the new platform sync state; the caller
 * also gets `last_disabled` written into the proposed configuration on a terminate.
 */
export function planSyncTransition(previous: LocatedSync | undefined, next: LocatedSync | undefined, state: SyncState, context: SyncTransitionContext): SyncTransition {
  const wasOn = isSyncEnabled(previous?.sync);
  const isOn = isSyncEnabled(next?.sync);
  const now = context.nowSeconds;

  if (isOn && next) {
    const flexible = modeOf(next) === 'flexible';
    if (wasOn && previous) {
      if (modeOf(previous) !== modeOf(next)) {
        return {
          ok: false,
          code: 'SyncRulesLocked',
          message: `sync cannot switch from ${modeOf(previous)} to ${modeOf(next)} while it is enabled: terminate sync (state "disabled"), then enable the new mode (every client will have to reset)`,
          violations: [{ file: next.file, path: `${next.base}${next.base === '' ? 'type' : 'state'}`, rule: 'sync.mode.locked', message: 'the sync mode cannot change while sync is enabled' }],
        };
      }
      if (flexible && rulesOf(previous) !== rulesOf(next)) {
        return {
          ok: false,
          code: 'SyncRulesLocked',
          message: 'the synced cluster cannot change while flexible sync is enabled: terminate sync (state "disabled"), then enable it on the other cluster (every client will have to reset)',
          violations: [{ file: next.file, path: `${next.base}service_name`, rule: 'sync.rules.locked', message: 'the synced service cannot change while sync is enabled' }],
        };
      }
      if (rulesOf(previous) !== rulesOf(next)) {
        return {
          ok: false,
          code: 'SyncRulesLocked',
          message:
            'sync rules cannot change while sync is enabled: the partition key, its type, the permissions and the synced service are fixed; terminate sync (state "disabled"), then enable it again with the new configuration (every client will have to reset)',
          violations: [{ file: next.file, path: `${next.base}partition`, rule: 'sync.rules.locked', message: 'partition key and permissions cannot change while sync is enabled' }],
        };
      }
      return { ok: true, state: { ...state, enabled: true }, event: 'updated' };
    }
    // An app deployed before the platform kept sync state (the bootstrapped example) shows its history in its files.
    const hadSync = state.everEnabled || (modeOf(previous) === 'partition' && previous?.sync.last_disabled !== undefined);
    if (flexible) {
      // Flexible sync is what spec 9.3 recommends: always allowed. A client of an earlier enabled period resets.
      const terminatedBefore = state.lastDisabled !== undefined || previous?.sync.last_disabled !== undefined;
      const { partition: _partition, ...rest } = state;
      const enabledState: SyncState = { ...rest, enabled: true, enabledAt: now };
      if (terminatedBefore) return { ok: true, state: { ...enabledState, resetEpoch: state.resetEpoch + 1, clientResetRequiredSince: now }, event: 're-enabled' };
      return { ok: true, state: enabledState, event: 'enabled' };
    }
    if (!hadSync && !context.allowNewPartitionSync && !context.firstImport) {
      return {
        ok: false,
        code: 'PartitionSyncNotAllowed',
        message:
          'partition-based sync is deprecated and disallowed for new sync configurations; use flexible sync instead (type "flexible"), or ask the server operator to set TESSERA_ALLOW_NEW_PARTITION_SYNC=true',
        violations: [{ file: next.file, path: `${next.base}type`, rule: 'sync.partition.new', message: 'partition-based sync cannot be enabled on an app that never had it; use flexible sync' }],
      };
    }
    const terminatedBefore = hadSync && (state.lastDisabled !== undefined || previous?.sync.last_disabled !== undefined);
    const partition = next.sync.partition;
    const enabledState: SyncState = {
      ...state,
      everEnabled: true,
      enabled: true,
      enabledAt: now,
      ...(typeof partition?.key === 'string' && typeof partition.type === 'string' ? { partition: { key: partition.key, type: partition.type } } : {}),
    };
    if (terminatedBefore) return { ok: true, state: { ...enabledState, resetEpoch: state.resetEpoch + 1, clientResetRequiredSince: now }, event: 're-enabled' };
    return { ok: true, state: enabledState, event: 'enabled' };
  }

  if (wasOn) {
    if (next) next.sync.last_disabled = now;
    // everEnabled records partition-based sync only: it is what lets an app enable that mode again.
    const everEnabled = state.everEnabled || modeOf(previous) === 'partition';
    return { ok: true, state: { ...state, everEnabled, enabled: false, lastDisabled: now }, event: 'terminated' };
  }
  return { ok: true, state, event: 'none' };
}

/** Partition-based sync needs 4.4.0 (spec 2.6 rule 9); flexible sync needs 5.0.0 (App Services' requirement). */
const minimumClusterVersions: Record<SyncMode, number[]> = { partition: [4, 4, 0], flexible: [5, 0, 0] };

/**
 * Sync rules that depend on the linked source rather than on the files alone: never on a serverless
 * instance, and a cluster of version 4.4.0 or later where its version is known (`config.clusterVersion`).
 */
export function checkSyncSource(app: AppConfig, located: LocatedSync | undefined): ConfigViolation[] {
  if (!located || !isSyncEnabled(located.sync)) return [];
  const service = app.services.find((candidate) => candidate.config.name === located.serviceName);
  if (!service) return [];
  const file = `services/${service.config.name}/config.json`;
  const config = (service.config.config ?? {}) as Record<string, unknown>;
  const violations: ConfigViolation[] = [];
  if (config['clusterType'] === 'serverless' || config['serverless'] === true) {
    violations.push({ file, path: 'config.clusterType', rule: 'sync.datasource.serverless', message: 'sync cannot be used with a serverless instance' });
  }
  const version = config['clusterVersion'];
  if (typeof version === 'string' && /^\d+(\.\d+)*$/.test(version)) {
    const parts = version.split('.').map(Number);
    const mode = modeOf(located) ?? 'partition';
    const minimum = minimumClusterVersions[mode];
    const older = minimum.findIndex((part, index) => (parts[index] ?? 0) !== part);
    if (older !== -1 && (parts[older] ?? 0) < minimum[older]) {
      violations.push({ file, path: 'config.clusterVersion', rule: 'sync.cluster.version', message: `${mode === 'flexible' ? 'flexible' : 'partition-based'} sync needs database version ${minimum.join('.')} or later; the cluster runs ${version}` });
    }
  }
  return violations;
}
