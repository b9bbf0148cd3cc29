import { type Command, Option } from 'commander';
import { type CliContext } from '../context';
import { configDirectory, ProfileStore } from '../profiles';
import { table } from './apps.command';

/** realm-cli's other names for the commands (its aliases), so that its scripts run as written. */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  apps: ['app'],
  users: ['user'],
  secrets: ['secret'],
  function: ['functions'],
  logs: ['log'],
  schema: ['schemas'],
  accessList: ['accesslist'],
};

/** Commands whose --remote names an app to start from, not the app they act on: realm-cli gave them no --app. */
const REMOTE_IS_A_SOURCE = new Set(['apps create', 'apps init']);

/**
 * realm-cli's names on top of Tessera's own: the command aliases above, and `-a, --app` beside `--remote`
 * wherever a command picks its app with `--remote` (realm-cli names that flag `--app` on every command but
 * pull and push). The two are the same option: `--app` fills `--remote` when that is not given.
 */
export function addRealmCliNames(program: Command): void {
  for (const command of program.commands) {
    for (const alias of ALIASES[command.name()] ?? []) if (!command.aliases().includes(alias)) command.alias(alias);
    for (const sub of [command, ...command.commands]) {
      const has = (flag: string) => sub.options.some((option) => option.long === flag || option.short === flag);
      if (!has('--remote') || has('--app') || REMOTE_IS_A_SOURCE.has(`${command.name()} ${sub.name()}`)) continue;
      sub.addOption(new Option(has('-a') ? '--app <app id>' : '-a, --app <app id>', 'the app, as realm-cli names the flag (the same as --remote)'));
    }
  }
  program.hook('preAction', (_program, action) => {
    const options = action.opts<{ app?: string; remote?: string }>();
    if (options.app !== undefined && options.remote === undefined && action.options.some((option) => option.long === '--remote')) action.setOptionValue('remote', options.app);
  });
}

/** realm-cli's `profiles list` (alias `profile`): the login profiles kept in the config directory. */
export function registerProfilesCommand(program: Command, context: () => CliContext): void {
  program
    .command('profiles')
    .alias('profile')
    .description('list the login profiles this CLI keeps')
    .command('list')
    .alias('ls')
    .description('list the profiles: name, server and who is logged in')
    .action(async () => {
      const ctx = context();
      const store = new ProfileStore(configDirectory(ctx.env));
      const profiles = Object.entries(await store.all()).map(([name, profile]) => ({ profile: name, url: profile.url, user: profile.username ?? '', logged_in: profile.accessToken !== undefined || profile.refreshToken !== undefined }));
      ctx.output.result(profiles, () => (profiles.length ? table(['Profile', 'Base URL', 'User', 'Logged in'], profiles.map((p) => [p.profile, p.url, p.user, p.logged_in ? 'yes' : 'no'])) : 'No profiles: log in with `tessera login`'));
    });
}
