// The resource path a hosting request names, decoded once and checked: a request can name a hosted file
// of its own app and nothing else. Pure.

export type HostedPath = { ok: true; path: string; directory: boolean } | { ok: false };

// Control characters (NUL included) and the backslash never appear in a resource path.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f\\]/;

/**
 * The resource path of a request path (still percent-encoded, query removed): `/docs/a%20b.html` ->
 * `/docs/a b.html`. Refused: a `.` or `..` segment (plain or encoded), an empty segment, an encoded `/`,
 * a backslash or a control character anywhere, malformed percent-encoding. A trailing `/` names a
 * directory (its index.html is served).
 */
export function hostedPath(rawPath: string): HostedPath {
  if (rawPath === '' || rawPath === '/') return { ok: true, path: '/', directory: true };
  if (!rawPath.startsWith('/') || UNSAFE.test(rawPath) || rawPath.length > 2048) return { ok: false };
  const directory = rawPath.endsWith('/');
  const raw = rawPath.slice(1, directory ? -1 : undefined).split('/');
  const segments: string[] = [];
  for (const segment of raw) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return { ok: false };
    }
    if (decoded === '' || decoded === '.' || decoded === '..' || decoded.includes('/') || UNSAFE.test(decoded)) return { ok: false };
    segments.push(decoded);
  }
  return { ok: true, path: `/${segments.join('/')}`, directory };
}

/** A resource path as it goes back into a URL (a redirect's Location). */
export function encodeResourcePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
