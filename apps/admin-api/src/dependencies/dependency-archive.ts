/**
 * Reads an uploaded dependencies archive (realm-cli's `node_modules.zip`, or `.tar`, `.tar.gz`/`.tgz`) into
 * its files, within the limits, without unpacking more than the limits allow: a zip's sizes are checked
 * from its directory before anything is inflated, a gzip stream is inflated with a cap. Nothing is written
 * to disk and no path can escape: entries are plain relative POSIX paths.
 */
import { gunzipSync } from 'node:zlib';
import { unzipSync } from 'fflate';
import { DependenciesError, DependenciesErrorCode } from './dependencies.exception';

/**
 * App Services refused zipped dependency directories over 15 MB ("Zipped dependency directories may not exceed
 * 15MB", https://www.mongodb.com/docs/atlas/app-services/functions/dependencies/). It published no unpacked
 * limit; Tessera bounds what an archive may unpack to (a zip bomb) and the number of files.
 */
export const DEPENDENCY_LIMITS = {
  archiveBytes: 15 * 1024 * 1024,
  unpackedBytes: 100 * 1024 * 1024,
  files: 50_000,
} as const;

export type ArchiveFiles = Map<string, Uint8Array>;

export function readDependencyArchive(bytes: Uint8Array, limits: typeof DEPENDENCY_LIMITS = DEPENDENCY_LIMITS): ArchiveFiles {
  if (bytes.length > limits.archiveBytes) throw tooLarge(`the dependencies archive is ${bytes.length} bytes, above the limit of ${limits.archiveBytes} bytes (15 MB)`);
  if (bytes[0] === 0x50 && bytes[1] === 0x4b) return readZip(bytes, limits);
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    let tar: Buffer;
    try {
      tar = gunzipSync(bytes, { maxOutputLength: limits.unpackedBytes + 1024 * 1024 });
    } catch (error) {
      if (error instanceof RangeError) throw tooLarge(`the dependencies archive unpacks to more than ${limits.unpackedBytes} bytes`);
      throw invalid('the dependencies archive is not a valid gzip file');
    }
    return readTar(tar, limits);
  }
  if (bytes.length >= 512 && new TextDecoder().decode(bytes.subarray(257, 262)) === 'ustar') return readTar(bytes, limits);
  throw invalid('upload the dependencies as a zip, tar or tar.gz archive of node_modules');
}

function readZip(bytes: Uint8Array, limits: typeof DEPENDENCY_LIMITS): ArchiveFiles {
  let total = 0;
  let count = 0;
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes, {
      filter: (file) => {
        if (file.name.endsWith('/')) return false;
        total += file.originalSize;
        count++;
        if (total > limits.unpackedBytes) throw tooLarge(`the dependencies archive unpacks to more than ${limits.unpackedBytes} bytes`);
        if (count > limits.files) throw tooLarge(`the dependencies archive holds more than ${limits.files} files`);
        return true;
      },
    });
  } catch (error) {
    if (error instanceof DependenciesError) throw error;
    throw invalid('the dependencies archive is not a valid zip file');
  }
  const files: ArchiveFiles = new Map();
  for (const [path, content] of Object.entries(entries)) addFile(files, path, content);
  return files;
}

function readTar(tar: Uint8Array, limits: typeof DEPENDENCY_LIMITS): ArchiveFiles {
  const files: ArchiveFiles = new Map();
  const text = new TextDecoder();
  let total = 0;
  let longName: string | undefined;
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start: number, length: number): string => text.decode(header.subarray(start, start + length)).replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    if (!Number.isFinite(size) || size < 0 || offset + 512 + size > tar.length) throw invalid('the dependencies archive is not a valid tar file');
    const body = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'L') {
      longName = text.decode(body).replace(/\0.*$/s, '');
      continue;
    }
    const prefix = field(345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = undefined;
    if (type !== '0' && type !== '7') continue; // directories, links and pax headers carry no module file
    total += size;
    if (total > limits.unpackedBytes) throw tooLarge(`the dependencies archive unpacks to more than ${limits.unpackedBytes} bytes`);
    if (files.size >= limits.files) throw tooLarge(`the dependencies archive holds more than ${limits.files} files`);
    addFile(files, name, body);
  }
  return files;
}

function addFile(files: ArchiveFiles, raw: string, content: Uint8Array): void {
  const path = raw.replace(/^\.\//, '');
  const segments = path.split('/');
  if (path.startsWith('/') || path.includes('\\') || segments.some((s) => s === '..' || s === '' || s === '.')) throw invalid(`the dependencies archive holds an entry outside node_modules: ${JSON.stringify(raw)}`);
  files.set(path, content);
}

const invalid = (message: string): DependenciesError => new DependenciesError(DependenciesErrorCode.InvalidArchive, message);
const tooLarge = (message: string): DependenciesError => new DependenciesError(DependenciesErrorCode.ArchiveTooLarge, message);
