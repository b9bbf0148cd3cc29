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
  await writeLocalFiles(dir, files);
}

/** Writes `files` (and the empty `directories`) under `dir`, leaving whatever else it holds. */
export async function writeLocalFiles(dir: string, files: Files, directories: readonly string[] = []): Promise<void> {
  await mkdir(dir, { recursive: true });
  const inside = (path: string): string => {
    const target = resolve(dir, ...path.split('/'));
    if (!target.startsWith(resolve(dir) + sep) && target !== resolve(dir)) throw new CliError(`refusing to write outside ${dir}: ${path}`, ExitCode.Failure);
    return target;
  };
  for (const path of directories) await mkdir(inside(path), { recursive: true });
  for (const [path, bytes] of files) {
    const target = inside(path);
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

/** The files that hold an app's own settings, in the order the app config reader picks them. */
export const ROOT_CONFIGS = ['root_config.json', 'realm_config.json', 'config.json', 'stitch.json'] as const;

/** The root config of the app directory `dir` (the one the reader takes), if it has one. */
export async function rootConfigOf(dir: string): Promise<{ path: string; settings: Record<string, unknown> } | undefined> {
  for (const name of ROOT_CONFIGS) {
    const settings = await readJsonObject(join(dir, name));
    if (settings) return { path: join(dir, name), settings };
  }
  return undefined;
}

/** A JSON object read from a file; undefined when the file is missing or holds anything else. */
export async function readJsonObject(path: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The client app id written in the app's root config (a pull's config.json, realm-cli's realm_config.json), if any. */
export async function localAppId(dir: string): Promise<string | undefined> {
  const appId = (await rootConfigOf(await appDirectory(dir)))?.settings['app_id'];
  return typeof appId === 'string' && appId !== '' ? appId : undefined;
}
