/**
 * The `request` and `response` objects of a function serving an HTTPS endpoint or an incoming webhook, as
 * App Services handed them to the function. The request arrives as the call's first argument (query,
 * headers as arrays of strings, body as BSON Binary of the raw bytes); this module gives its body `text()`.
 * The response is built here, per call, and read back after the call as plain data: what the host puts on
 * the wire is decided there again, so nothing set here can split a header or bend the status line.
 */
import { bson } from './bridge';
import { Buffer } from './buffer';

/** A header name as HTTP allows it (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A header value: visible characters, spaces and tabs; never CR, LF or NUL. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export interface HttpResponseState {
  statusCode?: number;
  headers: Record<string, string[]>;
  bodyBase64?: string;
}

export interface HttpResponse {
  readonly object: object;
  state(): HttpResponseState;
}

/** Gives a BSON Binary body `text()` (UTF-8), as App Services' request bodies had. */
export function withBodyText(request: unknown): void {
  if (typeof request !== 'object' || request === null) return;
  const body = (request as { body?: unknown }).body;
  if (!(body instanceof bson().Binary)) return;
  const binary = body;
  Object.defineProperty(binary, 'text', { value: () => binary.toString('utf8'), enumerable: false });
}

function headerName(name: unknown): string {
  const text = String(name);
  if (!HEADER_NAME.test(text)) throw new TypeError('invalid header name: ' + JSON.stringify(text));
  return text;
}

function headerValue(value: unknown): string {
  const text = String(value);
  if (!HEADER_VALUE.test(text)) throw new TypeError('invalid header value: a header value cannot hold CR, LF or control characters');
  return text;
}

function bodyBytes(body: unknown): Uint8Array {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  const BSON = bson();
  if (body instanceof BSON.Binary) return body.buffer.subarray(0, body.position);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('the response body must be a string or binary data');
}

/** A fresh `response` object; `maxBodyBytes` bounds what `setBody` accepts. */
export function httpResponse(maxBodyBytes: number): HttpResponse {
  let statusCode: number | undefined;
  let body: Uint8Array | undefined;
  const headers = new Map<string, { name: string; values: string[] }>();
  const object = Object.freeze({
    setStatusCode(code: unknown): void {
      const value = Number(code);
      if (!Number.isInteger(value) || value < 100 || value > 599) throw new TypeError('invalid status code: ' + String(code));
      statusCode = value;
    },
    setHeader(name: unknown, value: unknown): void {
      const checked = headerName(name);
      headers.set(checked.toLowerCase(), { name: checked, values: [headerValue(value)] });
    },
    addHeader(name: unknown, value: unknown): void {
      const checked = headerName(name);
      const existing = headers.get(checked.toLowerCase());
      if (existing) existing.values.push(headerValue(value));
      else headers.set(checked.toLowerCase(), { name: checked, values: [headerValue(value)] });
    },
    setBody(value: unknown): void {
      const bytes = bodyBytes(value);
      if (bytes.byteLength > maxBodyBytes) throw new RangeError('the response body is ' + bytes.byteLength + ' bytes, above the limit of ' + maxBodyBytes);
      body = bytes;
    },
  });
  return {
    object,
    state() {
      const out: Record<string, string[]> = {};
      for (const { name, values } of headers.values()) out[name] = values.slice();
      return {
        ...(statusCode === undefined ? {} : { statusCode }),
        headers: out,
        ...(body === undefined ? {} : { bodyBase64: Buffer.from(body).toString('base64') }),
      };
    },
  };
}
