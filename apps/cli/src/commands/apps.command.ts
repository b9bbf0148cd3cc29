import type { Command } from 'commander';
import type { CliContext, RemoteApp } from '../context';
import { registerAppCreateCommand } from './app-create.command';
import { registerAppInitCommand } from './app-init.command';

/** `apps create`, `apps init`, `apps list`, `apps delete`, `apps describe`, `apps templates`. */
export function registerAppsCommands(program: Command, context: () => CliContext): void {
  const apps = program.command('apps').description('create, initialize, list and delete apps');

  registerAppCreateCommand(apps, context);
  registerAppInitCommand(apps, context);

  apps
    .command('list')
    .alias('ls')
    .description('list the apps of your project')
    .action(async () => {
      const ctx = context();
      const client = await ctx.client();
      const groupId = await ctx.groupId(client);
      const list = (await client.request<RemoteApp[]>('GET', `/groups/${groupId}/apps`)).body;
      ctx.output.result(list, () => (list.length ? table(['App ID', 'Name', '_id'], list.map((app) => [app.client_app_id, app.name, app._id])) : 'No apps'));
    });

  apps
    .command('delete')
    .description('delete an app and everything it holds')
    .requiredOption('-a, --app <app id>', 'the app to delete (client app id, name or _id)')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (options: { app: string; yes?: boolean }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.app);
      await ctx.output.confirm(`Delete app ${app.client_app_id} and all its data?`, options.yes === true);
      await client.request('DELETE', `/groups/${groupId}/apps/${app._id}`, { expect: [204] });
      ctx.output.result({ deleted: app.client_app_id }, `Deleted app ${app.client_app_id}`);
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
      );
    });

  apps
    .command('templates')
    .description('list the template apps')
    .action(async () => {
      const ctx = context();
      const client = await ctx.client();
      const templates = (await client.request<{ id: string; name: string; client: string }[]>('GET', '/templates')).body;
      ctx.output.result(templates, () => table(['ID', 'Name', 'Client'], templates.map((template) => [template.id, template.name, template.client])));
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
