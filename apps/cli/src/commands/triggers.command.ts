import type { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext } from '../context';
import { localAppId } from '../local-files';
import { table } from './apps.command';

interface TriggerDocument {
  _id: string;
  name: string;
  type: string;
  disabled: boolean;
  error?: string;
  last_modified?: number;
}

const remoteOption = ['--remote <app id>', 'the app (client app id, name or _id; default: app_id in ./config.json)'] as const;

/** What a trigger is doing now, as the App Services UI said it. */
function status(trigger: TriggerDocument): string {
  if (trigger.error) return 'suspended';
  return trigger.disabled ? 'disabled' : 'enabled';
}

/** `triggers list`, `triggers resume <name or id> [--from-now]`. */
export function registerTriggerCommands(program: Command, context: () => CliContext): void {
  const triggers = program.command('triggers').description('list triggers and resume suspended ones');
  triggers
    .command('list')
    .description('list the triggers with their status and the error of a suspended one')
    .option(...remoteOption)
    .action(async (options: { remote?: string }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      const found = (await client.request<TriggerDocument[]>('GET', `/groups/${groupId}/apps/${app._id}/triggers`)).body;
      ctx.output.result(
        found.map((trigger) => ({ ...trigger, status: status(trigger) })),
        () => table(['NAME', 'TYPE', 'STATUS', 'ERROR'], found.map((trigger) => [trigger.name, trigger.type, status(trigger), trigger.error ?? ''])),
        'Triggers',
      );
    });
  triggers
    .command('resume <trigger>')
    .description('resume a suspended database trigger from the change that failed, or from now')
    .option(...remoteOption)
    .option('--from-now', 'skip the changes made while it was suspended (the admin API\'s disable_token)')
    .action(async (name: string, options: { remote?: string; fromNow?: boolean }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      const all = (await client.request<TriggerDocument[]>('GET', `/groups/${groupId}/apps/${app._id}/triggers`)).body;
      const trigger = all.find((candidate) => candidate.name === name || candidate._id === name);
      if (!trigger) throw new CliError(`trigger not found: '${name}'`, ExitCode.NotFound);
      await client.request('PUT', `/groups/${groupId}/apps/${app._id}/triggers/${trigger._id}/resume`, { json: { disable_token: options.fromNow === true }, expect: [204] });
      ctx.output.result({ name: trigger.name, resumed: true, from: options.fromNow ? 'now' : 'position' }, `resumed trigger ${trigger.name} ${options.fromNow ? 'from now' : 'from the change that failed'}`, 'Resumed trigger');
    });
}
