import { unzipSync, zipSync, type Zippable } from 'fflate';
import type { AppFiles } from '@tessera/app-config';
import { AdminApiError, AdminApiErrorCode } from './admin-api.exception';

// A fixed timestamp makes the same files give the same zip bytes.
const epoch = new Date('1980-01-01T00:00:00Z');

export function zipFiles(files: AppFiles): Uint8Array {
  const entries: Zippable = {};
  for (const [path, bytes] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) entries[path] = [bytes, { mtime: epoch }];
  return zipSync(entries, { level: 6, mtime: epoch });
}

/** The files of a zip (directory entries dropped); 400 when the body is not a zip. */
export function unzipFiles(zip: Uint8Array): AppFiles {
  let entries;
  try {
    entries = unzipSync(zip);
  } catch {
    throw new AdminApiError(AdminApiErrorCode.BadRequest, 'request body is not a valid zip archive');
  }
  const files: AppFiles = new Map();
  for (const [path, bytes] of Object.entries(entries)) if (!path.endsWith('/')) files.set(path, bytes);
  return files;
}
