import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { AdminClient } from '../admin-client';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext, RemoteApp } from '../context';
import { realmCliLog } from '../realm-cli-log';
import { isNonEmptyDirectory, replaceLocalFiles, unzip, zip, type Files } from '../local-files';
import { APP_ENVIRONMENTS, APP_LOCATIONS, checkAppName, DEFAULT_DEPLOYMENT_MODEL, DEFAULT_LOCATION, DEPLOYMENT_MODELS, parseDeploymentModel, parseEnvironment, parseLocation } from './new-app';

export interface CreateOptions {
  name?: string;
  remote?: string;
  local?: string;
  location?: string;
  deploymentModel?: string;
  environment?: string;
  template?: string;
  cluster?: string[];
  clusterServiceName?: string[];
  serverlessInstance?: string[];
  serverlessInstanceServiceName?: string[];
  datalake?: string[];
  datalakeServiceName?: string[];
  dryRun?: boolean;
  yes?: boolean;
}

/** A data source `app create` links: what the user named and the service the app gets for it. */
export interface DataSourceLink {
  kind: 'cluster' | 'serverless instance' | 'data lake';
  source: string;
  service: { name: string; type: string; config: Record<string, unknown> };
}

/** The service name a template app's cluster gets, whatever --cluster-service-name says (as realm-cli). */
const TEMPLATE_SERVICE_NAME = 'mongodb-atlas';

/** realm-cli's repeatable flags take `--cluster a --cluster b` and `--cluster a,b` alike. */
const collect = (value: string, previous: string[] = []): string[] => [...previous, ...value.split(',').map((part) => part.trim()).filter(Boolean)];

/**
 * The data sources to link, each named by its --*-service-name (in order), else after the cluster or data
 * lake itself; a template app links at most one cluster, as "mongodb-atlas", and no serverless instance or data lake.
 */
export function dataSourceLinks(options: Pick<CreateOptions, 'template' | 'cluster' | 'clusterServiceName' | 'serverlessInstance' | 'serverlessInstanceServiceName' | 'datalake' | 'datalakeServiceName'>): DataSourceLink[] {
  const kinds = [
    { kind: 'cluster', flag: '--cluster', sources: options.cluster ?? [], names: options.clusterServiceName ?? [] },
    { kind: 'serverless instance', flag: '--serverless-instance', sources: options.serverlessInstance ?? [], names: options.serverlessInstanceServiceName ?? [] },
    { kind: 'data lake', flag: '--datalake', sources: options.datalake ?? [], names: options.datalakeServiceName ?? [] },
  ] as const;
  for (const { flag, sources, names } of kinds) {
    if (names.length > sources.length) throw new CliError(`${flag}-service-name is given ${names.length} times for ${sources.length} ${flag}: name each one after its ${flag}`, ExitCode.Usage);
  }
  if (options.template) {
    if (options.serverlessInstance?.length) throw new CliError('a template app cannot be created with serverless instances', ExitCode.Usage);
    if (options.datalake?.length) throw new CliError('a template app cannot be created with data lakes', ExitCode.Usage);
    if ((options.cluster?.length ?? 0) > 1) throw new CliError('a template app links one cluster: pass --cluster once', ExitCode.Usage);
  }
  const links = kinds.flatMap(({ kind, sources, names }) =>
    sources.map((source, index): DataSourceLink => {
      const name = options.template ? TEMPLATE_SERVICE_NAME : (names[index] ?? source);
      const config = kind === 'data lake' ? { dataLakeName: source } : { clusterName: source, readPreference: 'primary', wireProtocolEnabled: false };
      return { kind, source, service: { name, type: kind === 'data lake' ? 'datalake' : 'mongodb-atlas', config } };
    }),
  );
  const names = links.map((link) => link.service.name);
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice !== undefined) throw new CliError(`two data sources would be named "${twice}": give each its own --*-service-name`, ExitCode.Usage);
  return links;
}

/**
 * realm-cli's `app create`: creates the app on the server (empty, from a template, or as a copy of another
 * app's configuration with --remote), links the clusters, serverless instances and data lakes named, and
 * writes the app to a local directory. If linking or copying fails, the new app is deleted again.
 */
export function registerAppCreateCommand(apps: Command, context: () => CliContext): void {
  apps
    .command('create')
    .description('create an app on the server and write it to a local directory')
    .option('-n, --name <name>', "app name: 1 to 32 ASCII letters, digits, underscores or hyphens (default with --remote: that app's)")
    .option('--remote <app id>', "copy an existing app's configuration into the new app (client app id, name or _id)")
    .option('--local <directory>', 'where to write the app (default: ./<name>)')
    .option('-l, --location <location>', `the app's location: ${APP_LOCATIONS.join(', ')} (default ${DEFAULT_LOCATION}, or the --remote app's)`, parseLocation)
    .option('-d, --deployment-model <model>', `${DEPLOYMENT_MODELS.join(' or ')} (default ${DEFAULT_DEPLOYMENT_MODEL}, or the --remote app's)`, parseDeploymentModel)
    .option('-e, --environment <environment>', `the environment the app selects: ${APP_ENVIRONMENTS.join(', ')} (default: none, or the --remote app's)`, parseEnvironment)
    .option('--template <template id>', 'start from a template app (see `tessera apps templates`): the directory gets backend/ and frontend/')
    .option('--cluster <cluster name>', 'link a cluster as a data source named after it (repeatable; a template app links one, as "mongodb-atlas")', collect)
    .option('--cluster-service-name <name>', 'the data source name of the --cluster at the same position', collect)
    .option('--serverless-instance <name>', 'link a serverless instance as a data source named after it (repeatable)', collect)
    .option('--serverless-instance-service-name <name>', 'the data source name of the --serverless-instance at the same position', collect)
    .option('--datalake <name>', 'link a data lake (federated database) as a data source named after it (repeatable)', collect)
    .option('--datalake-service-name <name>', 'the data source name of the --datalake at the same position', collect)
    .option('-x, --dry-run', 'say what would be created and change nothing, on the server or on disk')
    .option('--config-version <version>', "realm-cli's config layout version: no effect, Tessera writes its one current layout (push reads every layout)")
    .option('-y, --yes', 'replace the local directory if it is not empty')
    .addHelpText('after', '\nTo write a new app directory without creating anything on the server, use `tessera app init`.')
    .action(async (options: CreateOptions) => {
      const ctx = context();
      if (options.template && options.remote) throw new CliError('--template and --remote cannot be combined: a new app starts from a template or from another app', ExitCode.Usage);
      const links = dataSourceLinks(options);
      let client: AdminClient | undefined;
      let remote: { app: RemoteApp; groupId: string } | undefined;
      if (options.remote) {
        client = await ctx.client();
        remote = await ctx.resolveApp(client, options.remote);
      }
      const name = options.name !== undefined ? checkAppName(options.name) : remote ? remote.app.name : await askName(ctx);
      const directory = resolve(options.local ?? name);
      if ((await isNonEmptyDirectory(directory)) && !options.yes) throw new CliError(`directory ${directory} is not empty: choose another --local or pass --yes to replace it`, ExitCode.Usage);

      if (options.dryRun) {
        const what = remote ? `An app copying ${remote.app.client_app_id}` : options.template ? `An app from the template '${options.template}'` : 'A minimal app';
        const lines = [`${what} named ${name} would be created at ${directory}`, ...links.map((link) => `The ${link.kind} '${link.source}' would be linked as data source '${link.service.name}'`)];
        const command = createCommandLine({ ...options, name });
        ctx.output.result(
          { dry_run: true, name, local_path: directory, ...(remote ? { remote: remote.app.client_app_id } : {}), ...(options.template ? { template: options.template } : {}), data_sources: links.map((link) => ({ name: link.service.name, type: link.service.type, [link.kind === 'data lake' ? 'data_lake' : 'cluster']: link.source })), command },
          `${lines.join('\n')}\nTo create this app run: ${command}`,
          () => [
            realmCliLog.text(
              options.template ? `A Realm app would be created at ${directory} using the '${options.template}' template` : remote ? `A Realm app based on the Realm app '${options.remote ?? ''}' would be created at ${directory}` : `A minimal Realm app would be created at ${directory}`,
            ),
            ...links.map((link) => realmCliLog.text(`The ${link.kind} '${link.source}' would be linked as data source '${link.service.name}'`)),
            realmCliLog.followup('To create this app run', [command]),
          ],
        );
        return;
      }

      client ??= await ctx.client();
      const groupId = remote?.groupId ?? (await ctx.groupId(client));
      const copied = remote ? await copiedConfiguration(client, remote) : undefined;
      const location = options.location ?? (copied ? stringOf(copied.settings['location']) : DEFAULT_LOCATION);
      const deploymentModel = options.deploymentModel ?? (copied ? stringOf(copied.settings['deployment_model']) : DEFAULT_DEPLOYMENT_MODEL);
      const environment = options.environment ?? (copied ? stringOf(copied.settings['environment']) : undefined);
      const templateSource = options.template ? links[0] : undefined;
      const body = {
        name,
        ...(location ? { location } : {}),
        ...(deploymentModel ? { deployment_model: deploymentModel } : {}),
        ...(environment ? { environment } : {}),
        ...(options.template ? { template_id: options.template } : {}),
        ...(templateSource ? { data_source: templateSource.service } : {}),
      };
      const app = (
        await client.request<RemoteApp>('POST', `/groups/${groupId}/apps`, { json: body, expect: [201] }).catch((error: unknown) => {
          if (error instanceof CliError && error.exitCode === ExitCode.Conflict) throw new CliError(`${error.message}: choose another --name`, error.exitCode, error.details);
          throw error;
        })
      ).body;
      const appPath = `/groups/${groupId}/apps/${app._id}`;
      try {
        if (copied) await client.request('PATCH', `${appPath}/push`, { zip: zip(copied.files), expect: [204], progress: 'Copying configuration' });
        if (!options.template) for (const link of links) await client.request('POST', `${appPath}/services`, { json: link.service, expect: [201] });
      } catch (error) {
        await client.request('DELETE', appPath, { expect: [204] }).catch(() => undefined);
        if (error instanceof CliError) throw new CliError(`${error.message} (app ${app.client_app_id} was deleted again: nothing was created)`, error.exitCode, error.details);
        throw error;
      }

      const backend = unzip((await client.request('GET', `${appPath}/pull`, { progress: 'Downloading app' })).bytes);
      let frontend = false;
      if (options.template) {
        await replaceLocalFiles(join(directory, 'backend'), backend);
        const reply = await client.request('GET', `${appPath}/templates/${encodeURIComponent(options.template)}/client`, { expect: [200, 204], progress: 'Downloading client' });
        frontend = reply.status === 200;
        if (frontend) await replaceLocalFiles(join(directory, 'frontend'), unzip(reply.bytes));
      } else {
        await replaceLocalFiles(directory, backend);
      }
      const linked = (kind: DataSourceLink['kind']) => links.filter((link) => link.kind === kind).map((link) => ({ name: link.service.name }));
      const outputs = { clusters: linked('cluster'), serverless_instances: linked('serverless instance'), datalakes: linked('data lake') };
      ctx.output.result(
        {
          ...app,
          local_path: directory,
          // realm-cli's names for the same things.
          filepath: directory,
          ...(options.template ? { backend: join(directory, 'backend'), ...(frontend ? { frontends: join(directory, 'frontend') } : {}) } : {}),
          ...Object.fromEntries(Object.entries(outputs).filter(([, list]) => list.length > 0)),
        },
        [`Created app ${app.name} (app id ${app.client_app_id}) in ${directory}`, ...links.map((link) => `Linked ${link.kind} '${link.source}' as data source '${link.service.name}'`)].join('\n'),
        () => [
          ...(options.template ? [realmCliLog.text('Created template app')] : []),
          realmCliLog.doc('Successfully created app', {
            client_app_id: app.client_app_id,
            filepath: directory,
            // realm-cli's link to the app's dashboard in the App Services UI; Tessera's is its admin console's page of the app.
            url: `${client.baseUrl.replace(/\/+$/, '')}/console#/apps/${app._id}`,
            ...(options.template ? { backend: join(directory, 'backend'), ...(frontend ? { frontends: join(directory, 'frontend') } : {}) } : {}),
            ...Object.fromEntries(Object.entries(outputs).filter(([, list]) => list.length > 0)),
          }),
          realmCliLog.followup('Check out your app', [`cd ./${options.local ?? name} && tessera app describe`]),
        ],
      );
    });
}

async function askName(ctx: CliContext): Promise<string> {
  if (!ctx.output.interactive) throw new CliError('--name is required (or --remote <app id> to copy an existing app)', ExitCode.Usage);
  return checkAppName(await ctx.output.ask('App name: '));
}

/** The --remote app's configuration as a template export (no app id, no secret values), its hosted files left out as a push leaves them. */
async function copiedConfiguration(client: AdminClient, remote: { app: RemoteApp; groupId: string }): Promise<{ files: Files; settings: Record<string, unknown> }> {
  const files = unzip((await client.request('GET', `/groups/${remote.groupId}/apps/${remote.app._id}/export?template=true`, { progress: 'Downloading app' })).bytes);
  for (const path of [...files.keys()]) if (path === 'hosting/metadata.json' || path.startsWith('hosting/files/')) files.delete(path);
  const root = files.get('realm_config.json');
  const settings = root ? (JSON.parse(new TextDecoder().decode(root)) as Record<string, unknown>) : {};
  return { files, settings };
}

const stringOf = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The command that creates what a dry run described. */
export function createCommandLine(options: Omit<CreateOptions, 'name'> & { name: string }): string {
  const args: string[] = ['--name', options.name];
  const add = (flag: string, value: string | undefined): void => void (value !== undefined && args.push(flag, value));
  add('--remote', options.remote);
  add('--local', options.local);
  add('--template', options.template);
  add('--location', options.location);
  add('--deployment-model', options.deploymentModel);
  add('--environment', options.environment);
  const pairs = [
    ['--cluster', options.cluster ?? [], options.clusterServiceName ?? []],
    ['--serverless-instance', options.serverlessInstance ?? [], options.serverlessInstanceServiceName ?? []],
    ['--datalake', options.datalake ?? [], options.datalakeServiceName ?? []],
  ] as const;
  for (const [flag, sources, names] of pairs) {
    sources.forEach((source, index) => {
      add(flag, source);
      add(`${flag}-service-name`, names[index]);
    });
  }
  if (options.yes) args.push('--yes');
  return ['tessera', 'app', 'create', ...args.map(shellWord)].join(' ');
}

const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);
