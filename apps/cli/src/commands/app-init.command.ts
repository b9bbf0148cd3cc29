import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext } from '../context';
import { realmCliLog } from '../realm-cli-log';
import type { CreateOptions } from './app-create.command';
import { isNonEmptyDirectory, unzip, writeLocalFiles, type Files } from '../local-files';
import {
  APP_LOCATIONS,
  appViolations,
  checkAppName,
  DEFAULT_DEPLOYMENT_MODEL,
  DEFAULT_LOCATION,
  enclosingAppConfig,
  INIT_EMPTY_DIRECTORIES,
  INIT_ROOT_CONFIG,
  initialAppFiles,
  jsonFile,
  parseDeploymentModel,
  parseEnvironment,
  parseLocation,
} from './new-app';

/** `app init` takes `app create`'s flags that make no call to the server's data sources. */
type InitOptions = Pick<CreateOptions, 'name' | 'remote' | 'local' | 'location' | 'deploymentModel' | 'environment' | 'template' | 'yes'>;

/**
 * realm-cli's `app init` (alias `initialize`): writes a new app directory and creates nothing on the server.
 * `push` then creates the app from it (the directory has no app_id yet). With `--remote`, the directory
 * starts as a copy of an existing app's configuration (its export as a template: no app id, no secrets).
 */
export function registerAppInitCommand(apps: Command, context: () => CliContext): void {
  apps
    .command('init')
    .alias('initialize')
    .description('write a new app directory without creating anything on the server (`tessera push` creates it)')
    .option('-n, --name <name>', 'app name: 1 to 32 ASCII letters, digits, underscores or hyphens')
    .option('--remote <app id>', "start from an existing app's configuration (client app id, name or _id)")
    .option('--local <directory>', 'where to write the app (default: the current directory, as realm-cli)')
    .option('-l, --location <location>', `the app's location: ${APP_LOCATIONS.join(', ')} (default ${DEFAULT_LOCATION})`, parseLocation)
    .option('-d, --deployment-model <model>', `GLOBAL or LOCAL (default ${DEFAULT_DEPLOYMENT_MODEL})`, parseDeploymentModel)
    .option('-e, --environment <environment>', 'the environment the app selects: development, testing, qa or production (default: none)', parseEnvironment)
    .option('--template <template id>', 'not supported here: templates are applied by the server, so use `tessera app create --template`')
    .option('--config-version <version>', "realm-cli's config layout version: no effect, Tessera writes its one current layout (push reads every layout)")
    .option('-y, --yes', 'write into a directory that is not empty (its other files stay)')
    .addHelpText('after', '\nTo create the app on the server as well, use `tessera app create`.')
    .action(async (options: InitOptions) => {
      const ctx = context();
      if (options.template !== undefined) {
        throw new CliError('app init does not take --template: a template is applied by the server when it creates the app; run `tessera app create --template <id>` (`tessera apps templates` lists them)', ExitCode.Usage);
      }
      const directory = resolve(options.local ?? '.');
      const existing = await enclosingAppConfig(directory);
      if (existing) throw new CliError(`an app already exists at ${existing}: app init starts a new app in a directory of its own (choose another --local)`, ExitCode.Usage);
      if ((await isNonEmptyDirectory(directory)) && !options.yes) throw new CliError(`directory ${directory} is not empty: choose an empty or new --local directory, or pass --yes to write the app beside what it holds`, ExitCode.Usage);

      const files = options.remote ? await remoteAppFiles(ctx, options) : initialAppFiles({ name: await newAppName(ctx, options.name), location: options.location ?? DEFAULT_LOCATION, deployment_model: options.deploymentModel ?? DEFAULT_DEPLOYMENT_MODEL, ...(options.environment ? { environment: options.environment } : {}) });
      // The directory must be one `push` accepts: the same validator the server runs, before anything is written.
      const violations = appViolations(files);
      if (violations.length) throw new CliError(`the app would be invalid; nothing was written to ${directory}`, ExitCode.InvalidConfiguration, { violations });
      await writeLocalFiles(directory, files, options.remote ? [] : INIT_EMPTY_DIRECTORIES);

      const name = settingsOf(files)['name'];
      const paths = [...files.keys()].sort();
      ctx.output.result(
        { name, local_path: directory, files: paths, ...(options.remote ? { remote: options.remote } : {}) },
        `Initialized app ${String(name)} in ${directory} (${paths.length} files)\nCreate it on the server and deploy it with: tessera push --local ${directory}`,
        realmCliLog.text('Successfully initialized app'),
      );
    });
}

/** The name: --name, else asked on a terminal; a script must pass it. */
async function newAppName(ctx: CliContext, name: string | undefined): Promise<string> {
  if (name !== undefined) return checkAppName(name);
  if (!ctx.output.interactive) throw new CliError('--name is required (or --remote <app id> to start from an existing app)', ExitCode.Usage);
  return checkAppName(await ctx.output.ask('App name: '));
}

/** The remote app's export as a template, with --name, --location, --deployment-model and --environment applied. */
async function remoteAppFiles(ctx: CliContext, options: InitOptions): Promise<Files> {
  const client = await ctx.client();
  const { app, groupId } = await ctx.resolveApp(client, options.remote);
  const files = unzip((await client.request('GET', `/groups/${groupId}/apps/${app._id}/export?template=true`, { progress: 'Downloading app' })).bytes);
  const overrides = {
    ...(options.name !== undefined ? { name: checkAppName(options.name) } : {}),
    ...(options.location ? { location: options.location } : {}),
    ...(options.deploymentModel ? { deployment_model: options.deploymentModel } : {}),
    ...(options.environment ? { environment: options.environment } : {}),
  };
  const { app_id: _appId, ...settings } = settingsOf(files);
  files.set(INIT_ROOT_CONFIG, jsonFile({ ...settings, ...overrides }));
  return files;
}

function settingsOf(files: Files): Record<string, unknown> {
  const bytes = files.get(INIT_ROOT_CONFIG);
  if (!bytes) throw new CliError(`the server sent an app without ${INIT_ROOT_CONFIG}`, ExitCode.Failure);
  return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
}
