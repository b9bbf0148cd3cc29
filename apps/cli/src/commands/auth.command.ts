import type { Command } from 'commander';
import { AdminClient } from '../admin-client';
import { CliError, ExitCode } from '../cli-error';
import { defaultUrl, type CliContext } from '../context';
import { realmCliLog } from '../realm-cli-log';

interface LoginOptions {
  apiKey?: string;
  privateApiKey?: string;
  username?: string;
  password?: string;
}

/** `login`, `whoami`, `logout`. */
export function registerAuthCommands(program: Command, context: () => CliContext): void {
  program
    .command('login')
    .description('log in to a Tessera server and save the session in a profile')
    .option('--api-key <public key>', 'public part of an admin API key (mongodb-cloud login)')
    .option('--private-api-key <private key>', 'private part of an admin API key')
    .option('--username <name>', 'admin user name (local login)')
    .option('--password <password>', 'admin password (prompted on a terminal when omitted)')
    .option('--browser', "realm-cli's page for making an API key: no effect, Tessera has no such page; make one with `tessera admin-keys create`")
    .option('--auth-type <type>', "realm-cli's login kind (cloud, local): no effect, the flags given choose it (--api-key: a key, --username: a local admin)")
    .action(async (options: LoginOptions) => {
      const ctx = context();
      const url = ctx.options.url ?? ctx.env['TESSERA_URL'] ?? (await ctx.profile())?.url ?? defaultUrl;
      const anonymous = new AdminClient(url, undefined, ctx.output);
      let path: string;
      let body: Record<string, string>;
      let username: string;
      let authType: 'local' | 'api-key';
      if (options.apiKey || options.privateApiKey) {
        if (!options.apiKey || !options.privateApiKey) throw new CliError('an API key login needs both --api-key and --private-api-key', ExitCode.Usage);
        path = '/auth/providers/mongodb-cloud/login';
        body = { username: options.apiKey, apiKey: options.privateApiKey };
        username = options.apiKey;
        authType = 'api-key';
      } else {
        username = options.username ?? (ctx.output.interactive ? await ctx.output.ask('Username: ') : '');
        if (!username) throw new CliError('pass --username and --password (or --api-key and --private-api-key)', ExitCode.Usage);
        const password = options.password ?? ctx.env['TESSERA_PASSWORD'] ?? (ctx.output.interactive ? await ctx.output.ask('Password: ') : '');
        if (!password) throw new CliError('pass --password (or set TESSERA_PASSWORD)', ExitCode.Usage);
        path = '/auth/providers/local-userpass/login';
        body = { username, password };
        authType = 'local';
      }
      const tokens = (await anonymous.request<{ access_token: string; refresh_token: string }>('POST', path, { json: body, anonymous: true, expect: [200] })).body;
      const client = new AdminClient(url, { accessToken: tokens.access_token, refreshToken: tokens.refresh_token }, ctx.output);
      const groupId = await ctx.groupId(client);
      await ctx.profiles.save(ctx.options.profile, { url, username, authType, accessToken: tokens.access_token, refreshToken: tokens.refresh_token, groupId });
      ctx.output.result({ url, username, profile: ctx.options.profile, group_id: groupId }, `Logged in to ${url} as ${username} (profile "${ctx.options.profile}")`, realmCliLog.text('Successfully logged in'));
    });

  const keys = program.command('admin-keys').description('admin API key pairs for non-interactive logins (`login --api-key`)');
  keys
    .command('create')
    .requiredOption('--name <name>', 'what the key is for, e.g. ci')
    .action(async (options: { name: string }) => {
      const ctx = context();
      const client = await ctx.client();
      const key = (await client.request<{ _id: string; public_key: string; private_key: string }>('POST', '/admin_api_keys', { json: { name: options.name }, expect: [201] })).body;
      ctx.output.result(key, `Created API key "${options.name}"\n  public key:  ${key.public_key}\n  private key: ${key.private_key}  (shown once: store it now)\nLog in with: tessera login --api-key ${key.public_key} --private-api-key <private key>`, 'Created API key');
    });
  keys
    .command('list')
    .action(async () => {
      const ctx = context();
      const client = await ctx.client();
      const list = (await client.request<{ _id: string; name: string; public_key: string }[]>('GET', '/admin_api_keys')).body;
      ctx.output.result(list, () => (list.length ? list.map((key) => `${key.public_key}  ${key.name}  (${key._id})`).join('\n') : 'No API keys'), 'API keys');
    });
  keys
    .command('delete')
    .requiredOption('--key <id>', 'the key to delete (_id)')
    .action(async (options: { key: string }) => {
      const ctx = context();
      const client = await ctx.client();
      await client.request('DELETE', `/admin_api_keys/${encodeURIComponent(options.key)}`, { expect: [204] });
      ctx.output.result({ deleted: options.key }, `Deleted API key ${options.key}`, 'Deleted API key');
    });

  program
    .command('whoami')
    .description('show who you are logged in as')
    .option('--show-projects', 'also list the projects (groups) you belong to')
    .action(async (options: { showProjects?: boolean }) => {
      const ctx = context();
      // realm-cli's whoami answers, rather than fails, when nobody is logged in.
      if (ctx.output.format === 'realm-cli' && !ctx.env['TESSERA_ACCESS_TOKEN']) {
        const saved = await ctx.profile();
        if (!saved?.username) return ctx.output.logs([realmCliLog.text('No user is currently logged in')]);
        if (!saved.accessToken) return ctx.output.logs([realmCliLog.text(`The user, ${saved.username}, is not currently logged in`)]);
      }
      const client = await ctx.client();
      const profile = (await client.request<{ user_id: string; data?: { name?: string }; roles?: { group_id: string }[] }>('GET', '/auth/profile')).body;
      const name = profile.data?.name ?? profile.user_id;
      const source = ctx.env['TESSERA_ACCESS_TOKEN'] ? 'TESSERA_ACCESS_TOKEN' : `profile "${ctx.options.profile}"`;
      const groups = [...new Set((profile.roles ?? []).map((role) => role.group_id).filter(Boolean))];
      ctx.output.result(
        { url: client.baseUrl, user_id: profile.user_id, name, groups, source },
        `Logged in to ${client.baseUrl} as ${name} (${source})${options.showProjects ? `\nProjects: ${groups.join(', ') || 'none'}` : ''}`,
        () => [
          // realm-cli: "<public key or username> (<redacted private key or password>)". Tessera keeps neither
          // secret, only the session, so the parenthesis says where the session comes from.
          realmCliLog.text(`Currently logged in user: ${name} (${source})`),
          // Tessera's projects (groups) have no names: the Project Name cells are blank.
          ...(options.showProjects ? [realmCliLog.table(`Projects available (${groups.length})`, ['Project ID', 'Project Name'], groups.map((group) => ({ 'Project ID': group, 'Project Name': '' })))] : []),
        ],
      );
    });

  program
    .command('logout')
    .description('end the session and forget its tokens')
    .action(async () => {
      const ctx = context();
      const profile = await ctx.profile();
      if (!profile?.refreshToken) {
        ctx.output.result({ logged_out: false }, `Not logged in (profile "${ctx.options.profile}")`, realmCliLog.text('Successfully logged out'));
        return;
      }
      const client = new AdminClient(profile.url, { accessToken: profile.accessToken ?? '', refreshToken: profile.refreshToken }, ctx.output);
      try {
        await client.request('DELETE', '/auth/session', { useRefreshToken: true, expect: [204] });
      } catch (error) {
        // An already expired or revoked session is as logged out as it gets; forget the tokens anyway.
        if (!(error instanceof CliError) || error.exitCode !== ExitCode.Auth) throw error;
      }
      const { accessToken: _access, refreshToken: _refresh, ...rest } = profile;
      await ctx.profiles.save(ctx.options.profile, rest);
      ctx.output.result({ logged_out: true }, `Logged out of ${profile.url}`, realmCliLog.text('Successfully logged out'));
    });
}
