import { type Command, Option } from 'commander';
import type { AdminClient } from '../admin-client';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext } from '../context';
import { relaxedEjson } from '../ejson-output';
import { localAppId } from '../local-files';
import { cellText, goDuration, goUtcString, logsDate, PROVIDER_DISPLAY, realmCliLog, type RealmCliLog } from '../realm-cli-log';
import { table } from './apps.command';
import { failedFirst, failedTargets, forEachTarget } from './each-target';
import { collectList } from './option-values';
import { registerUsersImport } from './users-import.command';

interface LogEntry {
  _id: string;
  type: string;
  messages?: string[];
  started: string;
  completed?: string;
  error?: string;
  error_code?: string;
  function_name?: string;
  [field: string]: unknown;
}

const remoteOption = ['--remote <app id>', 'the app (client app id, name or _id; default: app_id in ./config.json)'] as const;

/** A decimal number as Go's strconv reads one (realm-cli's int and float arguments). */
const NUMBER_ARGUMENT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * `function run`'s arguments: one per `--args`, read as realm-cli reads them (a JSON object or array is
 * parsed, a number is a number, anything else a string); a single `--args` holding a JSON array is the
 * whole argument list (Tessera's own form). Text that opens like JSON but does not parse is refused
 * rather than passed on as a string.
 */
export function functionArguments(values: readonly string[]): unknown[] {
  const parsed = values.map((text) => {
    const trimmed = text.trim();
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      try {
        return JSON.parse(trimmed) as unknown;
      } catch {
        throw new CliError(`--args ${text} is not valid JSON (one --args per argument, e.g. --args 2 --args '{"a": 1}', or all of them as a JSON array)`, ExitCode.Usage);
      }
    }
    return NUMBER_ARGUMENT.test(trimmed) ? Number(trimmed) : text;
  });
  return values.length === 1 && Array.isArray(parsed[0]) ? parsed[0] : parsed;
}

/** `function run`, `logs list`, `secrets ...`, `users ...`. */
export function registerManageCommands(program: Command, context: () => CliContext): void {
  const fn = program.command('function').description('work with functions');
  fn.command('run')
    .description('run a function on the server')
    .option(...remoteOption)
    .requiredOption('--name <function name>', 'the function to run')
    .option('--args <arg>', 'one argument per --args, as realm-cli takes them (JSON, a number, else a string); a single JSON array gives them all', (value: string, list: string[]) => [...list, value], [] as string[])
    .option('--user <user id>', 'run as this app user instead of the system user')
    .action(async (options: { remote?: string; name: string; args: string[]; user?: string }) => {
      const ctx = context();
      const args = functionArguments(options.args);
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      const query = options.user ? `user_id=${encodeURIComponent(options.user)}` : 'run_as_system=true';
      const answer = (await client.request<{ result: unknown; logs?: string[] | null; error_logs?: string[] | null }>('POST', `/groups/${groupId}/apps/${app._id}/debug/execute_function?${query}`, { json: { name: options.name, arguments: args }, expect: [200] })).body;
      const result = { ...answer, result: relaxedEjson(answer.result) };
      ctx.output.result(
        result,
        () => [...(result.logs ?? []).map((line) => `log: ${line}`), `result: ${JSON.stringify(result.result)}`].join('\n'),
        () => [
          // realm-cli passes the whole list of logs as the list's one item, which it prints as Go prints a
          // []string: "[first second]". Its scripts read that one item, so it is kept.
          ...(result.logs != null ? [realmCliLog.list('Logs', [result.logs])] : []),
          ...(result.error_logs != null ? [realmCliLog.doc('Error Logs', result.error_logs)] : []),
          realmCliLog.doc('Result', result.result),
        ],
      );
    });

  const logs = program.command('logs').description('read app logs');
  logs
    .command('list')
    .description('list recent log entries, newest last')
    .option(...remoteOption)
    .addOption(new Option('--type <types...>', 'only these types (FUNCTION, TRIGGER, AUTH, ...; repeatable or comma-separated)').argParser(collectList))
    .option('--errors', 'only entries with an error')
    .option('--start <date>', 'entries since this date (RFC 3339)')
    .option('--end <date>', 'entries until this date (RFC 3339)')
    .option('--limit <n>', 'at most this many entries', '100')
    .option('--tail', 'keep watching and print new entries as they come (Ctrl-C to stop)')
    .option('--poll-interval <ms>', 'how often --tail asks the server', '1000')
    .action(async (options: { remote?: string; type?: string[]; errors?: boolean; start?: string; end?: string; limit: string; tail?: boolean; pollInterval: string }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      const query = new URLSearchParams({ limit: options.limit });
      if (options.type?.length) query.set('type', options.type.join(','));
      if (options.errors) query.set('errors_only', 'true');
      if (options.start) query.set('start_date', options.start);
      if (options.end) query.set('end_date', options.end);
      const fetchLogs = async (): Promise<LogEntry[]> => (await client.request<{ logs: LogEntry[] }>('GET', `/groups/${groupId}/apps/${app._id}/logs?${query.toString()}`)).body.logs.reverse();
      const seen = new Set<string>();
      const print = (entries: LogEntry[]): void => {
        const fresh = entries.filter((entry) => !seen.has(entry._id));
        for (const entry of fresh) seen.add(entry._id);
        if (ctx.output.format === 'realm-cli') {
          ctx.output.logs(fresh.map(logEntryLog));
          return;
        }
        if (ctx.output.json) {
          if (options.tail) for (const entry of fresh) ctx.output.line(JSON.stringify(entry));
          else ctx.output.result(fresh, '', 'Logs');
          return;
        }
        for (const entry of fresh) ctx.output.line(formatLog(entry));
      };
      print(await fetchLogs());
      if (!options.tail) return;
      const interval = Math.max(100, Number(options.pollInterval) || 1000);
      for (;;) {
        await new Promise((wake) => setTimeout(wake, interval));
        print(await fetchLogs());
      }
    });

  const secrets = program.command('secrets').description('manage app secrets (values are never shown)');
  secrets
    .command('list')
    .option(...remoteOption)
    .action(async (options: { remote?: string }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      const list = (await client.request<{ _id: string; name: string }[]>('GET', `/groups/${groupId}/apps/${app._id}/secrets`)).body;
      ctx.output.result(
        list,
        () => (list.length ? table(['Name', 'ID'], list.map((secret) => [secret.name, secret._id])) : 'No secrets'),
        list.length ? realmCliLog.table(`Found ${list.length} secrets`, ['ID', 'Name'], list.map((secret) => ({ ID: secret._id, Name: secret.name }))) : realmCliLog.text('No available secrets to show'),
      );
    });
  secrets
    .command('create')
    .option(...remoteOption)
    .requiredOption('-n, --name <name>', 'secret name')
    .requiredOption('-v, --value <value>', 'secret value')
    .action(async (options: { remote?: string; name: string; value: string }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      const created = (await client.request<{ _id: string; name: string }>('POST', `/groups/${groupId}/apps/${app._id}/secrets`, { json: { name: options.name, value: options.value }, expect: [201] })).body;
      ctx.output.result(created, `Created secret ${created.name} (${created._id})`, realmCliLog.text(`Successfully created secret, id: ${created._id}`));
    });
  secrets
    .command('update')
    .option(...remoteOption)
    .requiredOption('-s, --secret <name or id>', 'the secret to change')
    .option('-n, --name <name>', 'new name')
    .requiredOption('-v, --value <value>', 'new value')
    .action(async (options: { remote?: string; secret: string; name?: string; value: string }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      await client.request('PUT', `/groups/${groupId}/apps/${app._id}/secrets/${encodeURIComponent(options.secret)}`, { json: { name: options.name ?? options.secret, value: options.value }, expect: [204] });
      ctx.output.result({ updated: options.secret }, `Updated secret ${options.secret}`, realmCliLog.text('Successfully updated secret'));
    });
  secrets
    .command('delete')
    .option(...remoteOption)
    .addOption(new Option('-s, --secret <name or id...>', 'the secrets to delete (repeatable or comma-separated); without it, pick them from a list (on a terminal)').argParser(collectList))
    .action(async (options: { remote?: string; secret?: string[] }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      const known = (await client.request<{ _id: string; name: string }[]>('GET', `/groups/${groupId}/apps/${app._id}/secrets`)).body;
      let chosen: { _id: string; name: string }[];
      if (options.secret?.length) {
        // A name or id the app does not have is that target's failure, reported with the others (by the server).
        chosen = options.secret.map((reference) => known.find((entry) => entry.name === reference) ?? known.find((entry) => entry._id === reference) ?? { _id: reference, name: reference });
      } else {
        const picked = known.length ? await ctx.output.select('Which secret(s) would you like to delete?', known.map((secret) => `${secret._id} - ${secret.name}`), '-s, --secret') : [];
        chosen = picked.map((index) => known[index]);
      }
      if (chosen.length === 0) {
        ctx.output.result({ deleted: [] }, 'No secrets to delete', realmCliLog.text('No secrets to delete'));
        return;
      }
      const outcomes = await forEachTarget(chosen, (secret) => client.request('DELETE', `/groups/${groupId}/apps/${app._id}/secrets/${encodeURIComponent(secret._id)}`, { expect: [204] }));
      const deleted = outcomes.filter((entry) => !entry.error).map((entry) => entry.target.name);
      const failed = outcomes.filter((entry) => entry.error).map((entry) => ({ secret: entry.target.name, error: entry.error?.message }));
      ctx.output.result(
        { deleted, ...(failed.length ? { failed } : {}) },
        () => [`Deleted ${deleted.length} secret(s)`, ...failed.map((failure) => `Failed: ${failure.secret}: ${failure.error}`)].join('\n'),
        () =>
          realmCliLog.table(
            `Deleted ${outcomes.length} secret(s)`,
            ['ID', 'Name', 'Deleted', 'Details'],
            failedFirst(outcomes).map((entry) => ({ ID: entry.target._id, Name: entry.target.name, Deleted: entry.error === undefined, Details: entry.error?.message ?? '' })),
          ),
      );
      const failure = failedTargets(outcomes, 'deleted', 'secret', (secret) => secret.name);
      if (failure) throw failure;
    });

  const users = program.command('users').description('manage app users');
  const userRows = (list: UserView[]): string =>
    list.length ? table(['ID', 'Type', 'Providers', 'Email', 'Disabled'], list.map((user) => [user._id, user.type, user.identities.map((identity) => identity.provider_type).join(','), typeof user.data['email'] === 'string' ? user.data['email'] : '', String(user.disabled)])) : 'No users';
  users
    .command('list')
    .option(...remoteOption)
    .addOption(userOption('only these users (realm-cli\'s filter by ID)'))
    .option('--state <state>', 'only enabled or disabled users')
    .addOption(new Option('--provider-type <types...>', 'only users with an identity of these provider types').argParser(collectList))
    .addOption(providerOption())
    .option('--pending', 'list the pending (unconfirmed) email/password registrations instead')
    .action(async (options: UserFilterOptions & { user?: string[] }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      if (options.pending) {
        const pending = (await pendingUsers(client, `/groups/${groupId}/apps/${app._id}`)).filter((user) => !options.user?.length || options.user.includes(user._id));
        ctx.output.result(
          pending,
          () => (pending.length ? table(['ID', 'Email'], pending.map((user) => [user._id, user.login_ids.map((login) => login.id).join(',')])) : 'No pending users'),
          pending.length ? pendingUserTable(pending, ['Enabled', 'Last Authenticated'], () => ({ Enabled: false, 'Last Authenticated': 'n/a' })) : realmCliLog.text('No available users to show'),
        );
        return;
      }
      const list = (await findUsers(client, `/groups/${groupId}/apps/${app._id}`, options)).filter((user) => !options.user?.length || options.user.includes(user._id));
      ctx.output.result(list, () => userRows(list), () => {
        if (!list.length) return realmCliLog.text('No available users to show');
        const recentFirst = [...list].sort((a, b) => (b.last_authentication_date ?? 0) - (a.last_authentication_date ?? 0));
        return userTables(recentFirst, ['Enabled', 'Last Authenticated'], (user) => ({ Enabled: !user.disabled, 'Last Authenticated': user.last_authentication_date ? goUtcString(user.last_authentication_date) : 'n/a' }));
      });
    });
  users
    .command('create')
    .description('create a confirmed email/password user, or an API key user (--type api-key --name)')
    .option(...remoteOption)
    .option('--type <type>', 'user type: email or api-key (as realm-cli)', 'email')
    .option('--email <email>', 'the email the user logs in with (--type email)')
    .option('--password <password>', 'the password, 6 to 128 characters (--type email)')
    .option('--name <name>', 'the API key name (--type api-key)')
    .action(async (options: { remote?: string; type: string; email?: string; password?: string; name?: string }) => {
      const ctx = context();
      if (options.type !== 'email' && options.type !== 'api-key') throw new CliError(`--type must be email or api-key, not '${options.type}'`, ExitCode.Usage);
      if (options.type === 'api-key' && !options.name) throw new CliError('--type api-key needs --name', ExitCode.Usage);
      if (options.type === 'email' && (!options.email || !options.password)) throw new CliError('--type email needs --email and --password', ExitCode.Usage);
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      if (options.type === 'api-key') {
        const key = (await client.request<{ _id: string; key: string; name: string; disabled: boolean }>('POST', `/groups/${groupId}/apps/${app._id}/api_keys`, { json: { name: options.name }, expect: [201] })).body;
        // realm-cli's output: the key is shown once, here.
        const created = { id: key._id, enabled: !key.disabled, name: key.name, key: key.key };
        ctx.output.result(created, `Successfully created API Key ${key.name} (${key._id})\nkey: ${key.key}`, realmCliLog.doc('Successfully created API Key', created));
        return;
      }
      const user = (await client.request<UserView>('POST', `/groups/${groupId}/apps/${app._id}/users`, { json: { email: options.email, password: options.password }, expect: [201] })).body;
      ctx.output.result(user, `Created user ${options.email} (${user._id})`, realmCliLog.doc('Successfully created user', { id: user._id, enabled: !user.disabled, email: user.data['email'] ?? null, type: user.type }));
    });
  registerUsersImport(users, context, remoteOption);
  const done = { delete: 'Deleted', disable: 'Disabled', enable: 'Enabled', revoke: 'Ended the sessions of' } as const;
  // realm-cli's tables of what was done: its column and cell for a user acted on, and its text when there was none.
  const outcome = {
    delete: { header: 'Deleted', cell: true, none: 'No users to delete' },
    disable: { header: 'Enabled', cell: false, none: 'No users to disable' },
    enable: { header: 'Enabled', cell: true, none: 'No users to enable' },
    revoke: { header: 'Session Revoked', cell: true, none: 'No users to revoke sessions for' },
  } as const;
  for (const [name, description, method, suffix, filters] of [
    ['delete', 'delete users and all they own', 'DELETE', '', true],
    ['disable', 'disable users: they are logged out and cannot log in', 'PUT', '/disable', false],
    ['enable', 'enable disabled users', 'PUT', '/enable', false],
    ['revoke', "end users' sessions (log them out everywhere)", 'PUT', '/logout', true],
  ] as const) {
    const command = users
      .command(name)
      .description(description)
      .option(...remoteOption)
      .addOption(userOption('the users (repeatable or comma-separated); without it, pick them from a list (on a terminal)'));
    // realm-cli's filters on delete and revoke: of the --user users (or those listed to pick from), only those that match.
    if (filters) {
      command
        .option('--state <state>', 'only those of the users that are enabled, or disabled')
        .addOption(providerOption())
        .option('--pending', name === 'delete' ? 'the users are pending (unconfirmed) registrations: delete those' : 'the users are pending registrations, which have no sessions: nothing is revoked');
    }
    command.action(async (options: UserFilterOptions & { user?: string[] }) => {
      const ctx = context();
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId('.')));
      const appPath = `/groups/${groupId}/apps/${app._id}`;
      const named = options.user ?? [];
      // realm-cli's multi-select, when no user was named: "<provider> - <email or name> - <id>" per user.
      const pick = async <T extends { _id: string }>(candidates: T[], option: (user: T) => string): Promise<T[]> => {
        if (named.length > 0 || candidates.length === 0) return candidates;
        const picked = await ctx.output.select(`Which user(s) would you like to ${name}?`, candidates.map(option), '-u, --user');
        return picked.map((index) => candidates[index]);
      };
      if (options.pending) {
        const all = await pendingUsers(client, appPath);
        const found = named.length ? all.filter((user) => named.includes(user._id)) : all;
        if (named.length && found.length === 0) throw new CliError('no users found: none of the --user users is a pending registration', ExitCode.NotFound);
        const pending = await pick(found, (user) => `User/Password - ${user.login_ids.map((login) => login.id).join(',')} - ${user._id}`);
        const outcomes = name === 'delete' ? await forEachTarget(pending, async (user) => { for (const login of user.login_ids) await client.request('DELETE', `${appPath}/user_registrations/by_email/${encodeURIComponent(login.id)}`, { expect: [204] }); }) : [];
        const acted = outcomes.filter((entry) => !entry.error).map((entry) => entry.target._id);
        const failed = outcomes.filter((entry) => entry.error).map((entry) => ({ user: entry.target._id, error: entry.error?.message }));
        ctx.output.result(
          { [name]: acted, ...(failed.length ? { failed } : {}) },
          () => [`${done[name]} ${acted.length} pending user(s)`, ...failed.map((failure) => `Failed: ${failure.user}: ${failure.error}`)].join('\n'),
          outcomes.length ? pendingUserTable(failedFirst(outcomes).map((entry) => entry.target), [outcome[name].header, 'Details'], (user) => {
            const error = outcomes.find((entry) => entry.target === user)?.error;
            return { [outcome[name].header]: error === undefined, Details: error?.message ?? '' };
          }) : realmCliLog.text(outcome[name].none),
        );
        const failure = failedTargets(outcomes, name === 'delete' ? 'deleted' : name === 'revoke' ? 'revoked' : `${name}d`, 'user', (user) => user._id);
        if (failure) throw failure;
        return;
      }
      // The users named, as the server knows them (realm-cli's tables show each user's type, email or name, read
      // before they are deleted); without names, the candidates to pick from.
      const filtered = options.state !== undefined || (options.provider?.length ?? 0) > 0 || (options.providerType?.length ?? 0) > 0;
      const known = named.length === 0 || filtered || ctx.output.format === 'realm-cli' ? await findUsers(client, appPath, named.length ? (filtered ? options : {}) : options) : [];
      let chosen: UserView[];
      if (named.length) {
        chosen = named.filter((id) => !filtered || known.some((user) => user._id === id)).map((id) => known.find((user) => user._id === id) ?? { _id: id, type: '', disabled: false, identities: [], data: {} });
        if (chosen.length === 0) throw new CliError('no users found: none of the --user users matches --state/--provider', ExitCode.NotFound);
      } else {
        chosen = await pick(known, (user) => {
          const provider = user.identities[0]?.provider_type ?? '';
          const display = PROVIDER_DISPLAY.find(([type]) => type === provider)?.[1] ?? provider;
          const data = provider === 'local-userpass' ? user.data['email'] : provider === 'api-key' ? user.data['name'] : undefined;
          return [display, ...(data !== undefined && data !== null ? [cellText(data)] : []), user._id].join(' - ');
        });
      }
      const outcomes = await forEachTarget(chosen, (user) => client.request(method, `${appPath}/users/${encodeURIComponent(user._id)}${suffix}`, { expect: [204] }));
      const acted = outcomes.filter((entry) => !entry.error).map((entry) => entry.target._id);
      const failed = outcomes.filter((entry) => entry.error).map((entry) => ({ user: entry.target._id, error: entry.error?.message }));
      ctx.output.result(
        { [name]: acted, ...(failed.length ? { failed } : {}) },
        () => (outcomes.length ? [`${done[name]} ${acted.length} user(s)`, ...failed.map((failure) => `Failed: ${failure.user}: ${failure.error}`)].join('\n') : outcome[name].none),
        () => {
          if (outcomes.length === 0) return realmCliLog.text(outcome[name].none);
          const ordered = failedFirst(outcomes);
          return userTables(ordered.map((entry) => entry.target), [outcome[name].header, 'Details'], (user) => {
            const error = ordered.find((entry) => entry.target === user)?.error;
            return { [outcome[name].header]: userCell(name, user, error), Details: error?.message ?? '' };
          });
        },
      );
      const failure = failedTargets(outcomes, name === 'delete' ? 'deleted' : name === 'revoke' ? 'revoked' : `${name}d`, 'user', (user) => user._id);
      if (failure) throw failure;
    });
  }
}

/** realm-cli's cell for a user acted on: Deleted / Session Revoked when done; Enabled as the user is left. */
function userCell(action: 'delete' | 'disable' | 'enable' | 'revoke', user: UserView, error: CliError | undefined): boolean {
  switch (action) {
    case 'disable':
      return error !== undefined && !user.disabled;
    case 'enable':
      return error === undefined || !user.disabled;
    case 'delete':
    case 'revoke':
      return error === undefined;
  }
}

interface UserFilterOptions {
  remote?: string;
  state?: string;
  providerType?: string[];
  provider?: string[];
  pending?: boolean;
}

/** realm-cli's `-u, --user`: user IDs, repeatable, comma-separated or several after one flag. */
const userOption = (description: string): Option => new Option('-u, --user <user id...>', description).argParser(collectList);

/** realm-cli's `--provider` (Tessera's --provider-type). */
const providerOption = (): Option => new Option('--provider <types...>', 'only users with an identity of these provider types (realm-cli\'s name for --provider-type)').argParser(collectList);

/** The app's users that match --state and --provider / --provider-type (the server filters). */
async function findUsers(client: AdminClient, appPath: string, options: UserFilterOptions): Promise<UserView[]> {
  if (options.state !== undefined && options.state !== 'enabled' && options.state !== 'disabled') throw new CliError('--state must be enabled or disabled', ExitCode.Usage);
  const query = new URLSearchParams();
  if (options.state) query.set('status', options.state);
  const providers = [...(options.providerType ?? []), ...(options.provider ?? [])];
  if (providers.length) query.set('provider_types', providers.join(','));
  return (await client.request<UserView[]>('GET', `${appPath}/users?${query.toString()}`)).body;
}

interface PendingUser {
  _id: string;
  login_ids: { id_type: string; id: string }[];
}

/** Every pending registration of the app, page by page (the server answers 50 at a time). */
async function pendingUsers(client: AdminClient, appPath: string): Promise<PendingUser[]> {
  const all: PendingUser[] = [];
  for (;;) {
    const after = all.at(-1)?._id;
    const page = (await client.request<PendingUser[]>('GET', `${appPath}/user_registrations/pending_users${after ? `?after=${after}` : ''}`)).body;
    all.push(...page);
    if (page.length === 0 || page.length < 50) return all;
  }
}

interface UserView {
  _id: string;
  type: string;
  disabled: boolean;
  identities: { provider_type: string }[];
  data: Record<string, unknown>;
  /** Unix seconds; 0 when the user never logged in. */
  last_authentication_date?: number;
}

/**
 * realm-cli's users tables: one per provider type, in its order, titled "Provider type: <name>", a user in
 * each of its identities' tables; an email/password user's Email or an API key's Name first, then ID, Type
 * and the command's own columns.
 */
function userTables(users: readonly UserView[], headers: readonly string[], cells: (user: UserView) => Record<string, unknown>): RealmCliLog[] {
  return PROVIDER_DISPLAY.flatMap(([type, display]) => {
    const rows = users.flatMap((user) => user.identities.filter((identity) => identity.provider_type === type).map(() => user));
    if (rows.length === 0) return [];
    const first: Record<string, string> = type === 'api-key' ? { Name: 'name' } : type === 'local-userpass' ? { Email: 'email' } : {};
    return [
      realmCliLog.table(
        `Provider type: ${display}`,
        [...Object.keys(first), 'ID', 'Type', ...headers],
        rows.map((user) => ({ ...Object.fromEntries(Object.entries(first).map(([header, key]) => [header, user.data[key]])), ID: user._id, Type: user.type, ...cells(user) })),
      ),
    ];
  });
}

/**
 * Pending email/password registrations in realm-cli's User/Password table. (realm-cli itself printed none:
 * a registration has no identities.) A registration has no user type yet, and cannot log in until confirmed.
 */
function pendingUserTable(pending: readonly PendingUser[], headers: readonly string[], cells: (user: PendingUser) => Record<string, unknown>): RealmCliLog {
  return realmCliLog.table(
    'Provider type: User/Password',
    ['Email', 'ID', 'Type', ...headers],
    pending.map((user) => ({ Email: user.login_ids.map((login) => login.id).join(','), ID: user._id, Type: '', ...cells(user) })),
  );
}

function formatLog(entry: LogEntry): string {
  const what = entry.function_name ? `${entry.type} ${entry.function_name}` : entry.type;
  const detail = entry.error ? `error: ${entry.error}${entry.error_code ? ` (${entry.error_code})` : ''}` : (entry.messages ?? []).join(' | ');
  return `${entry.started}  ${what}  ${detail}`;
}

/** realm-cli's `logs list` names of log types (display, then sub-type). */
const LOG_TYPE_DISPLAY: Readonly<Record<string, string>> = {
  AUTH_TRIGGER: 'Trigger -> Auth',
  DB_TRIGGER: 'Trigger -> Database',
  SCHEDULED_TRIGGER: 'Trigger -> Scheduled',
  FUNCTION: 'Function',
  SERVICE_FUNCTION: 'Function -> Service',
  STREAM_FUNCTION: 'Stream Function',
  SERVICE_STREAM_FUNCTION: 'Stream Function -> Service',
  AUTH: 'Authentication',
  WEBHOOK: 'Webhook',
  PUSH: 'Push Notification',
  API: 'Other',
  API_KEY: 'API Key',
  GRAPHQL: 'GraphQL',
  SYNC_CONNECTION_START: 'Sync -> Connection Start',
  SYNC_CONNECTION_END: 'Sync -> Connection End',
  SYNC_SESSION_START: 'Sync -> Session Start',
  SYNC_SESSION_END: 'Sync -> Session End',
  SYNC_CLIENT_WRITE: 'Sync -> Write',
  SYNC_ERROR: 'Sync -> Error',
  SYNC_OTHER: 'Sync -> Other',
  SCHEMA_ADDITIVE_CHANGE: 'Schema -> Additive Change',
  SCHEMA_GENERATION: 'Schema -> Generation',
  SCHEMA_VALIDATION: 'Schema -> Validation',
};

/** What realm-cli's `logs list` names an entry after: its trigger, function, auth provider or webhook. */
function logEntryName(entry: LogEntry): string {
  const text = (key: string): string => cellText(entry[key]);
  switch (entry.type) {
    case 'AUTH_TRIGGER':
    case 'DB_TRIGGER':
    case 'SCHEDULED_TRIGGER':
      return text('event_subscription_name') || text('event_subscription_id');
    case 'FUNCTION':
      return text('function_name') || text('function_id');
    case 'SERVICE_FUNCTION':
    case 'SERVICE_STREAM_FUNCTION':
      return text('function_name');
    case 'AUTH': {
      const event = entry['auth_event'];
      return typeof event === 'object' && event !== null ? cellText((event as Record<string, unknown>)['provider']) : '';
    }
    case 'WEBHOOK':
      return text('incoming_webhook_name') || text('incoming_webhook_id');
    default:
      return '';
  }
}

/**
 * An entry as realm-cli's `logs list` prints it: a list log titled
 * "<started> [<duration>] <type>[ <name>]: OK|<code>Error - <error>" whose items are its messages. Tessera's
 * own log types, which realm-cli did not know (it printed them blank), show their type.
 */
export function logEntryLog(entry: LogEntry): RealmCliLog {
  const started = new Date(entry.started);
  const took = entry.completed ? new Date(entry.completed).getTime() - started.getTime() : 0;
  const name = logEntryName(entry);
  const status = entry.error ? `${entry.error_code ?? ''}Error - ${entry.error}` : 'OK';
  const type = LOG_TYPE_DISPLAY[entry.type] ?? entry.type;
  return realmCliLog.list(`${logsDate(started)} ${`[${goDuration(took)}]`.padStart(9)} ${type.padStart(26)}${name ? ` ${name}` : ''}: ${status}`, entry.messages ?? []);
}
