import { type Command, Option } from 'commander';
import { CliError } from '../cli-error';
import type { CliContext, RemoteApp } from '../context';
import { failedTargets, forEachTarget, type TargetOutcome } from './each-target';
import { realmCliLog } from '../realm-cli-log';
import { registerAppCreateCommand } from './app-create.command';
import { registerAppInitCommand } from './app-init.command';
import { collectList } from './option-values';

/** `apps create`, `apps init`, `apps list`, `apps delete`, `apps describe`, `apps templates`. */
export function registerAppsCommands(program: Command, context: () => CliContext): void {
  const apps = program.command('apps').description('create, initialize, list and delete apps');

  registerAppCreateCommand(apps, context);
  registerAppInitCommand(apps, context);

  apps
    .command('list')
    .alias('ls')
    .description('list the apps of your project')
    .option('-a, --app <app id>', 'only apps whose client app id starts with this (realm-cli\'s filter)')
    .action(async (options: { app?: string }) => {
      const ctx = context();
      const client = await ctx.client();
      const groupId = await ctx.groupId(client);
      const list = (await ctx.apps(client, groupId)).filter((app) => options.app === undefined || app.client_app_id.startsWith(options.app.toLowerCase()));
      ctx.output.result(
        list,
        () => (list.length ? table(['App ID', 'Name', '_id'], list.map((app) => [app.client_app_id, app.name, app._id])) : 'No apps'),
        // realm-cli's rows: each app's Option(), "<client app id> (<group id>)".
        list.length ? realmCliLog.list(`Found ${list.length} apps`, list.map((app) => `${app.client_app_id} (${app.group_id})`)) : realmCliLog.text('No available apps to show'),
      );
    });

  apps
    .command('delete')
    .description('delete apps and everything they hold')
    .addOption(new Option('-a, --app <app id...>', 'the apps to delete (client app id, name or _id; repeatable or comma-separated); without it, pick them from a list (on a terminal)').argParser(collectList))
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (options: { app?: string[]; yes?: boolean }) => {
      const ctx = context();
      const client = await ctx.client();
      const groupId = await ctx.groupId(client);
      let found: RemoteApp[] = [];
      const missing: TargetOutcome<string>[] = [];
      if (options.app?.length) {
        for (const reference of options.app) {
          try {
            found.push((await ctx.resolveApp(client, reference)).app);
          } catch (error) {
            if (!(error instanceof CliError)) throw error;
            missing.push({ target: reference, error });
          }
        }
        // realm-cli's warning: the apps it could not find are named, and the others deleted.
        if (missing.length) {
          const warning = `Unable to delete certain apps because they were not found: ${missing.map((entry) => entry.target).join(', ')}`;
          ctx.output.info(`Warning: ${warning}`);
          ctx.output.logs([realmCliLog.warning(warning)]);
        }
        if (found.length) await ctx.output.confirm(`Delete ${found.length === 1 ? `app ${found[0].client_app_id}` : `apps ${found.map((app) => app.client_app_id).join(', ')}`} and all their data?`, options.yes === true);
      } else {
        // realm-cli's multi-select of the project's apps, as "<client app id> (<group id>)": the selection is the answer.
        const all = await ctx.apps(client, groupId);
        const picked = all.length ? await ctx.output.select('Select App(s)', all.map((app) => `${app.client_app_id} (${app.group_id})`), '-a, --app') : [];
        found = picked.map((index) => all[index]);
      }
      if (found.length === 0 && missing.length === 0) {
        ctx.output.result({ deleted: [] }, 'No apps to delete', realmCliLog.text('No apps to delete'));
        return;
      }
      const outcomes = await forEachTarget(found, (app) => client.request('DELETE', `/groups/${app.group_id}/apps/${app._id}`, { expect: [204] }));
      const ids = outcomes.filter((entry) => !entry.error).map((entry) => entry.target.client_app_id);
      const failed = [...missing.map((entry) => ({ app: entry.target, error: entry.error?.message })), ...outcomes.filter((entry) => entry.error).map((entry) => ({ app: entry.target.client_app_id, error: entry.error?.message }))];
      ctx.output.result(
        // One app: the single value scripts already read; several: the list.
        { deleted: options.app?.length === 1 && ids.length === 1 ? ids[0] : ids, ...(failed.length ? { failed } : {}) },
        () => [...ids.map((id) => `Deleted app ${id}`), ...failed.map((failure) => `Failed to delete app ${failure.app}: ${failure.error}`)].join('\n'),
        realmCliLog.table(
          `Successfully deleted ${ids.length}/${found.length} app(s)`,
          ['ID', 'Name', 'Deleted', 'Details'],
          outcomes.map((entry) => ({ ID: entry.target._id, Name: entry.target.name, Deleted: entry.error === undefined, Details: entry.error?.message ?? '' })),
        ),
      );
      const failure = failedTargets<string>([...missing, ...outcomes.map((entry) => ({ target: entry.target.client_app_id, ...(entry.error ? { error: entry.error } : {}) }))], 'deleted', 'app', (app) => app);
      if (failure) throw failure;
    });

  apps
    .command('describe')
    .description("show an app's services, functions, providers, values and sync state")
    .requiredOption('-a, --app <app id>', 'the app (client app id, name or _id)')
    .action(async (options: { app: string }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.app);
      const description = (await client.request<Description>('GET', `/groups/${groupId}/apps/${app._id}/description`)).body;
      ctx.output.result(description, () =>
        [
          `App ID: ${description.client_app_id}  Name: ${description.name}`,
          `Data sources: ${description.data_sources.map((source) => `${source.name} (${source.type}: ${source.data_source})`).join(', ') || 'none'}`,
          `Services: ${description.services.map((service) => `${service.name} (${service.type})`).join(', ') || 'none'}`,
          `Auth providers: ${description.auth_providers.map((provider) => `${provider.name}${provider.enabled ? '' : ' (disabled)'}`).join(', ') || 'none'}`,
          `Functions: ${description.functions.map((fn) => fn.name).join(', ') || 'none'}`,
          `Values: ${description.values.join(', ') || 'none'}`,
          `Triggers: ${description.event_subscription.map((trigger) => `${trigger.name}${trigger.enabled ? '' : ' (disabled)'}`).join(', ') || 'none'}`,
          `Sync: ${description.sync.state || 'off'}${description.sync.partition_key ? ` (partition key ${description.sync.partition_key})` : ''}`,
        ].join('\n'),
        realmCliLog.doc('App description', description),
      );
    });

  apps
    .command('templates')
    .description('list the template apps')
    .action(async () => {
      const ctx = context();
      const client = await ctx.client();
      const templates = (await client.request<{ id: string; name: string; client: string }[]>('GET', '/templates')).body;
      ctx.output.result(templates, () => table(['ID', 'Name', 'Client'], templates.map((template) => [template.id, template.name, template.client])), 'Templates');
    });
}

interface Description {
  client_app_id: string;
  name: string;
  data_sources: { name: string; type: string; data_source: string }[];
  services: { name: string; type: string }[];
  auth_providers: { name: string; enabled: boolean }[];
  functions: { name: string }[];
  values: string[];
  event_subscription: { name: string; enabled: boolean }[];
  sync: { state: string; partition_key?: string };
}

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]): string => cells.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
