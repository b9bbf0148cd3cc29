import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { AdminClient } from '../admin-client';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext, RemoteApp } from '../context';
import { exists, zip, type Files } from '../local-files';
import { formatBytes } from '../output';

/** realm-cli's archives of functions/node_modules, taken as they are. */
const ARCHIVES = ['node_modules.zip', 'node_modules.tar', 'node_modules.tar.gz', 'node_modules.tgz'];

export interface DependencyFlags {
  includeNodeModules?: boolean;
  includePackageJson?: boolean;
}

/**
 * The dependencies upload of `push --include-node-modules` / `--include-package-json`, as realm-cli made
 * it: `functions/node_modules` (a directory, zipped with `node_modules/` entries, or an archive of it) and,
 * with --include-package-json, `functions/package.json` beside it, which names the packages to keep. The
 * server installs nothing from the npm registry, so the installed tree always goes up.
 */
export async function dependenciesArchive(directory: string, flags: DependencyFlags): Promise<{ filename: string; bytes: Uint8Array }> {
  const functions = join(directory, 'functions');
  const packageJson = join(functions, 'package.json');
  const files: Files = new Map();
  if (flags.includePackageJson) {
    if (!(await exists(packageJson))) throw new CliError(`package.json not found at ${functions}`, ExitCode.Usage);
    files.set('package.json', await readFile(packageJson));
  }
  if (await exists(join(functions, 'node_modules'))) {
    await collect(join(functions, 'node_modules'), functions, files);
    return { filename: 'node_modules.zip', bytes: zip(files) };
  }
  for (const name of ARCHIVES) {
    if (!(await exists(join(functions, name)))) continue;
    if (flags.includePackageJson) throw new CliError(`with --include-package-json, install the packages into ${join(functions, 'node_modules')} (npm install) instead of an archive`, ExitCode.Usage);
    return { filename: name, bytes: await readFile(join(functions, name)) };
  }
  throw new CliError(`node_modules not found at ${functions}: run \`npm install\` there first`, ExitCode.Usage);
}

async function collect(dir: string, root: string, files: Files): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await collect(path, root, files);
    else if (entry.isFile()) files.set(relative(root, path).split(sep).join('/'), await readFile(path));
  }
}

/** Uploads the dependencies and waits for the server's verdict (realm-cli polls the status the same way). */
export async function uploadDependencies(ctx: CliContext, client: AdminClient, groupId: string, app: RemoteApp, directory: string, flags: DependencyFlags): Promise<void> {
  const archive = await dependenciesArchive(directory, flags);
  ctx.output.info(`Uploading dependencies (${formatBytes(archive.bytes.length)})...`);
  await client.request('PUT', `/groups/${groupId}/apps/${app._id}/dependencies`, { file: { field: 'file', ...archive }, expect: [204] });
  const status = (await client.request<{ status: string; status_message: string }>('GET', `/groups/${groupId}/apps/${app._id}/dependencies/status`)).body;
  if (status.status === 'failed') throw new CliError(`the dependencies were refused: ${status.status_message}`, ExitCode.Failure);
}
