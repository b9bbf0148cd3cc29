import { unzipSync, zipSync, type Zippable } from 'fflate';
import { isSafeRelativePath, type AppFiles } from '@tessera/app-config';
import { AdminApiError, AdminApiErrorCode } from './admin-api.exception';

// A fixed timestamp makes the same files give the same zip bytes.
const epoch = new Date('1980-01-01T00:00:00Z');

/**
 * A zip of the files. A path that would escape the directory it is unpacked into (`../x`, `/etc/x`) is
 * refused: whatever a stored configuration holds, an export never carries a zip-slip entry.
 */
export function zipFiles(files: AppFiles): Uint8Array {
  const entries: Zippable = {};
  for (const [path, bytes] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!isSafeRelativePath(path)) throw new UnsafeArchivePathError(path);
    entries[path] = [bytes, { mtime: epoch }];
  }
  return zipSync(entries, { level: 6, mtime: epoch });
}

/** The files of a zip (directory entries dropped); 400 when the body is not a zip or an entry escapes it. */
export function unzipFiles(zip: Uint8Array): AppFiles {
  let entries;
  try {
    entries = unzipSync(zip);
  } catch {
    throw new AdminApiError(AdminApiErrorCode.BadRequest, 'request body is not a valid zip archive');
  }
  const files: AppFiles = new Map();
  for (const [path, bytes] of Object.entries(entries)) {
    if (path.endsWith('/')) continue;
    if (!isSafeRelativePath(path)) throw new AdminApiError(AdminApiErrorCode.BadRequest, `the zip archive holds an entry outside the app directory: ${JSON.stringify(path)}`);
    files.set(path, bytes);
  }
  return files;
}

/** A stored configuration whose file paths would escape an archive: a server-side fault, never written. */
class UnsafeArchivePathError extends AdminApiError {
  override readonly httpStatus = 500;
  constructor(path: string) {
    super(AdminApiErrorCode.InvalidConfiguration, `refusing to write the archive entry ${JSON.stringify(path)}: it would escape the archive`);
  }
}
