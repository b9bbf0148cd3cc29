import { createHash } from 'node:crypto';
import type { AppConfig, AppService, Trigger } from '@tessera/app-config';
import type { LogEntry, TriggerState } from '@tessera/platform';
import { isSyncEnabled, locateSync } from '../deploy/sync-transition';

/**
 * App Services' event subscriptions, built from what Tessera holds: each trigger of the app (with its
 * runtime state from TriggerStates) and, when sync is configured, the app's one sync translator (Tessera's
 * sync service writes synced changes to the data source itself; the translator stands for that work).
 * Pure functions: the controller reads the stores.
 */
export const SUBSCRIPTION_TYPES = ['DATABASE', 'AUTHENTICATION', 'SCHEDULED', 'SYNCTRANSLATOR'] as const;

/** App Services showed translators with a zero function id: no app function runs for them. */
const NO_FUNCTION = '000000000000000000000000';

/** The translator's id: stable for the app (realm-cli and the UI keep ids between calls), an ObjectId's form. */
export function syncTranslatorId(appId: string): string {
  return createHash('sha256').update(`${appId}/sync-translator`).digest('hex').slice(0, 24);
}

export function triggerSubscription(app: AppConfig, trigger: Trigger, state?: TriggerState): object {
  const { id, ...rest } = trigger;
  const suspended = state?.status === 'suspended' || state?.status === 'resuming';
  const fn = app.functions.find((candidate) => candidate.config.name === trigger.function_name);
  return {
    _id: id,
    ...rest,
    ...(fn?.config.id ? { function_id: fn.config.id } : {}),
    disabled: trigger.disabled === true,
    ...(suspended && state.error ? { error: state.error } : {}),
    ...(state ? { last_modified: seconds(state.last_modified) } : {}),
  };
}

/** The sync translator, when the app configures sync; disabled while its sync configuration is not enabled. */
export function syncTranslator(appId: string, app: AppConfig): object | undefined {
  const located = locateSync(app);
  if (!located) return undefined;
  const lastDisabled = located.sync.last_disabled;
  return { _id: syncTranslatorId(appId), name: 'SyncTranslator', type: 'SYNCTRANSLATOR', function_id: NO_FUNCTION, disabled: !isSyncEnabled(located.sync), config: null, ...(typeof lastDisabled === 'number' ? { last_modified: lastDisabled } : {}) };
}

/** The log type the function runtime gives a trigger's runs (platform-execution-logs). */
export function triggerLogType(trigger: Trigger): string {
  return trigger.type === 'SCHEDULED' ? 'SCHEDULED_TRIGGER' : trigger.type === 'AUTHENTICATION' ? 'AUTH_TRIGGER' : 'DB_TRIGGER';
}

/** `GET .../execution`: the latest run (`entry`), or `completed_at: null` when none is in the app's log. */
export function execution(resourceId: string, entry: LogEntry | undefined): object {
  if (!entry) return { resource_id: resourceId, data: {}, completed_at: null };
  const ms = Math.max(0, new Date(entry.completed).getTime() - new Date(entry.started).getTime()) || 0;
  return {
    resource_id: resourceId,
    data: { log_id: entry._id, type: entry.type, ...(entry.error ? { error: entry.error } : {}), ...(entry.error_code ? { error_code: entry.error_code } : {}) },
    completed_at: entry.completed,
    stats: { execution_time: `${ms}ms` },
  };
}

/**
 * Spec `FlexibleSync` of a data source: its fields when the app's flexible sync syncs this service, and
 * `state: ""` (App Services: sync not configured) otherwise.
 */
export function flexibleSync(app: AppConfig, service: AppService): Record<string, unknown> {
  const located = locateSync(app);
  if (located?.mode !== 'flexible' || located.serviceName !== service.config.name) return { state: '' };
  const sync = located.sync as Record<string, unknown>;
  const fields = ['database_name', 'indexed_queryable_fields_names', 'collection_queryable_fields_names', 'permissions', 'client_max_offline_days', 'is_recovery_mode_disabled', 'asymmetric_tables'];
  const lastDisabled = sync['last_disabled'];
  return {
    state: isSyncEnabled(located.sync) ? 'enabled' : 'disabled',
    ...Object.fromEntries(fields.filter((field) => sync[field] !== undefined).map((field) => [field, sync[field]])),
    queryable_fields_names: sync['queryable_fields_names'] ?? [],
    ...(typeof lastDisabled === 'number' ? { last_disabled: String(lastDisabled) } : {}),
  };
}

function seconds(date: Date | string): number {
  return Math.floor(new Date(date).getTime() / 1000);
}
