// Names that become paths. A function, value, webhook or auth provider name, a database or collection
// name and a hosting path each end up as a file path in the current layout, in an export (a zip) and on
// the disk of whoever pulls the app; a name like `../../evil` would write outside the app directory
// (zip slip). These checks keep every such name to plain path segments, and nothing stricter: characters
// App Services allowed in names stay allowed.

// Control characters and the backslash (a separator on Windows) never belong in a name.
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f\\]/;

/**
 * Why `name` cannot be used as a file name (or, with `nested`, as a `/`-separated relative path, as
 * function names in folders are), or undefined when it can.
 */
export function pathNameProblem(name: string, nested = false): string | undefined {
  if (UNSAFE_CHARACTERS.test(name)) return 'may not contain control characters or backslashes';
  const segments = nested ? name.split('/') : [name];
  if (!nested && name.includes('/')) return 'may not contain "/"';
  if (segments.some((s) => s === '')) return nested ? 'may not start or end with "/" or contain "//"' : 'may not be empty';
  if (segments.some((s) => s === '.' || s === '..')) return 'may not be "." or ".." or contain them as path segments';
  return undefined;
}

/** A relative POSIX path that stays inside its root: no leading "/", no ".." or "." segment, no drive. */
export function isSafeRelativePath(path: string): boolean {
  if (path === '' || path.startsWith('/') || /^[A-Za-z]:/.test(path) || UNSAFE_CHARACTERS.test(path)) return false;
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** Throws when a path of a file set would escape the directory or archive it is written to. */
export function assertSafeRelativePaths(paths: Iterable<string>): void {
  for (const path of paths) {
    if (!isSafeRelativePath(path)) throw new UnsafePathError(path);
  }
}

export class UnsafePathError extends Error {
  constructor(readonly path: string) {
    super(`refusing the path ${JSON.stringify(path)}: it would escape the app directory`);
    this.name = 'UnsafePathError';
  }
}
