// The sync state machine of spec section 3 and the stateful sync rules of 2.6 and 8, as a pure function
// of the live configuration, the proposed one and what the platform remembers. validateApp checks what
// one configuration says on its own; this checks what may change between two of them.

import { isFederatedType, type AppConfig, type ConfigViolation, type SyncConfig } from '@tessera/app-config';
import type { SyncState } from '@tessera/platform';

/** The partition-based sync configuration of an app, wherever it is written. */
export interface LocatedSync {
  sync: SyncConfig;
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isSyncEnabled(sync: SyncConfig | undefined): boolean {
  return sync !== undefined && (sync.state === 'enabled' || sync.state === true);
}

function isPartitionSync(sync: SyncConfig): boolean {
  return sync.type === 'partition' || (sync.type === undefined && sync.partition !== undefined);
}

/** The app's partition-based sync configuration: sync/config.json first, else one embedded in a cluster service. */
export function locateSync(app: AppConfig): LocatedSync | undefined {
  if (app.sync && isPartitionSync(app.sync)) return { sync: app.sync, serviceName: typeof app.sync.service_name === 'string' ? app.sync.service_name : undefined, file: 'sync/config.json', base: '' };
  for (const service of app.services) {
    const sync = service.config.config?.sync;
    if (sync && isPlainObject(sync) && !isFederatedType(service.config.type) && isPartitionSync(sync)) {
      return { sync, serviceName: service.config.name, file: `services/${service.config.name}/config.json`, base: 'config.sync.' };
    }
  }
  return undefined;
}

/** What an enabled configuration fixes: the key, its type, the permissions and the synced service. */
function rulesOf(located: LocatedSync): string {
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
    if (wasOn && previous) {
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
    const hadSync = state.everEnabled || previous?.sync.last_disabled !== undefined;
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
    return { ok: true, state: { ...state, everEnabled: true, enabled: false, lastDisabled: now }, event: 'terminated' };
  }
  return { ok: true, state, event: 'none' };
}

const minimumClusterVersion = [4, 4, 0];

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
    const older = minimumClusterVersion.findIndex((minimum, index) => (parts[index] ?? 0) !== minimum);
    if (older !== -1 && (parts[older] ?? 0) < minimumClusterVersion[older]) {
      violations.push({ file, path: 'config.clusterVersion', rule: 'sync.cluster.version', message: `partition-based sync needs database version 4.4.0 or later; the cluster runs ${version}` });
    }
  }
  return violations;
}
