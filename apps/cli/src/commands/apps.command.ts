import { type Command, Option } from 'commander';
import type { CliContext } from '../context';
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
    .description('delete an app and everything it holds')
    .addOption(new Option('-a, --app <app id...>', 'the apps to delete (client app id, name or _id; repeatable or comma-separated)').argParser(collectList).makeOptionMandatory())
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (options: { app: string[]; yes?: boolean }) => {
      const ctx = context();
      const client = await ctx.client();
      const found = [];
      for (const reference of options.app) found.push(await ctx.resolveApp(client, reference));
      const ids = found.map(({ app }) => app.client_app_id);
      await ctx.output.confirm(`Delete ${ids.length === 1 ? `app ${ids[0]}` : `apps ${ids.join(', ')}`} and all their data?`, options.yes === true);
      for (const { app, groupId } of found) await client.request('DELETE', `/groups/${groupId}/apps/${app._id}`, { expect: [204] });
      // One app: the single value scripts already read; several: the list.
      ctx.output.result(
        { deleted: ids.length === 1 ? ids[0] : ids },
        ids.map((id) => `Deleted app ${id}`).join('\n'),
        // A failed delete ends the command with its error, so every row printed is a deleted app.
        realmCliLog.table(`Successfully deleted ${found.length}/${found.length} app(s)`, ['ID', 'Name', 'Deleted', 'Details'], found.map(({ app }) => ({ ID: app._id, Name: app.name, Deleted: true, Details: '' }))),
      );
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
