import { resolve } from 'node:path';
import { migratePartitionSync, readAppDirectory, readAppFiles, validateApp, writeAppDirectory, type AppConfig, type PartitionMigration } from '@tessera/app-config';
import type { Command } from 'commander';
import type { AdminClient } from '../admin-client';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext } from '../context';
import { appDirectory, exists, isNonEmptyDirectory, localAppId, unzip } from '../local-files';
import { table } from './apps.command';

const remoteOption = ['--remote <app id>', 'the app (client app id, name or _id; default: app_id in ./config.json)'] as const;
const yesOption = ['-y, --yes', 'do not ask for confirmation (needed when there is no terminal to ask on)'] as const;

type SyncMode = 'partition' | 'flexible';

/** The sync configuration of an app as the admin API's service configuration holds it. */
interface SyncDocument {
  state?: string | boolean;
  database_name?: string;
  development_mode_enabled?: boolean;
  partition?: { key?: string; type?: string; required?: boolean; permissions?: { read?: unknown; write?: unknown } };
  queryable_fields_names?: string[];
  indexed_queryable_fields_names?: string[];
  collection_queryable_fields_names?: Record<string, string[]>;
  asymmetric_tables?: string[];
  last_disabled?: number;
  client_max_offline_days?: number;
  is_recovery_mode_disabled?: boolean;
}

interface LocatedSync {
  mode: SyncMode;
  serviceId: string;
  serviceName: string;
  sync: SyncDocument;
}

/** What `sync show` prints (also its JSON). */
interface SyncSummary {
  app: string;
  mode: SyncMode | 'none';
  enabled: boolean;
  terminated: boolean;
  service?: string;
  last_disabled?: string;
  development_mode_enabled?: boolean;
  recovery_mode_enabled?: boolean;
  client_max_offline_days?: number;
  partition?: SyncDocument['partition'];
  queryable_fields?: string[];
  indexed_queryable_fields?: string[];
  collection_queryable_fields?: Record<string, string[]>;
  asymmetric_tables?: string[];
}

const isEnabled = (sync: SyncDocument): boolean => sync.state === 'enabled' || sync.state === true;

/** The cluster service whose configuration holds the app's sync (`sync`: partition, `flexible_sync`: flexible). */
async function locateSync(client: AdminClient, base: string): Promise<LocatedSync | undefined> {
  const services = (await client.request<{ _id: string; name: string; type: string }[]>('GET', `${base}/services`)).body;
  for (const service of services) {
    const config = (await client.request<Record<string, unknown>>('GET', `${base}/services/${service._id}/config`)).body;
    const flexible = config['flexible_sync'];
    if (isObject(flexible)) return { mode: 'flexible', serviceId: service._id, serviceName: service.name, sync: flexible };
    const partition = config['sync'];
    if (isObject(partition) && (partition['type'] === undefined || partition['type'] === 'partition')) return { mode: 'partition', serviceId: service._id, serviceName: service.name, sync: partition };
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function summarize(app: string, located: LocatedSync | undefined): SyncSummary {
  if (!located) return { app, mode: 'none', enabled: false, terminated: false };
  const { sync } = located;
  const enabled = isEnabled(sync);
  return {
    app,
    mode: located.mode,
    enabled,
    terminated: !enabled && sync.last_disabled !== undefined,
    service: located.serviceName,
    ...(sync.last_disabled !== undefined ? { last_disabled: new Date(sync.last_disabled * 1000).toISOString() } : {}),
    development_mode_enabled: sync.development_mode_enabled === true,
    recovery_mode_enabled: sync.is_recovery_mode_disabled !== true,
    ...(sync.client_max_offline_days !== undefined ? { client_max_offline_days: sync.client_max_offline_days } : {}),
    ...(located.mode === 'partition'
      ? { partition: sync.partition ?? {} }
      : {
          queryable_fields: sync.queryable_fields_names ?? [],
          indexed_queryable_fields: sync.indexed_queryable_fields_names ?? [],
          ...(sync.collection_queryable_fields_names ? { collection_queryable_fields: sync.collection_queryable_fields_names } : {}),
          asymmetric_tables: sync.asymmetric_tables ?? [],
        }),
  };
}

function describeSummary(summary: SyncSummary): string {
  if (summary.mode === 'none') return `${summary.app}: sync is not configured`;
  const state = summary.enabled ? 'enabled' : summary.terminated ? `terminated (since ${summary.last_disabled}); enabling it again resets every client` : 'disabled';
  const lines = [
    `app:               ${summary.app}`,
    `mode:              ${summary.mode === 'partition' ? 'partition-based' : 'flexible'}`,
    `state:             ${state}`,
    `service:           ${summary.service}`,
    `development mode:  ${summary.development_mode_enabled ? 'on' : 'off'}`,
    `recovery mode:     ${summary.recovery_mode_enabled ? 'on (client resets recover unsynced changes)' : 'off (client resets discard unsynced changes)'}`,
  ];
  if (summary.client_max_offline_days !== undefined) lines.push(`max offline days:  ${summary.client_max_offline_days}`);
  if (summary.partition) {
    const { key, type, required, permissions } = summary.partition;
    lines.push(`partition key:     ${key ?? '(none)'} (${type ?? 'no type'}${required ? ', required' : ''})`);
    lines.push(`read permission:   ${JSON.stringify(permissions?.read ?? false)}`);
    lines.push(`write permission:  ${JSON.stringify(permissions?.write ?? false)}`);
  } else {
    lines.push(`queryable fields:  ${summary.queryable_fields?.join(', ') || '(none)'}`);
    if (summary.indexed_queryable_fields?.length) lines.push(`indexed:           ${summary.indexed_queryable_fields.join(', ')}`);
    for (const [type, fields] of Object.entries(summary.collection_queryable_fields ?? {})) lines.push(`  ${type}: ${fields.join(', ')}`);
    if (summary.asymmetric_tables?.length) lines.push(`asymmetric:        ${summary.asymmetric_tables.join(', ')}`);
  }
  return lines.join('\n');
}

/** Asks before a change every client pays for; without a terminal the caller must say --yes. */
async function confirmConsequence(ctx: CliContext, question: string, yes: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!ctx.output.interactive) throw new CliError(`${question.replace(/\?$/, '')}: pass --yes to confirm (no terminal to ask on)`, ExitCode.Usage);
  await ctx.output.confirm(question, false);
}

/** What a client reset does with the changes a device has not synced, under the app's recovery setting. */
function unsyncedChanges(sync: SyncDocument): string {
  return sync.is_recovery_mode_disabled ? 'recovery mode is off: unsynced changes on devices are lost' : 'recovery mode recovers unsynced changes';
}

/** Sets the sync state through the service configuration (the admin API's sync state machine decides) and reads it back. */
async function setSyncState(client: AdminClient, base: string, name: string, located: LocatedSync, state: 'enabled' | 'disabled'): Promise<SyncSummary> {
  await client.request('PATCH', `${base}/services/${located.serviceId}/config`, { json: { [located.mode === 'partition' ? 'sync' : 'flexible_sync']: { state } }, expect: [200] });
  return summarize(name, await locateSync(client, base));
}

function describeMigration(plan: Extract<PartitionMigration, { ok: true }>, output: string | undefined): string {
  const lines = ['Flexible sync configuration (sync/config.json):', JSON.stringify(plan.sync, null, 2), ''];
  lines.push('Roles of the synced collections (they replace the current roles):');
  for (const collection of plan.collections) {
    lines.push(`  ${collection.database}.${collection.collection} (was: ${collection.replacedRoles.join(', ') || 'no roles'})`);
    if (collection.roles.length === 0) lines.push('    (no role: no user can sync this collection)');
    for (const role of collection.roles) lines.push(`    ${JSON.stringify(role)}`);
  }
  if (plan.untranslated.length > 0) {
    lines.push('', 'Partition permissions that do not translate:');
    for (const item of plan.untranslated) {
      lines.push(`  ${item.permission}: ${JSON.stringify(item.expression)}`);
      lines.push(`    why: ${item.reason}`);
      if (item.suggestedDocumentFilter) lines.push(`    to try in a separate app: document_filters.${item.permission} ${JSON.stringify(item.suggestedDocumentFilter)}`);
    }
  }
  lines.push('', 'Notes:', ...plan.notes.map((note) => `  - ${note}`));
  if (output) lines.push('', `Wrote the flexible-sync app to ${output}`);
  return lines.join('\n');
}

/** The app of a local directory, in any layout `push` takes. */
async function localApp(directory: string): Promise<AppConfig> {
  const source = await appDirectory(resolve(directory));
  if (!(await exists(resolve(source, 'config.json'))) && !(await exists(resolve(source, 'realm_config.json'))) && !(await exists(resolve(source, 'root_config.json')))) {
    throw new CliError(`no app in ${resolve(directory)} (no config.json, realm_config.json or root_config.json)`, ExitCode.NotFound);
  }
  return (await readAppDirectory(source)).app;
}

/** The app as deployed, pulled as `tessera pull` pulls it. */
async function deployedApp(ctx: CliContext, remote: string): Promise<AppConfig> {
  const client = await ctx.client();
  const { app, groupId } = await ctx.resolveApp(client, remote);
  return readAppFiles(unzip((await client.request('GET', `/groups/${groupId}/apps/${app._id}/pull`)).bytes)).app;
}

/** `sync show|terminate|enable|clients|progress|migrate-plan`. */
export function registerSyncCommands(program: Command, context: () => CliContext): void {
  const sync = program.command('sync').description('show and change an app\'s sync (partition-based or flexible), list clients, plan a move to flexible sync');

  const remoteSync = async (ctx: CliContext, remote: string | undefined): Promise<{ client: AdminClient; base: string; name: string; located: LocatedSync | undefined }> => {
    const client = await ctx.client();
    const { app, groupId } = await ctx.resolveApp(client, remote ?? (await localAppId('.')));
    const base = `/groups/${groupId}/apps/${app._id}`;
    return { client, base, name: app.client_app_id, located: await locateSync(client, base) };
  };

  sync
    .command('show')
    .alias('status')
    .description('the sync mode, whether it is enabled or terminated, and its partition key or queryable fields')
    .option(...remoteOption)
    .action(async (options: { remote?: string }) => {
      const ctx = context();
      const { name, located } = await remoteSync(ctx, options.remote);
      const summary = summarize(name, located);
      ctx.output.result(summary, () => describeSummary(summary), 'Sync configuration');
    });

  sync
    .command('terminate')
    .description('stop sync: connected clients stop syncing now, and every client must reset when it is enabled again')
    .option(...remoteOption)
    .option(...yesOption)
    .action(async (options: { remote?: string; yes?: boolean }) => {
      const ctx = context();
      const { client, base, name, located } = await remoteSync(ctx, options.remote);
      if (!located) throw new CliError(`${name} has no sync configuration`, ExitCode.NotFound);
      if (!isEnabled(located.sync)) throw new CliError(`sync of ${name} is not enabled: nothing to terminate`, ExitCode.Conflict);
      await confirmConsequence(
        ctx,
        `Terminate ${located.mode === 'partition' ? 'partition-based' : 'flexible'} sync of ${name}? Connected clients stop syncing now; when sync is enabled again every client must reset (${unsyncedChanges(located.sync)})?`,
        options.yes,
      );
      ctx.output.result(await setSyncState(client, base, name, located, 'disabled'), `Terminated sync of ${name}. Clients cannot sync until it is enabled again; then every client resets.`, 'Terminated sync');
    });

  sync
    .command('enable')
    .description('enable sync with the configuration the app has; after a terminate, every client resets')
    .option(...remoteOption)
    .option(...yesOption)
    .action(async (options: { remote?: string; yes?: boolean }) => {
      const ctx = context();
      const { client, base, name, located } = await remoteSync(ctx, options.remote);
      if (!located) throw new CliError(`${name} has no sync configuration: push a sync/config.json first`, ExitCode.NotFound);
      if (isEnabled(located.sync)) {
        ctx.output.result(summarize(name, located), `Sync of ${name} is already enabled`, 'Sync already enabled');
        return;
      }
      const reEnable = located.sync.last_disabled !== undefined;
      if (reEnable) {
        await confirmConsequence(
          ctx,
          `Enable sync of ${name} again? Every client that synced before the terminate must reset (${unsyncedChanges(located.sync)})?`,
          options.yes,
        );
      }
      ctx.output.result(await setSyncState(client, base, name, located, 'enabled'), reEnable ? `Enabled sync of ${name} again: clients reset on their next connection.` : `Enabled sync of ${name}.`, 'Enabled sync');
    });

  sync
    .command('clients')
    .description('the clients connected now, on every sync-service replica')
    .option(...remoteOption)
    .action(async (options: { remote?: string }) => {
      const ctx = context();
      const { client, base } = await remoteSync(ctx, options.remote);
      const found = (await client.request<{ replicas: number; clients: { user_id: string; partitions: string[]; connected_at: string; replica: string }[]; truncated: boolean }>('GET', `${base}/sync/clients`)).body;
      ctx.output.result(found, () =>
        [
          found.clients.length ? table(['USER', 'SESSIONS', 'CONNECTED', 'REPLICA'], found.clients.map((c) => [c.user_id, c.partitions.join(', '), c.connected_at, c.replica])) : 'No connected clients',
          `${found.replicas} replica(s) answered${found.truncated ? '; the list is truncated' : ''}`,
        ].join('\n'),
        'Sync clients',
      );
    });

  sync
    .command('progress')
    .description('whether initial sync is complete per synced namespace, and whether clients are accepted')
    .option(...remoteOption)
    .action(async (options: { remote?: string }) => {
      const ctx = context();
      const { client, base } = await remoteSync(ctx, options.remote);
      const progress = (await client.request<{ progress: Record<string, { complete: boolean }>; accepting_clients: boolean }>('GET', `${base}/sync/progress`)).body;
      ctx.output.result(progress, () =>
        [
          `accepting clients: ${progress.accepting_clients ? 'yes' : 'no'}`,
          ...(Object.keys(progress.progress).length ? [table(['NAMESPACE', 'COMPLETE'], Object.entries(progress.progress).map(([namespace, p]) => [namespace, p.complete ? 'yes' : 'no']))] : []),
        ].join('\n'),
        'Sync progress',
      );
    });

  sync
    .command('migrate-plan')
    .description('for a partition-sync app: the flexible-sync configuration and roles that reproduce it, and what does not translate')
    .option('--local <directory>', 'the app directory (default: the current directory)', '.')
    .option('--remote <app id>', 'plan for the app deployed on the server instead of a local directory')
    .option('--output <directory>', 'write the flexible-sync app there (a new or empty directory)')
    .action(async (options: { local: string; remote?: string; output?: string }) => {
      const ctx = context();
      const output = options.output === undefined ? undefined : resolve(options.output);
      if (output && (await isNonEmptyDirectory(output))) throw new CliError(`directory ${output} is not empty: choose a new or empty --output`, ExitCode.Usage);
      const app = options.remote === undefined ? await localApp(options.local) : await deployedApp(ctx, options.remote);
      const plan = migratePartitionSync(app);
      if (!plan.ok) throw new CliError(`cannot plan a move to flexible sync: ${plan.reason}`, ExitCode.InvalidConfiguration);
      const violations = validateApp(plan.app);
      if (violations.length > 0) throw new CliError('the flexible-sync app would not be valid', ExitCode.InvalidConfiguration, { violations });
      if (output) await writeAppDirectory(plan.app, output);
      const { app: _app, ...printed } = plan;
      ctx.output.result({ ...printed, ...(output ? { output } : {}) }, () => describeMigration(plan, output), 'Sync migration');
    });
}
