import { AdminClient } from './admin-client';
import { CliError, ExitCode } from './cli-error';
import type { Output } from './output';
import { configDirectory, ProfileStore, type Profile } from './profiles';

export const defaultUrl = 'http://localhost:8080';

export interface GlobalOptions {
  profile: string;
  url?: string;
  json?: boolean;
  project?: string;
  /** realm-cli's `--product` of the running command: only apps of these products are looked at. */
  products?: string[];
}

/** An app as the admin API lists it. */
export interface RemoteApp {
  _id: string;
  client_app_id: string;
  name: string;
  group_id: string;
  template_id?: string;
  product?: string;
}

/**
 * Everything a command needs: the output, the profile store and, for commands that call the server, a
 * client logged in either from the environment (TESSERA_ACCESS_TOKEN, for CI) or from the profile.
 */
export class CliContext {
  readonly profiles: ProfileStore;

  constructor(
    readonly options: GlobalOptions,
    readonly output: Output,
    readonly env: NodeJS.ProcessEnv,
  ) {
    this.profiles = new ProfileStore(configDirectory(env));
  }

  async profile(): Promise<Profile | undefined> {
    return this.profiles.get(this.options.profile);
  }

  /** The server URL: --url, then TESSERA_URL, then the profile's, then the default. */
  async url(): Promise<string> {
    return this.options.url ?? this.env['TESSERA_URL'] ?? (await this.profile())?.url ?? defaultUrl;
  }

  async client(): Promise<AdminClient> {
    const envToken = this.env['TESSERA_ACCESS_TOKEN'];
    if (envToken) {
      const refreshToken = this.env['TESSERA_REFRESH_TOKEN'];
      return new AdminClient(await this.url(), { accessToken: envToken, ...(refreshToken ? { refreshToken } : {}) }, this.output);
    }
    const profile = await this.profile();
    if (!profile?.accessToken) throw new CliError(`not logged in (profile "${this.options.profile}"): run \`tessera login\` first, or set TESSERA_ACCESS_TOKEN`, ExitCode.Auth);
    return new AdminClient(this.options.url ?? profile.url, { accessToken: profile.accessToken, ...(profile.refreshToken ? { refreshToken: profile.refreshToken } : {}) }, this.output, async (accessToken) => {
      await this.profiles.save(this.options.profile, { ...profile, accessToken });
    });
  }

  /** The group (project) to work in: --project, else the first group of the admin's profile. */
  async groupId(client: AdminClient): Promise<string> {
    if (this.options.project) return this.options.project;
    const profile = (await client.request<{ roles?: { group_id?: string }[] }>('GET', '/auth/profile')).body;
    const groupId = profile.roles?.find((role) => role.group_id)?.group_id;
    if (!groupId) throw new CliError('your admin user has no project (group); pass --project', ExitCode.NotFound);
    return groupId;
  }

  /** The apps of the group, of the --product products when the command was given some. */
  async apps(client: AdminClient, groupId: string): Promise<RemoteApp[]> {
    const products = this.options.products ?? [];
    const query = products.length ? `?${products.map((product) => `product=${encodeURIComponent(product)}`).join('&')}` : '';
    return (await client.request<RemoteApp[]>('GET', `/groups/${groupId}/apps${query}`)).body;
  }

  /**
   * Finds an app by its `_id`, client app id or name; like realm-cli, a unique client-app-id prefix also
   * matches. An unknown or ambiguous reference is an error that lists what exists.
   */
  async resolveApp(client: AdminClient, reference: string | undefined): Promise<{ app: RemoteApp; groupId: string }> {
    if (!reference) throw new CliError('which app? pass --remote <app id> (or run the command inside a pulled app directory)', ExitCode.Usage);
    const groupId = await this.groupId(client);
    const apps = await this.apps(client, groupId);
    const exact = apps.filter((app) => app._id === reference || app.client_app_id === reference || app.name === reference);
    const matches = exact.length ? exact : apps.filter((app) => app.client_app_id.startsWith(reference.toLowerCase()));
    if (matches.length === 1) return { app: matches[0], groupId };
    if (matches.length === 0) {
      throw new CliError(`app not found: "${reference}"; apps in this project: ${apps.map((app) => app.client_app_id).join(', ') || 'none'}`, ExitCode.NotFound, { errorCode: 'AppNotFound' });
    }
    throw new CliError(`"${reference}" matches several apps (${matches.map((app) => app.client_app_id).join(', ')}): use the full app id`, ExitCode.Usage);
  }
}
