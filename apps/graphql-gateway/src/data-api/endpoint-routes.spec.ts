import type { HttpAdapterHost } from '@nestjs/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { EndpointRoutes } from './endpoint-routes';

/** The table on a real Fastify instance, as the host's adapter gives it. */
async function tableOn(fastify: FastifyInstance, add: (routes: EndpointRoutes) => void): Promise<void> {
  const routes = new EndpointRoutes({ httpAdapter: { getInstance: () => fastify } } as unknown as HttpAdapterHost);
  add(routes);
  routes.onModuleInit();
  await fastify.ready();
}

describe('EndpointRoutes', () => {
  let fastify: FastifyInstance;

  beforeEach(() => {
    fastify = Fastify({ bodyLimit: 64 });
  });

  afterEach(async () => {
    await fastify.close();
  });

  it('hands a request to the first route whose prefix matches, with the raw body and the path after endpoint/', async () => {
    const seen: string[] = [];
    await tableOn(fastify, (routes) => {
      routes.add({ name: 'fixed', matches: (path) => path.startsWith('data/'), handle: async (request, reply) => { seen.push(`fixed ${request.method} ${request.path} ${request.body.toString()}`); await reply.send('fixed'); } });
      routes.add({ name: 'rest', matches: () => true, handle: async (request, reply) => { seen.push(`rest ${request.clientAppId} ${request.path}`); await reply.send('rest'); } });
    });
    const fixed = await fastify.inject({ method: 'POST', url: '/app/a-1/endpoint/data/v1/action/find?x=1', headers: { 'content-type': 'application/json' }, payload: '{"not":"parsed"' });
    expect(fixed.body).toBe('fixed');
    const rest = await fastify.inject({ method: 'GET', url: '/app/a-1/endpoint/anything/else' });
    expect(rest.body).toBe('rest');
    expect(seen).toEqual(['fixed POST data/v1/action/find {"not":"parsed"', 'rest a-1 anything/else']);
  });

  it("answers a path no route claims with the endpoints' not-found body, and an oversized body with RequestTooLarge", async () => {
    await tableOn(fastify, (routes) => routes.add({ name: 'fixed', matches: (path) => path.startsWith('data/'), handle: async (_request, reply) => { await reply.send('fixed'); } }));
    const unknown = await fastify.inject({ method: 'GET', url: '/app/a-1/endpoint/nothing/here' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'no endpoint is configured for route /nothing/here', error_code: 'IncomingWebhookNotFound' });
    const large = await fastify.inject({ method: 'POST', url: '/app/a-1/endpoint/data/v1/action/find', payload: 'x'.repeat(65) });
    expect(large.statusCode).toBe(413);
    expect(large.json()).toEqual({ error: 'request body too large', error_code: 'RequestTooLarge' });
  });
});
