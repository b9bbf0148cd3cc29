// Test helpers: build and edit in-memory app directories (AppFiles) without touching the disk.

import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { type AppFiles } from '../model';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const EXAMPLE_TODO_DIR = join(__dirname, '..', '..', '..', '..', 'examples', 'todo');

/** Builds a file map: strings are written as they are, anything else as pretty JSON. */
export function filesOf(spec: Record<string, unknown>): AppFiles {
  const files: AppFiles = new Map();
  for (const [path, content] of Object.entries(spec)) {
    files.set(path, encoder.encode(typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`));
  }
  return files;
}

export function readDirSync(dir: string): AppFiles {
  const files: AppFiles = new Map();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, e.name);
      if (e.isDirectory()) walk(full);
      else files.set(relative(dir, full).split(sep).join('/'), new Uint8Array(readFileSync(full)));
    }
  };
  walk(dir);
  return files;
}

export function text(files: AppFiles, path: string): string {
  const bytes = files.get(path);
  if (!bytes) throw new Error(`no file ${path}`);
  return decoder.decode(bytes);
}

export function jsonOf(files: AppFiles, path: string): unknown {
  return JSON.parse(text(files, path));
}

/** Loose JSON document for tests that edit arbitrary configuration files. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests poke at any member of any file
export type Doc = Record<string, any>;

/** Parses a JSON file, lets `change` edit it in place, writes it back. */
export function editJson<T = Doc>(files: AppFiles, path: string, change: (doc: T) => void): void {
  const doc = jsonOf(files, path) as T;
  change(doc);
  files.set(path, encoder.encode(`${JSON.stringify(doc, null, 2)}\n`));
}

export function put(files: AppFiles, path: string, content: unknown): void {
  files.set(path, encoder.encode(typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`));
}

export function exampleTodo(): AppFiles {
  return readDirSync(EXAMPLE_TODO_DIR);
}
