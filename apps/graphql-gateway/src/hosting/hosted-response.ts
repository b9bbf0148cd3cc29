// How one hosted file is answered: headers from its attributes, ETag and Last-Modified, conditional
// requests (If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since) and a single byte range.
// Pure: the caller reads the store.

export interface HostedFile {
  hash: string;
  size: number;
  /** Seconds since the epoch. */
  lastModified: number;
  attrs: ReadonlyArray<{ name: string; value: string }>;
}

export interface HostedReply {
  status: number;
  headers: Record<string, string>;
  /** Whether the file's bytes (all, or `range`) follow; false for 304, 412 and 416. */
  withBody: boolean;
  /** A 412: the caller answers with the App Services error body instead of the file. */
  failedPrecondition?: boolean;
  range?: { start: number; end: number };
}

type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

const header = (headers: RequestHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** The attribute that is not a header but a redirect. */
export const REDIRECT_ATTRIBUTE = 'Website-Redirect-Location';

/** The response headers a hosted file always carries. */
export function fileHeaders(file: HostedFile): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const attr of file.attrs) if (attr.name !== REDIRECT_ATTRIBUTE) headers[attr.name.toLowerCase()] = attr.value;
  headers['content-type'] ??= 'application/octet-stream';
  headers['etag'] = `"${file.hash}"`;
  headers['last-modified'] = new Date(file.lastModified * 1000).toUTCString();
  headers['accept-ranges'] = 'bytes';
  headers['x-content-type-options'] = 'nosniff';
  return headers;
}

/** Whether an If-None-Match list names this ETag (weak comparison, as RFC 9110 asks for GET and HEAD). */
function noneMatch(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
}

/** Whether the client's copy is current: If-None-Match when sent, otherwise If-Modified-Since. */
export function isNotModified(file: HostedFile, headers: RequestHeaders): boolean {
  const ifNoneMatch = header(headers, 'if-none-match');
  if (ifNoneMatch !== undefined) return noneMatch(ifNoneMatch, `"${file.hash}"`);
  const since = Date.parse(header(headers, 'if-modified-since') ?? '');
  return !Number.isNaN(since) && file.lastModified * 1000 <= since;
}

/** Whether an If-Match list names this ETag: strong comparison (RFC 9110 13.1.1), so a weak tag never matches. */
function anyMatch(ifMatch: string, etag: string): boolean {
  if (ifMatch.trim() === '*') return true;
  return ifMatch.split(',').some((candidate) => candidate.trim() === etag);
}

/**
 * Whether a precondition of the request fails for the file (412): If-Match when sent, otherwise
 * If-Unmodified-Since (RFC 9110 13.2.2, evaluated before If-None-Match and If-Modified-Since).
 */
export function preconditionFails(file: HostedFile, headers: RequestHeaders): boolean {
  const ifMatch = header(headers, 'if-match');
  if (ifMatch !== undefined) return !anyMatch(ifMatch, `"${file.hash}"`);
  const since = Date.parse(header(headers, 'if-unmodified-since') ?? '');
  return !Number.isNaN(since) && file.lastModified * 1000 > since;
}

/** One `bytes=` range over `size` bytes: the range, 'unsatisfiable', or undefined to send the whole file. */
function byteRange(value: string, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(value.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/**
 * The answer to a GET or HEAD of `file` served with `status` (200 for the file itself or the SPA root, the
 * configured code for the custom 404 page). Conditional requests and ranges apply to 200 answers only.
 */
export function hostedReply(file: HostedFile, status: number, headers: RequestHeaders): HostedReply {
  const out = fileHeaders(file);
  if (status !== 200) return { status, headers: { ...out, 'content-length': String(file.size) }, withBody: true };
  if (preconditionFails(file, headers)) return { status: 412, headers: {}, withBody: false, failedPrecondition: true };
  if (isNotModified(file, headers)) {
    const kept: Record<string, string> = {};
    for (const name of ['etag', 'last-modified', 'cache-control', 'content-location', 'expires', 'vary']) if (out[name] !== undefined) kept[name] = out[name];
    return { status: 304, headers: kept, withBody: false };
  }
  const rangeHeader = header(headers, 'range');
  const ifRange = header(headers, 'if-range');
  const rangeApplies = rangeHeader !== undefined && (ifRange === undefined || ifRange === out['etag'] || ifRange === out['last-modified']);
  const range = rangeApplies ? byteRange(rangeHeader, file.size) : undefined;
  if (range === 'unsatisfiable') return { status: 416, headers: { 'content-range': `bytes */${file.size}`, 'content-length': '0' }, withBody: false };
  if (range) {
    return { status: 206, headers: { ...out, 'content-range': `bytes ${range.start}-${range.end}/${file.size}`, 'content-length': String(range.end - range.start + 1) }, withBody: true, range };
  }
  return { status: 200, headers: { ...out, 'content-length': String(file.size) }, withBody: true };
}
