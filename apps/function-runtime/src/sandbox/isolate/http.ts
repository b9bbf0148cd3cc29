/** context.http: App Services' HTTP client and fetch; requests are made by the host, under its egress policy. */
import { bson } from './bridge';
import { Buffer, toBuffer } from './buffer';
import { type Call, type Frame, type HostOp, withoutUndefined as clean } from './host-op';

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

type Headers = Record<string, string[]>;

interface RequestOptions {
  url?: unknown;
  scheme?: unknown;
  host?: unknown;
  path?: unknown;
  query?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  body?: unknown;
  form?: unknown;
  encodeBodyAsJSON?: unknown;
  followRedirects?: unknown;
}

interface HostResponse {
  statusCode: number;
  statusText: string;
  headers: Headers;
  bodyBase64: string;
}

function normalizeHeaders(headers: Record<string, unknown> | undefined): Headers {
  const out: Headers = {};
  if (!headers) return out;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    out[name] = Array.isArray(value) ? value.map(String) : [String(value)];
  }
  return out;
}

function buildUrl(options: RequestOptions, URLSearchParams: new (init?: unknown) => { append(name: unknown, value: unknown): void; toString(): string }): string {
  if (options.url) return String(options.url);
  if (!options.host) throw new Error('an HTTP request needs a url, or a scheme, host and path');
  let url = String(options.scheme || 'https') + '://' + String(options.host) + String(options.path || '/');
  if (options.query) {
    const params = new URLSearchParams();
    for (const key of Object.keys(options.query)) {
      const value = options.query[key];
      const values: unknown[] = Array.isArray(value) ? value : [value];
      for (const v of values) params.append(key, v);
    }
    const qs = params.toString();
    if (qs) url += '?' + qs;
  }
  return url;
}

/**
 * `context.http`, or with `service` the actions of an app's HTTP service (`context.services.get(name).get(...)`),
 * which the host sends only when one of that service's rules allows them.
 */
export function httpClient(
  hostOp: HostOp,
  URLSearchParams: new (init?: unknown) => { append(name: unknown, value: unknown): void; toString(): string },
  call: Call,
  frame: Frame,
  service?: string,
): Readonly<Record<string, (...args: never[]) => Promise<unknown>>> {
  function bodyBytes(body: unknown, headers: Headers, options: RequestOptions): Buffer | undefined {
    if (options.form) {
      headers['Content-Type'] = headers['Content-Type'] || ['application/x-www-form-urlencoded'];
      return Buffer.from(new URLSearchParams(options.form).toString());
    }
    if (body === undefined || body === null) return undefined;
    if (options.encodeBodyAsJSON) {
      headers['Content-Type'] = headers['Content-Type'] || ['application/json'];
      return Buffer.from(bson().EJSON.stringify(body, { relaxed: true }));
    }
    if (typeof body === 'string') return Buffer.from(body);
    return toBuffer(body);
  }
  const send = async (method: string, options: RequestOptions | undefined): Promise<HostResponse> => {
    const opts = options || {};
    const headers = normalizeHeaders(opts.headers);
    const bytes = bodyBytes(opts.body, headers, opts);
    const res = await hostOp(
      call,
      frame.id,
      'http',
      clean({
        method,
        url: buildUrl(opts, URLSearchParams),
        headers,
        bodyBase64: bytes === undefined ? undefined : bytes.toString('base64'),
        followRedirects: Boolean(opts.followRedirects),
        service,
      }),
    );
    return res as HostResponse;
  };
  const appServicesResponse = (res: HostResponse) => {
    const bytes = Buffer.from(res.bodyBase64, 'base64');
    // App Services' Binary: body.text() (app-services-bson puts text, toHex and toBase64 on Binary's prototype).
    const body = new (bson().Binary)(bytes);
    return { status: String(res.statusCode) + ' ' + res.statusText, statusCode: res.statusCode, headers: res.headers, cookies: {}, contentLength: bytes.length, body };
  };
  const http: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const method of HTTP_METHODS) {
    http[method.toLowerCase()] = async (options?: RequestOptions) => appServicesResponse(await send(method, options));
  }
  http['fetch'] = async (input: unknown, init?: { method?: unknown; headers?: Record<string, unknown>; body?: unknown; redirect?: unknown }) => {
    const i = init || {};
    const method = String(i.method || 'GET').toUpperCase();
    if (!HTTP_METHODS.includes(method)) throw new Error('unsupported HTTP method: ' + method);
    const res = await send(method, { url: String(input), headers: i.headers, body: i.body, followRedirects: i.redirect !== 'manual' });
    const bytes = Buffer.from(res.bodyBase64, 'base64');
    const lower: Record<string, string> = {};
    for (const name of Object.keys(res.headers)) lower[name.toLowerCase()] = res.headers[name].join(', ');
    return {
      ok: res.statusCode >= 200 && res.statusCode < 300,
      status: res.statusCode,
      statusText: res.statusText,
      headers: {
        get: (name: unknown) => (Object.prototype.hasOwnProperty.call(lower, String(name).toLowerCase()) ? lower[String(name).toLowerCase()] : null),
        has: (name: unknown) => Object.prototype.hasOwnProperty.call(lower, String(name).toLowerCase()),
        entries: () => Object.entries(lower)[Symbol.iterator](),
      },
      text: async () => bytes.toString('utf8'),
      json: async (): Promise<unknown> => JSON.parse(bytes.toString('utf8')),
      arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    };
  };
  return Object.freeze(http);
}
