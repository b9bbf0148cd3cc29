import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** The routes of one Fastify instance (method and path pattern), to tell 405 from 404. */
const routeTables = new WeakMap<object, Array<{ methods: string[]; pattern: RegExp }>>();

/**
 * Records the routes the application registers (call before it registers them, that is before `init` or
 * `listen`), so that a request for a known path with a method it does not serve is answered 405 with
 * `Allow`, not 404.
 */
export function recordRoutes(fastify: FastifyInstance): void {
  const routes: Array<{ methods: string[]; pattern: RegExp }> = [];
  routeTables.set(fastify, routes);
  fastify.addHook('onRoute', (route) => {
    routes.push({ methods: (Array.isArray(route.method) ? route.method : [route.method]).map(String), pattern: routePattern(route.url) });
  });
}

/** Methods served at `url` (a request path, query allowed); empty when no route matches the path. */
export function allowedMethods(fastify: object, url: string): string[] {
  const path = url.split('?')[0] ?? url;
  const allowed = new Set<string>();
  for (const route of routeTables.get(fastify) ?? []) if (route.pattern.test(path)) for (const method of route.methods) allowed.add(method);
  return [...allowed];
}

function routePattern(url: string): RegExp {
  const escaped = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

const clientErrors: Record<string, { status: number; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'RequestHeaderFieldsTooLarge', message: 'request headers too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'RequestTimeout', message: 'request timed out' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, code: 'RequestTooLarge', message: 'chunk extensions too large' },
};

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refused before any route saw it (headers too
 * large, malformed request line, timeout) is answered with App Services' error body, not Fastify's own.
 */
export function appServicesClientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const known = clientErrors[error.code ?? ''] ?? { status: 400, code: 'BadRequest', message: 'malformed HTTP request' };
  const body = JSON.stringify({ error: known.message, error_code: known.code });
  const reason = known.status === 431 ? 'Request Header Fields Too Large' : known.status === 408 ? 'Request Timeout' : known.status === 413 ? 'Payload Too Large' : 'Bad Request';
  socket.end(`HTTP/1.1 ${known.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
