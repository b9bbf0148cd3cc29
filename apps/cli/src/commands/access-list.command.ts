import { type Command, Option } from 'commander';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext } from '../context';
import { localAppId } from '../local-files';
import { realmCliLog } from '../realm-cli-log';
import { table } from './apps.command';
import { failedTargets, forEachTarget } from './each-target';
import { collectList } from './option-values';

interface AllowedIp {
  _id: string;
  address: string;
  comment?: string;
  includes_current?: boolean;
}

interface AppOption {
  app?: string;
  remote?: string;
}

/**
 * realm-cli's `accessList` (alias `access-list`): list, create, update and delete the IP addresses and CIDR
 * blocks client requests to the app may come from (admin API `security/access_list`).
 */
export function registerAccessListCommands(program: Command, context: () => CliContext): void {
  const accessList = program.command('accessList').alias('access-list').description("manage the app's IP access list (addresses and CIDR blocks client requests may come from)");
  const withApp = (command: Command): Command =>
    command.option('-a, --app <app id>', 'the app (client app id, name or _id; default: app_id in ./config.json)').option('--remote <app id>', 'the same as --app');
  const resolve = async (ctx: CliContext, options: AppOption) => {
    const client = await ctx.client();
    const { app, groupId } = await ctx.resolveApp(client, options.app ?? options.remote ?? (await localAppId('.')));
    return { client, path: `/groups/${groupId}/apps/${app._id}/security/access_list` };
  };
  const entries = async (ctx: CliContext, options: AppOption) => {
    const { client, path } = await resolve(ctx, options);
    const list = (await client.request<{ allowed_ips: AllowedIp[] }>('GET', path)).body.allowed_ips;
    return { client, path, list };
  };
  const find = (list: AllowedIp[], ip: string): AllowedIp => {
    const found = list.find((entry) => entry.address === ip);
    if (!found) throw new CliError(`unable to find allowed IP: ${ip}`, ExitCode.Usage);
    return found;
  };

  withApp(accessList.command('list').alias('ls').description('list the entries of the access list')).action(async (options: AppOption) => {
    const ctx = context();
    const { list } = await entries(ctx, options);
    ctx.output.result(
      list,
      () => (list.length ? table(['IP Address', 'Comment'], list.map((entry) => [entry.address, entry.comment ?? ''])) : 'No allowed IPs: every address may make client requests'),
      list.length
        ? realmCliLog.table(`Found ${list.length} allowed IP address(es) and/or CIDR block(s)`, ['IP Address', 'Comment'], list.map((entry) => ({ 'IP Address': entry.address, Comment: entry.comment })))
        : realmCliLog.text('No available allowed IP addresses and/or CIDR blocks to show'),
    );
  });

  withApp(accessList.command('create').description('add an IP address or CIDR block'))
    .option('--ip <address>', 'the IP address or CIDR block to add')
    .option('--comment <text>', 'a comment for the entry')
    .option('--use-current', 'add the address this command comes from')
    .option('--allow-all', 'allow every address (adds 0.0.0.0)')
    .action(async (options: AppOption & { ip?: string; comment?: string; useCurrent?: boolean; allowAll?: boolean }) => {
      const given = [options.ip !== undefined, options.useCurrent === true, options.allowAll === true].filter(Boolean).length;
      if (given !== 1) throw new CliError('give exactly one of --ip, --use-current and --allow-all: one IP address or CIDR block at a time', ExitCode.Usage);
      const ctx = context();
      const { client, path } = await resolve(ctx, options);
      const address = options.allowAll ? '0.0.0.0' : (options.ip ?? '');
      const created = (await client.request<AllowedIp>('POST', path, { json: { address, ...(options.comment ? { comment: options.comment } : {}), ...(options.useCurrent ? { use_current: true } : {}) }, expect: [201] })).body;
      ctx.output.result(created, `Successfully created allowed IP, id: ${created._id}`, realmCliLog.text(`Successfully created allowed IP, id: ${created._id}`));
    });

  withApp(accessList.command('update').description('change an entry'))
    .requiredOption('--ip <address>', 'the entry to change')
    .option('--new-ip <address>', 'its new IP address or CIDR block')
    .option('--comment <text>', 'its new comment')
    .action(async (options: AppOption & { ip: string; newIp?: string; comment?: string }) => {
      if (options.newIp === undefined && options.comment === undefined) throw new CliError('must set either --new-ip or --comment when updating an allowed IP address or CIDR block', ExitCode.Usage);
      const ctx = context();
      const { client, path, list } = await entries(ctx, options);
      const entry = find(list, options.ip);
      const updated = (await client.request<AllowedIp>('PATCH', `${path}/${entry._id}`, { json: { ...(options.newIp ? { address: options.newIp } : {}), ...(options.comment !== undefined ? { comment: options.comment } : {}) }, expect: [200] })).body;
      ctx.output.result(updated, 'Successfully updated allowed IP', realmCliLog.text('Successfully updated allowed IP'));
    });

  withApp(accessList.command('delete').description('remove entries'))
    .addOption(new Option('--ip <address...>', 'the entries to remove (repeatable or comma-separated); without it, pick them from a list (on a terminal)').argParser(collectList))
    .action(async (options: AppOption & { ip?: string[] }) => {
      const ctx = context();
      const { client, path, list } = await entries(ctx, options);
      let doomed: AllowedIp[] = [];
      if (options.ip?.length) {
        // realm-cli names every address it cannot find, and deletes nothing.
        const unknown = options.ip.filter((ip) => !list.some((entry) => entry.address === ip));
        if (unknown.length) throw new CliError(`unable to find allowed IP: ${unknown.join(', ')}`, ExitCode.Usage);
        doomed = options.ip.map((ip) => find(list, ip));
      } else if (list.length) {
        const picked = await ctx.output.select('Which IP Address(es) and/or CIDR block(s) would you like to delete?', list.map((entry) => entry.address), '--ip');
        doomed = picked.map((index) => list[index]);
      }
      if (doomed.length === 0) throw new CliError('no IP addresses or CIDR blocks to delete', ExitCode.Usage);
      const outcomes = await forEachTarget(doomed, (entry) => client.request('DELETE', `${path}/${entry._id}`, { expect: [204] }));
      const deleted = outcomes.filter((entry) => !entry.error).map((entry) => entry.target.address);
      const failed = outcomes.filter((entry) => entry.error).map((entry) => ({ ip: entry.target.address, error: entry.error?.message }));
      ctx.output.result(
        { deleted, ...(failed.length ? { failed } : {}) },
        () => [`Deleted ${deleted.length} allowed IP(s)`, ...failed.map((failure) => `Failed: ${failure.ip}: ${failure.error}`)].join('\n'),
        realmCliLog.table(
          `Deleted ${outcomes.length} IP address(es) and/or CIDR block(s)`,
          ['IP Address', 'Comment', 'Deleted', 'Details'],
          outcomes.map((entry) => ({ 'IP Address': entry.target.address, Comment: entry.target.comment, Deleted: entry.error === undefined, Details: entry.error?.message ?? '' })),
        ),
      );
      const failure = failedTargets(outcomes, 'deleted', 'allowed IP', (entry) => entry.address);
      if (failure) throw failure;
    });
}
