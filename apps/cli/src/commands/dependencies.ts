import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
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
 * server installs nothing from the npm registry, so the installed tree always goes up: with
 * --include-package-json and nothing installed, the CLI installs what package.json names itself, with the
 * user's npm, into a directory of its own (App Services installed it on its servers; here the machine that
 * pushes does, and the user's functions directory is left as it was).
 */
export async function dependenciesArchive(directory: string, flags: DependencyFlags, install: Installer = npmInstall): Promise<{ filename: string; bytes: Uint8Array }> {
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
  if (flags.includePackageJson) {
    const installed = await installInto(functions, install);
    try {
      if (await exists(join(installed, 'node_modules'))) await collect(join(installed, 'node_modules'), installed, files);
    } finally {
      await rm(installed, { recursive: true, force: true });
    }
    return { filename: 'node_modules.zip', bytes: zip(files) };
  }
  throw new CliError(`node_modules not found at ${functions}: run \`npm install\` there first, or push with --include-package-json to have it installed`, ExitCode.Usage);
}

/** Runs an install of the package.json in `directory` (npm's arguments after `npm`); resolves once it succeeded. */
export type Installer = (directory: string, args: string[]) => Promise<void>;

/**
 * Installs what `functions/package.json` names into a new temporary directory and returns that directory.
 * Local `file:` dependencies are resolved against the functions directory and copied, not linked; the lock
 * file is used when there is one and no `file:` dependency (its paths would point elsewhere). Scripts do not
 * run: a package that needs them builds a native addon, which functions cannot load anyway.
 */
async function installInto(functions: string, install: Installer): Promise<string> {
  const manifest = JSON.parse(await readFile(join(functions, 'package.json'), 'utf8')) as Record<string, unknown>;
  let local = false;
  for (const field of ['dependencies', 'optionalDependencies']) {
    const deps = manifest[field];
    if (deps === null || typeof deps !== 'object') continue;
    for (const [name, spec] of Object.entries(deps as Record<string, unknown>)) {
      if (typeof spec !== 'string' || !spec.startsWith('file:')) continue;
      local = true;
      const path = spec.slice('file:'.length);
      (deps as Record<string, unknown>)[name] = `file:${isAbsolute(path) ? path : resolve(functions, path)}`;
    }
  }
  delete manifest['devDependencies'];
  const directory = await mkdtemp(join(tmpdir(), 'tessera-dependencies-'));
  try {
    await writeFile(join(directory, 'package.json'), JSON.stringify(manifest));
    const lock = join(functions, 'package-lock.json');
    const locked = !local && (await exists(lock));
    if (locked) await writeFile(join(directory, 'package-lock.json'), await readFile(lock));
    for (const name of ['.npmrc']) if (await exists(join(functions, name))) await writeFile(join(directory, name), await readFile(join(functions, name)));
    const common = ['--omit=dev', '--ignore-scripts', '--install-links', '--no-audit', '--no-fund'];
    await install(directory, locked ? ['ci', ...common] : ['install', '--no-package-lock', ...common]);
    return directory;
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
}

/** The user's npm (`npm` on PATH), its output kept for the error a failed install answers. */
const npmInstall: Installer = (directory, args) =>
  new Promise((done, fail) => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const child = spawn(npm, args, { cwd: directory, stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (error) => fail(new CliError(`could not run npm to install what functions/package.json names (${error.message}); install the packages into functions/node_modules yourself`, ExitCode.Failure)));
    child.on('close', (code) => (code === 0 ? done() : fail(new CliError(`npm ${args[0] ?? 'install'} of what functions/package.json names failed (exit code ${String(code)}):\n${output.trim()}`, ExitCode.Failure))));
  });

async function collect(dir: string, root: string, files: Files): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await collect(path, root, files);
    else if (entry.isFile()) files.set(relative(root, path).split(sep).join('/'), await readFile(path));
  }
}

/** Uploads the dependencies and waits for the server's verdict (realm-cli polls the status the same way). */
export async function uploadDependencies(ctx: CliContext, client: AdminClient, groupId: string, app: RemoteApp, directory: string, flags: DependencyFlags): Promise<void> {
  const archive = await dependenciesArchive(directory, flags, (where, args) => {
    ctx.output.info(`Installing what functions/package.json names (npm ${args[0] ?? 'install'})...`);
    return npmInstall(where, args);
  });
  ctx.output.info(`Uploading dependencies (${formatBytes(archive.bytes.length)})...`);
  await client.request('PUT', `/groups/${groupId}/apps/${app._id}/dependencies`, { file: { field: 'file', ...archive }, expect: [204] });
  const status = (await client.request<{ status: string; status_message: string }>('GET', `/groups/${groupId}/apps/${app._id}/dependencies/status`)).body;
  if (status.status === 'failed') throw new CliError(`the dependencies were refused: ${status.status_message}`, ExitCode.Failure);
}
