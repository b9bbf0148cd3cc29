import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext } from '../context';
import { localAppId } from '../local-files';
import { table } from './apps.command';

/** What the server takes per request (its MAX_IMPORT_BATCH); a larger listing goes in several. */
const BATCH = 1000;

interface ImportResult {
  _id?: string;
  index: number;
  status: 'created' | 'unchanged' | 'conflict' | 'invalid';
  error?: string;
}

/**
 * `users import`: the users of an App Services app (its admin API user listing, or a JSON export of it)
 * created with the same ids and identities. A re-import changes nothing; a user that conflicts with one
 * already here is reported and skipped, and the command then exits with 6 (conflict).
 */
export function registerUsersImport(users: Command, context: () => CliContext, remoteOption: readonly [string, string]): void {
  users
    .command('import')
    .description('import users exported from App Services (same ids and identities; email/password users must reset their password)')
    .option(...remoteOption)
    .requiredOption('--file <users.json>', "a JSON array of App Services users (the admin API's GET .../users)")
    .action(async (options: { remote?: string; file: string }) => {
      const ctx = context();
      let listing: unknown;
      try {
        listing = JSON.parse(await readFile(options.file, 'utf8'));
      } catch (error) {
        throw new CliError(`cannot read --file ${options.file}: ${error instanceof Error ? error.message : String(error)}`, ExitCode.Usage);
      }
      const items = Array.isArray(listing) ? listing : (listing as { users?: unknown } | null)?.users;
      if (!Array.isArray(items)) throw new CliError(`--file ${options.file}: expected a JSON array of users (or an object with a "users" array)`, ExitCode.Usage);
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      const results: ImportResult[] = [];
      for (let start = 0; start < items.length; start += BATCH) {
        const answer = (await client.request<{ results: ImportResult[] }>('POST', `/groups/${groupId}/apps/${app._id}/users/import`, { json: items.slice(start, start + BATCH), expect: [200] })).body;
        results.push(...answer.results.map((result) => ({ ...result, index: result.index + start })));
      }
      const count = (status: ImportResult['status']): number => results.filter((result) => result.status === status).length;
      const summary = { created: count('created'), unchanged: count('unchanged'), conflicts: count('conflict'), invalid: count('invalid'), results };
      const problems = results.filter((result) => result.status === 'conflict' || result.status === 'invalid');
      ctx.output.result(summary, () =>
        [
          `Imported ${summary.created} user(s); ${summary.unchanged} already here; ${summary.conflicts} conflict(s); ${summary.invalid} invalid`,
          ...(problems.length ? [table(['#', 'ID', 'Status', 'Reason'], problems.map((problem) => [String(problem.index), problem._id ?? '', problem.status, problem.error ?? '']))] : []),
        ].join('\n'),
        'Imported users',
      );
      if (problems.length) throw new CliError(`${problems.length} user(s) were not imported (listed above)`, ExitCode.Conflict);
    });
}
