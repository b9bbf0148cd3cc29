import type { FastifyInstance } from 'fastify';

/**
 * realm-core accepts a JSON body only when `Content-Type` is exactly `application/json`, and realm-web
 * treats an empty body sent with that type as an error. This hook makes every JSON response say exactly
 * `application/json` and strips the type from empty responses.
 */
export function installAppServicesContentType(fastify: FastifyInstance): void {
  // Callback style: synchronous work needs no promise and no turn of its own.
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json') && type !== 'application/json') reply.header('content-type', 'application/json');
    if (payload === '' || payload === undefined || payload === null) reply.removeHeader('content-type');
    done(null, payload);
  });
}
