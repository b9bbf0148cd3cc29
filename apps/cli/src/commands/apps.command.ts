import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext, RemoteApp } from '../context';
import { isNonEmptyDirectory, replaceLocalFiles, unzip } from '../local-files';

interface CreateOptions {
  name?: string;
  template?: string;
  local?: string;
  cluster?: string;
  location?: string;
  deploymentModel?: string;
  yes?: boolean;
}

/** `apps create`, `apps list`, `apps delete`. */
export function registerAppsCommands(program: Command, context: () => CliContext): void {
  const apps = program.command('apps').description('create, list and delete apps');

  apps
    .command('create')
    .description('create an app on the server and write it to a local directory')
    .requiredOption('-n, --name <name>', 'app name: 1 to 32 ASCII letters, digits, underscores or hyphens')
    .option('--template <template id>', 'start from a template app (see `tessera apps templates`)')
    .option('--local <directory>', 'where to write the app (default: ./<name>)')
    .option('--cluster <cluster name>', 'link a cluster as the data source "mongodb-atlas"')
    .option('--location <location>', 'deployment location')
    .option('--deployment-model <model>', 'deployment model')
    .option('-y, --yes', 'replace the local directory if it is not empty')
    .action(async (options: CreateOptions) => {
      const ctx = context();
      const client = await ctx.client();
      const groupId = await ctx.groupId(client);
      const directory = resolve(options.local ?? options.name ?? '.');
      if ((await isNonEmptyDirectory(directory)) && !options.yes) throw new CliError(`directory ${directory} is not empty: choose another --local or pass --yes to replace it`, ExitCode.Usage);
      const body = {
        name: options.name,
        ...(options.template ? { template_id: options.template } : {}),
        ...(options.cluster ? { data_source: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: options.cluster, readPreference: 'primary', wireProtocolEnabled: false } } } : {}),
        ...(options.location ? { location: options.location } : {}),
        ...(options.deploymentModel ? { deployment_model: options.deploymentModel } : {}),
      };
      const app = (await client.request<RemoteApp>('POST', `/groups/${groupId}/apps`, { json: body, expect: [201] })).body;
      const backend = unzip((await client.request('GET', `/groups/${groupId}/apps/${app._id}/pull`, { progress: 'Downloading app' })).bytes);
      if (options.template) {
        await replaceLocalFiles(join(directory, 'backend'), backend);
        const reply = await client.request('GET', `/groups/${groupId}/apps/${app._id}/templates/${encodeURIComponent(options.template)}/client`, { expect: [200, 204], progress: 'Downloading client' });
        if (reply.status === 200) await replaceLocalFiles(join(directory, 'frontend'), unzip(reply.bytes));
      } else {
        await replaceLocalFiles(directory, backend);
      }
      ctx.output.result({ ...app, local_path: directory }, `Created app ${app.name} (app id ${app.client_app_id}) in ${directory}`);
    });

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
