import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, extname, join, relative, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import type { AdminClient } from '../admin-client';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext, RemoteApp } from '../context';
import { appDirectory, isNonEmptyDirectory, localAppId, readLocalFiles, replaceLocalFiles, ROOT_CONFIGS, rootConfigOf, unzip, zip, type Files } from '../local-files';
import { formatBytes } from '../output';
import { realmCliLog, type RealmCliLog } from '../realm-cli-log';
import { uploadDependencies } from './dependencies';
import { appViolations, withAppId } from './new-app';
import { collectList } from './option-values';

interface PullOptions {
  remote?: string;
  local?: string;
  template?: string[];
  includeHosting?: boolean;
  includeNodeModules?: boolean;
  includePackageJson?: boolean;
  includeDependencies?: boolean;
  dryRun?: boolean;
  configVersion?: string;
  yes?: boolean;
}

interface PushOptions {
  remote?: string;
  local?: string;
  dryRun?: boolean;
  includeHosting?: boolean;
  includeNodeModules?: boolean;
  includePackageJson?: boolean;
  includeDependencies?: boolean;
  resetCdnCache?: boolean;
  deploymentName?: string;
  yes?: boolean;
}

/** The hosted content of an app directory (as realm-cli, it moves only with --include-hosting). */
const isHostingContent = (path: string): boolean => path === 'hosting/metadata.json' || path.startsWith('hosting/files/');

/** `pull`, `push` and `diff`: whole apps between the server and a local directory. */
export function registerTransferCommands(program: Command, context: () => CliContext): void {
  program
    .command('pull')
    .description("write an app's configuration to a local directory (current layout)")
    .option('--remote <app id>', 'the app to pull (client app id, name or _id)')
    .option('--local <directory>', 'where to write it (default: ./<app name>)')
    .addOption(new Option('-t, --template <template id...>', "also download these templates' clients (repeatable or comma-separated; templates compatible with an app created from a template): the app goes to backend/, each client to frontend/<template id>/").argParser(collectList))
    .option('-s, --include-hosting', 'also download the hosted files (hosting/metadata.json and hosting/files/); without it, local hosted files are left as they are')
    .option('--include-node-modules', "also download the functions' dependencies as uploaded (functions/node_modules.zip or the archive's own name)")
    .option('--include-package-json', "also download the functions' dependencies as functions/package.json (the archive instead when it holds none, as realm-cli)")
    .option('-d, --include-dependencies', "realm-cli's older name for --include-node-modules")
    .option('-x, --dry-run', 'write nothing: say which app, directory and files a pull would write')
    .option('--config-version <version>', "realm-cli's export layout version: no effect, Tessera pulls its one current layout (push reads every layout)")
    .option('-y, --yes', 'replace a non-empty directory without asking')
    .action(async (options: PullOptions) => {
      const ctx = context();
      if (options.configVersion !== undefined) ctx.output.info(`Note: --config-version ${options.configVersion} has no effect: Tessera pulls its current layout`);
      const client = await ctx.client();
      const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (options.local ? await localAppId(options.local) : undefined));
      const directory = resolve(options.local ?? app.name);
      const dependencies = options.includeNodeModules === true || options.includePackageJson === true || options.includeDependencies === true;
      // realm-cli's client templates: looked up before anything is written, only for an app created from a template.
      const templates = await clientTemplates(ctx, client, groupId, app, options.template ?? []);
      const frontend = join(directory, 'frontend');
      const backend = templates.length ? join(directory, 'backend') : directory;
      if (options.dryRun) {
        const files = unzip((await client.request('GET', `/groups/${groupId}/apps/${app._id}/pull${options.includeHosting ? '?include_hosting=true' : ''}`, { progress: 'Downloading app' })).bytes);
        const replaces = await isNonEmptyDirectory(directory);
        const plan = { dry_run: true, app_id: app.client_app_id, local_path: directory, backend_path: backend, ...(templates.length ? { frontend_path: frontend, frontend_paths: templates.map((template) => join(frontend, template.id)) } : {}), files: [...files.keys()].sort(), dependencies, replaces_contents: replaces };
        ctx.output.result(plan, () =>
          [
            `Dry run: nothing was written. Pulling ${app.client_app_id} would write ${files.size} file(s) into ${backend}${replaces ? ' (replacing what it holds)' : ''}`,
            ...templates.map((template) => `and the client of template ${template.id} into ${join(frontend, template.id)}`),
            ...(dependencies ? [`and the functions' dependencies into ${join(backend, 'functions')}`] : []),
          ].join('\n'),
          () => {
            const shown = relative(process.cwd(), directory);
            return [
              realmCliLog.text('No changes were written to your file system'),
              ...(templates.length
                ? [realmCliLog.debug(`App contents would have been written to: ${join(shown, 'backend')}`), realmCliLog.debug(`Template contents would have been written to: ${join(shown, 'frontend')}`)]
                : [realmCliLog.debug(`Contents would have been written to: ${shown}`)]),
            ];
          },
        );
        return;
      }
      if (await isNonEmptyDirectory(directory)) {
        if (!options.yes && !ctx.output.interactive) throw new CliError(`directory ${directory} is not empty: pass --yes to replace its contents`, ExitCode.Usage);
        await ctx.output.confirm(`Replace the contents of ${directory}?`, options.yes === true);
      }
      const pullPath = `/groups/${groupId}/apps/${app._id}/pull${options.includeHosting ? '?include_hosting=true' : ''}`;
      const files = unzip((await client.request('GET', pullPath, { progress: 'Downloading app' })).bytes);
      await replaceLocalFiles(backend, files, options.includeHosting ? [] : ['hosting']);
      const logs: RealmCliLog[] = [realmCliLog.text('Saved app to disk')];
      if (dependencies) logs.push(...(await pullDependencies(ctx, client, groupId, app, join(backend, 'functions'), options.includePackageJson === true)));
      // Tessera's pull holds the hosted files (with --include-hosting) in the app it downloads.
      if (options.includeHosting) logs.push(realmCliLog.debug('Fetched hosting assets'));
      const saved: string[] = [];
      for (const template of templates) {
        await replaceLocalFiles(join(frontend, template.id), template.files);
        // realm-cli's item: "<template id>: <its README>", or nothing after the colon when the client has none.
        const readme = [...template.files.keys()].filter((path) => /^README[^/]*$/.test(path));
        saved.push(`${template.id}: ${readme.length === 1 ? join(relative(process.cwd(), directory), 'frontend', template.id, `README${extname(readme[0]).toLowerCase()}`) : ''}`);
      }
      logs.push(realmCliLog.text(`Successfully pulled app down: ${relative(process.cwd(), directory)}`));
      if (saved.length) {
        logs.push(realmCliLog.list('Successfully saved template(s) to disk', saved));
        logs.push(realmCliLog.text('Navigate to the saved directory to view directions on how to run the template app(s)'));
      }
      ctx.output.result({ app_id: app.client_app_id, local_path: directory, files: files.size, ...(templates.length ? { templates: templates.map((template) => ({ id: template.id, local_path: join(frontend, template.id) })) } : {}) }, [`Pulled app ${app.client_app_id} into ${directory} (${files.size} files)`, ...templates.map((template) => `Saved the client of template ${template.id} into ${join(frontend, template.id)}`)].join('\n'), logs);
    });

  program
    .command('push')
    .description('deploy a local app directory (any layout: current, legacy, realm-cli or App Services CLI export) to the server')
    .option('--remote <app id>', 'the app to push to (default: app_id in config.json)')
    .option('--local <directory>', 'the app directory (default: .)')
    .option('-x, --dry-run', 'show what would change and change nothing')
    .option('-s, --include-hosting', 'also deploy the hosted files (hosting/metadata.json and hosting/files/): they replace the app\'s hosted files')
    .option('-c, --reset-cdn-cache', 'invalidate cached copies of the hosted files after the push')
    .option('--include-node-modules', 'also upload the functions\' dependencies (functions/node_modules, or an archive of it): pure JavaScript packages their functions can require')
    .option('--include-package-json', 'also upload functions/package.json with functions/node_modules: only the packages it names (and theirs) are kept')
    .option('-d, --include-dependencies', "realm-cli's older name for --include-node-modules")
    .option('-n, --deployment-name <name>', "name the deployment (App Services CLI): the name the app's deployment history shows for it")
    .option('-y, --yes', 'deploy without asking')
    .action(async (options: PushOptions) => {
      const ctx = context();
      if (options.includeDependencies) options = { ...options, includeNodeModules: true };
      // realm-cli's logs (-f json), printed at the end: its steps that Tessera's push also takes. (Tessera deploys
      // in one request, so realm-cli's "Creating draft" and "Deploying draft" have no counterpart.)
      const logs: RealmCliLog[] = [];
      // realm-cli shows the changes unless -y answers its question before it is asked.
      const showChanges = options.yes !== true;
      // realm-cli's push of a directory that names no app yet (one `app init` wrote): the app is created first.
      if (options.remote === undefined && (await localAppId(options.local ?? '.')) === undefined) {
        const created = await createAppForPush(ctx, options);
        if (!created) return;
        options = { ...options, remote: created, yes: true };
        logs.push(realmCliLog.text('App created successfully'));
      }
      const { client, app, groupId, archive, directory } = await prepareTransfer(ctx, options);
      // Dependencies first: a refused package (a native module, a missing dependency) stops the push before anything is deployed.
      if (!options.dryRun && (options.includeNodeModules || options.includePackageJson)) await uploadDependencies(ctx, client, groupId, app, directory, options);
      const { diffs, warnings } = await dryRun(client, groupId, app, archive, ctx);
      logs.push(realmCliLog.text('Determining changes'), ...warnings.map((w) => realmCliLog.warning(`${w.file}${w.path ? ` at ${w.path}` : ''}: ${w.message} (${w.rule})`)));
      if (diffs.length === 0) {
        ctx.output.result({ app_id: app.client_app_id, diffs, warnings, deployed: false }, `App ${app.client_app_id} is up to date: nothing to push`, [...logs, realmCliLog.text('Deployed app is identical to proposed version, nothing to do')]);
        return;
      }
      if (showChanges) logs.push(proposedChanges(diffs));
      if (options.dryRun) {
        ctx.output.result({ app_id: app.client_app_id, diffs, warnings, deployed: false }, () => `${diffs.join('\n')}\n\nDry run: ${diffs.length} file(s) would change; nothing was deployed`, [
          ...logs,
          realmCliLog.text("To push these changes, you must omit the 'dry-run' flag to proceed"),
          realmCliLog.followup('Try instead', [`tessera push --local ${directory} --remote ${app.client_app_id}`]),
        ]);
        return;
      }
      ctx.output.info(diffs.join('\n'));
      await ctx.output.confirm(`Deploy these changes to ${app.client_app_id}?`, options.yes === true);
      ctx.output.info(`Uploading ${formatBytes(archive.length)}...`);
      const named = options.deploymentName !== undefined ? `?${new URLSearchParams({ deployment_name: options.deploymentName }).toString()}` : '';
      await client.request('PATCH', `/groups/${groupId}/apps/${app._id}/push${named}`, { zip: archive, expect: [204] });
      if (options.resetCdnCache) await client.request('PUT', `/groups/${groupId}/apps/${app._id}/hosting/cache`, { json: { invalidate: true, path: '/*' }, expect: [204] });
      const [deployment] = (await client.request<{ _id: string; name: string; version: number }[]>('GET', `/groups/${groupId}/apps/${app._id}/deployments`)).body;
      logs.push(
        realmCliLog.text('Pushing changes'),
        realmCliLog.text('Deployment complete'),
        ...(options.includeNodeModules || options.includePackageJson ? [realmCliLog.text('Installed dependencies')] : []),
        ...(options.includeHosting ? [realmCliLog.text('Import hosting assets')] : []),
        ...(options.resetCdnCache ? [realmCliLog.text('Reset CDN cache')] : []),
        realmCliLog.text(`Successfully pushed app up: ${app.client_app_id}`),
      );
      ctx.output.result({ app_id: app.client_app_id, diffs, warnings, deployed: true, deployment }, `Deployed ${diffs.length} changed file(s) to ${app.client_app_id} (deployment ${deployment ? `${deployment.name}, ${deployment._id}` : 'unknown'})`, logs);
    });

  // `diff`, and realm-cli's `app diff` (registered with the apps commands, which exist by then).
  const apps = program.commands.find((command) => command.name() === 'apps');
  for (const parent of apps ? [program, apps] : [program]) {
    parent
      .command('diff')
      .description('show how a local app directory differs from the deployed app')
      .option('--remote <app id>', 'the app to compare with (default: app_id in config.json)')
      .option('--local <directory>', 'the app directory (default: .)')
      .option('-s, --include-hosting', 'also compare the hosted files')
      .option('--include-node-modules', "realm-cli's dependency comparison: no effect, the diff covers the configuration and hosted files, not functions' dependencies")
      .option('--include-package-json', 'the same as --include-node-modules: no effect')
      .option('-d, --include-dependencies', 'the same as --include-node-modules: no effect')
      .action(async (options: PushOptions) => {
        const ctx = context();
        if (options.includeNodeModules || options.includePackageJson || options.includeDependencies) ctx.output.info("Note: functions' dependencies are not compared; push --include-node-modules uploads them");
        const { client, app, groupId, archive } = await prepareTransfer(ctx, options);
        const { diffs } = await dryRun(client, groupId, app, archive, ctx);
        ctx.output.result(diffs, () => (diffs.length ? diffs.join('\n') : `No differences with ${app.client_app_id}`), diffs.length ? proposedChanges(diffs) : realmCliLog.text('Deployed app is identical to proposed version'));
      });
  }
}

/**
 * The clients of the --template templates, as realm-cli's pull resolves them: none unless the app was created
 * from a template (realm-cli then pulled the app alone); each must be one of the app's compatible templates
 * and have a client, else the pull fails before writing anything, with realm-cli's messages.
 */
async function clientTemplates(ctx: CliContext, client: AdminClient, groupId: string, app: RemoteApp, ids: readonly string[]): Promise<{ id: string; files: Files }[]> {
  if (ids.length === 0) return [];
  const record = (await client.request<RemoteApp>('GET', `/groups/${groupId}/apps/${app._id}`)).body;
  if (!record.template_id) {
    ctx.output.info(`Note: ${app.client_app_id} was not created from a template, so --template has no effect (as with realm-cli): the app alone is pulled`);
    return [];
  }
  const compatible = (await client.request<{ id: string }[]>('GET', `/groups/${groupId}/apps/${app._id}/templates`)).body;
  const found: { id: string; files: Files }[] = [];
  for (const id of ids) {
    if (!compatible.some((template) => template.id === id)) throw new CliError(`frontend template '${id}' is not compatible with this app`, ExitCode.Usage);
    const reply = await client.request('GET', `/groups/${groupId}/apps/${app._id}/templates/${encodeURIComponent(id)}/client`, { expect: [200, 204], progress: 'Downloading client' });
    if (reply.status === 204) throw new CliError(`template '${id}' does not have a frontend to pull`, ExitCode.Usage);
    found.push({ id, files: unzip(reply.bytes) });
  }
  return found;
}

/**
 * realm-cli's `pull --include-node-modules` / `--include-package-json`: the dependencies archive the app
 * was last given, written into the functions directory; with --include-package-json its package.json
 * alone when the archive holds one (a zip's top-level package.json), else the archive, with a warning.
 */
async function pullDependencies(ctx: CliContext, client: AdminClient, groupId: string, app: RemoteApp, functions: string, packageJson: boolean): Promise<RealmCliLog[]> {
  const reply = await client.request('GET', `/groups/${groupId}/apps/${app._id}/dependencies/archive`, { expect: [200, 404], progress: 'Downloading dependencies' });
  if (reply.status === 404) {
    ctx.output.info(`App ${app.client_app_id} has no dependencies: none written`);
    return [realmCliLog.warning(`App ${app.client_app_id} has no dependencies: none written`)];
  }
  const name = /filename=([^;]+)/.exec(reply.headers.get('content-disposition') ?? '')?.[1]?.trim() ?? 'node_modules.zip';
  await mkdir(functions, { recursive: true });
  if (packageJson) {
    const found = name.endsWith('.zip') ? unzip(reply.bytes).get('package.json') : undefined;
    if (found) {
      await writeFile(join(functions, 'package.json'), found);
      ctx.output.info('Fetched dependencies as a package.json file');
      return [realmCliLog.text('Fetched dependencies as a package.json file')];
    }
    ctx.output.info('Warning: the dependencies hold no package.json file: a node_modules archive was written instead');
  }
  await writeFile(join(functions, basename(name)), reply.bytes);
  ctx.output.info(`Fetched dependencies as ${join(functions, basename(name))}`);
  return [
    realmCliLog.text('Fetched dependencies as a node_modules archive'),
    ...(packageJson ? [realmCliLog.warning('The package.json file was not found, a node_modules archive was written instead')] : []),
  ];
}

async function prepareTransfer(ctx: CliContext, options: PushOptions): Promise<{ client: AdminClient; app: RemoteApp; groupId: string; archive: Uint8Array; directory: string }> {
  const { directory, files } = await localApp(options);
  const client = await ctx.client();
  const reference = options.remote ?? (await localAppId(directory));
  if (reference === undefined) {
    const root = await rootConfigOf(directory);
    if (root) throw new CliError(`the app in ${directory} is not on the server yet (${basename(root.path)} has no app_id): \`tessera push --local ${directory}\` creates it, or pass --remote <app id>`, ExitCode.Usage);
  }
  const { app, groupId } = await ctx.resolveApp(client, reference);
  return { client, app, groupId, archive: zip(files), directory };
}

/** The app directory and the files a push sends from it. */
async function localApp(options: PushOptions): Promise<{ directory: string; files: Files }> {
  const directory = await appDirectory(options.local ?? '.');
  const files = await readLocalFiles(directory);
  if (!options.includeHosting) for (const path of [...files.keys()]) if (isHostingContent(path)) files.delete(path);
  if (files.size === 0) throw new CliError(`no app in ${directory}: it holds no files`, ExitCode.Usage);
  return { directory, files };
}

/**
 * Creates the app a directory without an app_id describes (its name, location, deployment model, environment
 * and provider region) and writes the new app id into its root config, as realm-cli's push did. The directory
 * is validated first, so an invalid one leaves nothing behind on the server; a dry run creates nothing.
 * Returns the new client app id, or undefined when nothing was to be pushed.
 */
async function createAppForPush(ctx: CliContext, options: PushOptions): Promise<string | undefined> {
  const { directory, files } = await localApp(options);
  if (!ROOT_CONFIGS.some((name) => files.has(name))) throw new CliError(`no app config in ${directory} (realm_config.json, root_config.json or config.json): pass --remote <app id>, or write an app with \`tessera app init\``, ExitCode.Usage);
  // The validator names a root config that is not valid JSON, or names no app, by file and path.
  const violations = appViolations(files);
  if (violations.length) throw new CliError(`the app in ${directory} is invalid; nothing was created`, ExitCode.InvalidConfiguration, { violations });
  const root = await rootConfigOf(directory);
  const name = root?.settings['name'];
  if (!root || typeof name !== 'string' || name === '') throw new CliError(`the app in ${directory} has no name: add it to its root config, or pass --remote <app id> to push to an existing app`, ExitCode.Usage);
  const file = basename(root.path);
  if (options.dryRun) {
    ctx.output.result(
      { new_app: true, name, local_path: directory, files: files.size, deployed: false },
      `This is a new app (${file} has no app_id): \`tessera push\` without --dry-run creates app ${name} and deploys ${files.size} file(s) to it. Nothing was created.`,
      [realmCliLog.text("This is a new app. To create a new app, you must omit the 'dry-run' flag to proceed"), realmCliLog.followup('Try instead', [`tessera push --local ${directory}`])],
    );
    return undefined;
  }
  await ctx.output.confirm(`Create a new app ${name} and deploy ${directory} to it?`, options.yes === true);
  const client = await ctx.client();
  const groupId = await ctx.groupId(client);
  const setting = (key: string) => (typeof root.settings[key] === 'string' && root.settings[key] !== '' ? { [key]: root.settings[key] } : {});
  const body = { name, ...setting('location'), ...setting('deployment_model'), ...setting('environment'), ...setting('provider_region') };
  const app = (
    await client.request<RemoteApp>('POST', `/groups/${groupId}/apps`, { json: body, expect: [201] }).catch((error: unknown) => {
      if (error instanceof CliError && error.exitCode === ExitCode.Conflict) throw new CliError(`${error.message}: rename the app in ${file}, or pass --remote <app id> to push to that app`, error.exitCode, error.details);
      throw error;
    })
  ).body;
  await writeFile(root.path, withAppId(await readFile(root.path, 'utf8'), app.client_app_id));
  ctx.output.info(`Created app ${app.name} (app id ${app.client_app_id}); its app_id is written in ${file}`);
  return app.client_app_id;
}

/** realm-cli's log of the changes a push or diff would make. */
const proposedChanges = (diffs: readonly string[]): RealmCliLog => realmCliLog.text(`The following reflects the proposed changes to your Realm app\n${diffs.join('\n')}`);

interface PushWarning {
  file: string;
  path: string;
  rule: string;
  message: string;
}

/** The server's diff and warnings (what it accepted but had to complete, such as a function's default config), printed as they come. */
async function dryRun(client: AdminClient, groupId: string, app: RemoteApp, archive: Uint8Array, ctx: CliContext): Promise<{ diffs: string[]; warnings: PushWarning[] }> {
  ctx.output.info(`Comparing with ${app.client_app_id} (${formatBytes(archive.length)})...`);
  const body = (await client.request<{ diffs: string[]; warnings?: PushWarning[] }>('PATCH', `/groups/${groupId}/apps/${app._id}/push?dry_run=true`, { zip: archive, expect: [200] })).body;
  const warnings = body.warnings ?? [];
  for (const w of warnings) ctx.output.info(`Warning: ${w.file}${w.path ? ` at ${w.path}` : ''}: ${w.message} (${w.rule})`);
  return { diffs: body.diffs, warnings };
}
