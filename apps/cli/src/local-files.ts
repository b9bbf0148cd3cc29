import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { unzipSync, zipSync, type Zippable } from 'fflate';
import { CliError, ExitCode } from './cli-error';

export type Files = Map<string, Uint8Array>;

/** Names never part of an app: version control, editor and OS litter, dependencies. */
function ignored(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules';
}

/**
 * Under hosting/files/ a dot entry belongs to the site (/.well-known/apple-app-site-association): realm-cli
 * uploaded every file there, so only macOS folder metadata and dependencies are left out.
 */
function ignoredAt(root: string, directory: string, name: string): boolean {
  const where = relative(root, directory).split(sep).join('/');
  if (where === 'hosting/files' || where.startsWith('hosting/files/')) return name === '.DS_Store' || name === 'node_modules';
  return ignored(name);
}

export async function readLocalFiles(root: string): Promise<Files> {
  const files: Files = new Map();
  const walk = async (directory: string): Promise<void> => {
    for (const entry of await readdir(directory, { withFileTypes: true })) {
      if (ignoredAt(root, directory, entry.name)) continue;
      const path = join(directory, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files.set(relative(root, path).split(sep).join('/'), await readFile(path));
    }
  };
  try {
    await walk(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new CliError(`directory not found: ${root}`, ExitCode.NotFound);
    throw error;
  }
  return files;
}

/**
 * The app directory under `dir`: `dir` itself, or its `backend/` when `dir` was created from a template
 * (backend/ and frontend/ side by side).
 */
export async function appDirectory(dir: string): Promise<string> {
  const root = resolve(dir);
  if (await exists(join(root, 'config.json'))) return root;
  if (await exists(join(root, 'realm_config.json'))) return root;
  if (await exists(join(root, 'root_config.json'))) return root;
  if (await exists(join(root, 'backend', 'config.json'))) return join(root, 'backend');
  return root;
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

export async function isNonEmptyDirectory(path: string): Promise<boolean> {
  try {
    return (await readdir(path)).some((name) => !ignored(name));
  } catch {
    return false;
  }
}

/** Replaces the app files of `dir` with `files`; hidden entries (.git, ...) and the top-level entries named in `keep` are left alone. */
export async function replaceLocalFiles(dir: string, files: Files, keep: readonly string[] = []): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const name of await readdir(dir)) if (!ignored(name) && !keep.includes(name)) await rm(join(dir, name), { recursive: true, force: true });
  for (const [path, bytes] of files) {
    const target = resolve(dir, ...path.split('/'));
    if (!target.startsWith(resolve(dir) + sep) && target !== resolve(dir)) throw new CliError(`refusing to write outside ${dir}: ${path}`, ExitCode.Failure);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, bytes);
  }
}

export function zip(files: Files): Uint8Array {
  const entries: Zippable = {};
  for (const [path, bytes] of files) entries[path] = bytes;
  return zipSync(entries, { level: 6 });
}

export function unzip(bytes: Uint8Array): Files {
  try {
    return new Map(Object.entries(unzipSync(bytes)).filter(([path]) => !path.endsWith('/')));
  } catch {
    throw new CliError('the server sent an archive that is not a valid zip', ExitCode.Failure);
  }
}

/** The client app id written in a pulled app's config.json, if any. */
export async function localAppId(dir: string): Promise<string | undefined> {
  try {
    const config = JSON.parse(await readFile(join(await appDirectory(dir), 'config.json'), 'utf8')) as { app_id?: unknown };
    return typeof config.app_id === 'string' ? config.app_id : undefined;
  } catch {
    return undefined;
  }
}
