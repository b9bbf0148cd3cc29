import type { FastifyInstance } from 'fastify';

/**
 * realm-core accepts a JSON body only when `Content-Type` is exactly `application/json`, and realm-web
 * treats an empty body sent with that type as an error. This hook makes every JSON response say exactly
 * `application/json` and strips the type from empty responses.
 */
export function installAppServicesContentType(fastify: FastifyInstance): void {
  fastify.addHook('onSend', async (_request, reply, payload) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json') && type !== 'application/json') reply.header('content-type', 'application/json');
    if (payload === '' || payload === undefined || payload === null) reply.removeHeader('content-type');
    return payload;
  });
}
