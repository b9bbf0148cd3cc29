import { type Command, Option } from 'commander';
import { type CliContext } from '../context';
import { realmCliLog } from '../realm-cli-log';
import { configDirectory, ProfileStore } from '../profiles';
import { table } from './apps.command';
import { collectList } from './option-values';

/** realm-cli's other names for the commands (its aliases), so that its scripts run as written. */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  apps: ['app'],
  users: ['user'],
  secrets: ['secret'],
  function: ['functions'],
  logs: ['log'],
  schema: ['schemas'],
  accessList: ['accesslist'],
  pull: ['export'],
  push: ['import'],
};

/** realm-cli's other names for subcommands that Tessera's commands lack. */
const SUBCOMMAND_ALIASES: Readonly<Record<string, readonly string[]>> = {
  'users list': ['ls'],
  'secrets list': ['ls'],
  'logs list': ['ls'],
};

/** The commands on which realm-cli takes its hidden `--product` (the products whose apps it looks among). */
const PRODUCT_COMMANDS = new Set([
  'apps list', 'apps describe',
  'users create', 'users list', 'users disable', 'users enable', 'users revoke', 'users delete',
  'secrets list', 'secrets create', 'secrets update', 'secrets delete',
  'function run', 'logs list', 'schema datamodels',
  'accessList list', 'accessList create', 'accessList update', 'accessList delete',
]);

/** Commands whose --remote names an app to start from, not the app they act on: realm-cli gave them no --app. */
const REMOTE_IS_A_SOURCE = new Set(['apps create', 'apps init']);

/**
 * realm-cli's names on top of Tessera's own: the command aliases above; `-a, --app` beside `--remote`
 * wherever a command picks its app with `--remote` (realm-cli names that flag `--app` on every command but
 * pull and push), the two being the same option: `--app` fills `--remote` when that is not given; its
 * `--product` where it has one; and `-y, --yes` on every command, so that realm-cli's global `-y` also
 * parses inside a cluster of a command's short flags (`push -sy`).
 */
export function addRealmCliNames(program: Command): void {
  for (const command of program.commands) {
    for (const alias of ALIASES[command.name()] ?? []) if (!command.aliases().includes(alias)) command.alias(alias);
    for (const sub of [command, ...command.commands]) {
      const path = sub === command ? command.name() : `${command.name()} ${sub.name()}`;
      const has = (flag: string) => sub.options.some((option) => option.long === flag || option.short === flag);
      for (const alias of SUBCOMMAND_ALIASES[path] ?? []) if (!sub.aliases().includes(alias)) sub.alias(alias);
      if (PRODUCT_COMMANDS.has(path)) sub.addOption(new Option('--product <product>', "realm-cli's product filter (standard, atlas; repeatable or comma-separated): only apps of these products are looked at").argParser(collectList));
      if (sub.commands.length === 0 && !has('--yes')) sub.addOption(new Option(has('-y') ? '--yes' : '-y, --yes', 'realm-cli\'s global --yes: this command asks nothing').hideHelp());
      if (!has('--remote') || has('--app') || REMOTE_IS_A_SOURCE.has(path)) continue;
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
      ctx.output.result(
        profiles,
        () => (profiles.length ? table(['Profile', 'Base URL', 'User', 'Logged in'], profiles.map((p) => [p.profile, p.url, p.user, p.logged_in ? 'yes' : 'no'])) : 'No profiles: log in with `tessera login`'),
        // realm-cli's API Key cell: "<public key> (<redacted private key>)" or "(logged out)". Tessera keeps no
        // private key, so a logged-in profile shows whom it is logged in as: the public key, or the admin user.
        realmCliLog.table(`Found ${profiles.length} profile(s)`, ['Profile', 'API Key'], profiles.map((p) => ({ Profile: p.profile, 'API Key': p.logged_in ? p.user : '(logged out)' }))),
      );
    });
}
