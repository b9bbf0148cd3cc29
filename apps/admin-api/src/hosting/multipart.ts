// The body realm-cli sends to upload a hosted file: `multipart/mixed` (or `multipart/form-data`) with a
// `meta` part (the asset metadata as JSON) and a `file` part (the bytes). Parsed from the buffered body.

export interface MultipartPart {
  /** The `name` parameter of the part's Content-Disposition, if any. */
  name: string | undefined;
  headers: Record<string, string>;
  body: Buffer;
}

/** The boundary of a multipart Content-Type, or undefined when the type is not multipart or names none. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/(mixed|form-data)\s*;/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** The parts of a multipart body; undefined when the body is not well formed (no closing delimiter, a part without headers). */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) return undefined;
  for (;;) {
    at += delimiter.length;
    // `--` after a delimiter closes the body.
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts;
    if (body[at] === 0x0d && body[at + 1] === 0x0a) at += 2;
    else return undefined;
    const headerEnd = body.indexOf('\r\n\r\n', at);
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), at);
    if (next < 0) return undefined;
    let headers: Record<string, string> = {};
    let contentStart = at;
    if (body.subarray(at, at + 2).toString() === '\r\n') contentStart = at + 2;
    else if (headerEnd < 0 || headerEnd > next) return undefined;
    else {
      headers = parseHeaders(body.subarray(at, headerEnd).toString('latin1'));
      contentStart = headerEnd + 4;
    }
    const disposition = headers['content-disposition'] ?? '';
    const name = /;\s*name="([^"]*)"/i.exec(disposition)?.[1] ?? /;\s*name=([^\s;]+)/i.exec(disposition)?.[1];
    parts.push({ name, headers, body: body.subarray(contentStart, next) });
    at = next + 2;
  }
}

function parseHeaders(block: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}
