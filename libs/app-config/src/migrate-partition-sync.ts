// Moving a partition-sync app to flexible sync (issue 17 item 5, spec 2.6 permission rule 5): the
// flexible-sync configuration that serves the same data (the partition key becomes a queryable field, so
// a migrated client subscribes with `<key> == <partition>`), and the roles that reproduce the partition
// permissions where the spec says they translate. Rules that use `%function` or `%%partition` cannot be
// migrated; rules built with `%or`, `%and`, `%not` or `%nor` do not translate directly and must be tested in
// a separate new app: both are reported with the reason, never silently widened. Pure: works on a cloned
// AppConfig and writes nothing.

import { cloneApp } from './normalize';
import { isFederatedType, type AppConfig, type AppService, type Expression, type Role, type SyncConfig } from './model';
import { effectiveSyncConfig } from './effective-sync';

export type PartitionPermission = 'read' | 'write';

/** A partition permission the migration does not carry over, and why. */
export interface UntranslatedPermission {
  permission: PartitionPermission;
  expression: unknown;
  reason: string;
  /**
   * For a test of `%%partition` alone: the document filter on the partition key that selects the same
   * documents, to try in a separate app (the spec says `%%partition` cannot be migrated, so it is not applied).
   */
  suggestedDocumentFilter?: Record<string, unknown>;
}

export interface MigratedCollection {
  database: string;
  collection: string;
  /** The names of the roles the collection had (they also governed data access outside sync). */
  replacedRoles: string[];
  roles: Role[];
}

export type PartitionMigration =
  | {
      ok: true;
      /** The app with flexible sync: sync/config.json of type flexible, the partition sync removed, the roles replaced. */
      app: AppConfig;
      sync: SyncConfig;
      collections: MigratedCollection[];
      untranslated: UntranslatedPermission[];
      /** What the operator must know before deploying it. */
      notes: string[];
    }
  | { ok: false; reason: string };

const LOGICAL_EXPANSIONS = ['%or', '%and', '%not', '%nor'];

/** Why an expression cannot become a session's `apply_when`, or undefined when it can. */
function untranslatable(expression: unknown): string | undefined {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.startsWith('%%partition')) found.add('%%partition');
      return;
    }
    if (Array.isArray(value)) return value.forEach(walk);
    if (typeof value !== 'object' || value === null) return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === '%function') found.add('%function');
      else if (key.startsWith('%%partition')) found.add('%%partition');
      else if (LOGICAL_EXPANSIONS.includes(key)) found.add(key);
      walk(inner);
    }
  };
  walk(expression);
  if (found.has('%function')) return 'it calls a function (%function): function rules cannot be migrated (spec 2.6 permission rule 5); express the decision as document filters on queryable fields, or as apply_when on the user';
  if (found.has('%%partition')) {
    return 'it uses %%partition: there is no partition in flexible sync, so %%partition cannot be migrated (spec 2.6 permission rule 5); a document filter on the partition key can select the same documents, but it must be written and tested by hand';
  }
  const logical = LOGICAL_EXPANSIONS.filter((name) => found.has(name));
  if (logical.length > 0) return `it uses ${logical.join(', ')}: logical expansions do not translate directly and need testing in a separate new app (spec 2.6 permission rule 5)`;
  return undefined;
}

/** `%in` and its kin as a query filter spells them (`$in`), for a suggested document filter. */
function asQuery(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asQuery);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key.startsWith('%') && !key.startsWith('%%') ? `$${key.slice(1)}` : key, asQuery(inner)]));
}

/** A test of `%%partition` and nothing else (`{"%%partition": X}` with X free of expansions that need a partition). */
function partitionFilter(expression: unknown, key: string): Record<string, unknown> | undefined {
  if (typeof expression !== 'object' || expression === null || Array.isArray(expression)) return undefined;
  const entries: Array<[string, unknown]> = Object.entries(expression);
  if (entries.length !== 1 || entries[0]?.[0] !== '%%partition') return undefined;
  const test = entries[0][1];
  if (untranslatable(test) !== undefined) return undefined;
  return { [key]: asQuery(test) };
}

/** An expression as a session condition: true, false, or an `apply_when` on the user (no partition, no document). */
type Condition = { ok: true; when: boolean | Record<string, unknown> } | { ok: false; reason: string };

function condition(expression: Expression): Condition {
  // An absent permission grants nothing, as in partition sync.
  if (expression === undefined || expression === null || expression === false) return { ok: true, when: false };
  if (expression === true) return { ok: true, when: true };
  if (typeof expression !== 'object' || Array.isArray(expression)) return { ok: false, reason: 'it is not a boolean or an expression object' };
  if (Object.keys(expression).length === 0) return { ok: true, when: true };
  const reason = untranslatable(expression);
  return reason ? { ok: false, reason } : { ok: true, when: expression as Record<string, unknown> };
}

function role(name: string, when: true | Record<string, unknown>, write: boolean): Role {
  return { name, apply_when: when === true ? {} : when, document_filters: { read: true, write }, read: true, write, insert: write, delete: write, search: true };
}

/**
 * The flexible-sync form of a partition-sync app. Roles, in the order sessions try them: one that reads
 * and writes where the write permission translates, one that only reads where the read permission does
 * (write implies read, so none when anyone may write). A permission that does not translate gives no role:
 * users it admitted cannot sync until a role is written for them.
 */
export function migratePartitionSync(source: AppConfig): PartitionMigration {
  const sync = effectiveSyncConfig(source);
  const isPartition = sync !== undefined && (sync.type === 'partition' || (sync.type === undefined && sync.partition !== undefined));
  if (!sync || !isPartition) return { ok: false, reason: sync?.type === 'flexible' ? 'the app already uses flexible sync' : 'the app has no partition-based sync configuration' };
  const key = sync.partition?.key;
  if (typeof key !== 'string' || key === '') return { ok: false, reason: 'the partition-based sync configuration names no partition key' };

  const app = cloneApp(source);
  const serviceName = sync.service_name;
  const service = app.services.find((candidate) => candidate.config.name === serviceName && !isFederatedType(candidate.config.type));
  if (!service) return { ok: false, reason: `the synced service "${String(serviceName)}" is not in the app` };

  const permissions = sync.partition?.permissions ?? {};
  const read = condition(permissions.read);
  const write = condition(permissions.write);
  const untranslated: UntranslatedPermission[] = [];
  for (const [permission, result] of [['read', read], ['write', write]] as const) {
    if (result.ok) continue;
    const expression = permissions[permission];
    const suggested = partitionFilter(expression, key);
    untranslated.push({ permission, expression, reason: result.reason, ...(suggested ? { suggestedDocumentFilter: suggested } : {}) });
  }
  const roles: Role[] = [];
  if (write.ok && write.when !== false) roles.push(role(write.when === true ? 'sync-everyone-writes' : 'sync-writer', write.when, true));
  if (read.ok && read.when !== false && !(write.ok && write.when === true)) roles.push(role(read.when === true ? 'sync-everyone-reads' : 'sync-reader', read.when, false));

  const collections: MigratedCollection[] = [];
  for (const rule of service.collectionRules) {
    if (typeof rule.schema?.title !== 'string') continue;
    collections.push({ database: rule.database, collection: rule.collection, replacedRoles: (rule.roles ?? []).map((r) => r.name), roles: structuredClone(roles) });
    rule.roles = structuredClone(roles);
  }

  const flexible: SyncConfig = {
    type: 'flexible',
    state: sync.state === true || sync.state === 'enabled' ? 'enabled' : 'disabled',
    service_name: service.config.name,
    development_mode_enabled: sync.development_mode_enabled === true,
    ...(sync.database_name !== undefined ? { database_name: sync.database_name } : {}),
    queryable_fields_names: [key],
    ...(sync.client_max_offline_days !== undefined ? { client_max_offline_days: sync.client_max_offline_days } : {}),
    ...(sync.is_recovery_mode_disabled !== undefined ? { is_recovery_mode_disabled: sync.is_recovery_mode_disabled } : {}),
  };
  app.sync = flexible;
  removeEmbeddedSync(app.services);

  const notes = [
    `Queryable field "${key}": a client migrated from partition sync subscribes to each partition it opened as \`${key} == <partition value>\`.`,
    'The roles replace those of every synced collection, and they govern every access to those collections (remote data access, GraphQL, functions run as a user), not only sync: review them before deploying.',
    'An app cannot switch sync modes while sync is enabled: push this to a new app, or terminate partition sync first (tessera sync terminate); every client then resets.',
  ];
  if (roles.length === 0) notes.push('No permission translated: no role applies to any session, so no user can sync until roles are written by hand.');
  return { ok: true, app, sync: flexible, collections, untranslated, notes };
}

function removeEmbeddedSync(services: AppService[]): void {
  for (const service of services) {
    const config = service.config.config;
    if (!config || !('sync' in config)) continue;
    const { sync: _sync, ...rest } = config;
    service.config.config = rest;
  }
}
