// The thin file-system edge: turns a directory into an AppFiles map and back. Everything else in this
// library works on the in-memory map, so the admin API (zips) and the CLI (diffs) need no disk.

import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { type AppConfig, type AppFiles } from './model';
import { readAppFiles, type LoadedApp } from './read/read-app';
import { writeAppFiles } from './write';
import { assertSafeRelativePaths } from './safe-names';

/** Every regular file under `dir`, keyed by its POSIX path relative to `dir`. */
export async function readDirectoryFiles(dir: string): Promise<AppFiles> {
  const files: AppFiles = new Map();
  const walk = async (current: string): Promise<void> => {
    const entries = await readdir(current, { withFileTypes: true });
    for (const entry of entries) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) files.set(relative(dir, full).split(sep).join('/'), new Uint8Array(await readFile(full)));
    }
  };
  await walk(dir);
  return files;
}

export async function writeDirectoryFiles(files: AppFiles, dir: string): Promise<void> {
  assertSafeRelativePaths(files.keys());
  for (const [path, bytes] of files) {
    const full = join(dir, ...path.split('/'));
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, bytes);
  }
}

export async function readAppDirectory(dir: string): Promise<LoadedApp> {
  return readAppFiles(await readDirectoryFiles(dir));
}

/** Writes the current layout into `dir` (created if needed). Files already there and not written stay. */
export async function writeAppDirectory(app: AppConfig, dir: string): Promise<AppFiles> {
  const files = writeAppFiles(app);
  await writeDirectoryFiles(files, dir);
  return files;
}
