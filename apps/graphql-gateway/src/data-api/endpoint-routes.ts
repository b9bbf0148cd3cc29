/**
 * The `/app/<client app id>/endpoint/...` tree App Services served its HTTP surfaces under: the Data API
 * at `endpoint/data/<version>/action/<action>` and an app's custom HTTPS endpoints at `endpoint/<route>`.
 * One Fastify route takes every method under the prefix, with the body kept as raw bytes (payload
 * signatures are computed over them, and each surface parses its own content types), and hands the
 * request to the first entry of the route table whose `matches` accepts the path. Surfaces add themselves
 * with `EndpointRoutes.add`; the Data API's entry claims `data/...`. This file must not know any surface.
 */
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { correlationIdOf } from '@tessera/http-edge';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The prefix every endpoint route sits under (App Services' Data API and HTTPS endpoints base URL). */
export const ENDPOINT_PREFIX = '/app/:clientAppId/endpoint/*';

/** A request under the endpoint prefix, as a route of the table sees it. */
export interface EndpointRequest {
  clientAppId: string;
  /** The path after `endpoint/`, without the query string (`data/v1/action/find`). */
  path: string;
  method: string;
  /** The raw body (empty when none was sent). */
  body: Buffer;
  raw: FastifyRequest;
}

export interface EndpointRoute {
  /** Names the route in errors and logs (`data-api`, `https-endpoints`). */
  name: string;
  matches(path: string): boolean;
  /** Answers the request through `reply`; errors it throws are answered 500 with a correlation id. */
  handle(request: EndpointRequest, reply: FastifyReply): Promise<void>;
}

/** Answer for a path no route claims: App Services' body for an unknown endpoint. */
const noRoute = (path: string) => JSON.stringify({ error: `no endpoint matches '/${path}'`, error_code: 'EndpointNotFound' });

@Injectable()
export class EndpointRoutes implements OnModuleInit {
  private readonly routes: EndpointRoute[] = [];
  private readonly logger = new Logger('EndpointRoutes');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  /** Adds a route; routes added earlier win, so a surface with a fixed prefix adds itself before a catch-all. */
  add(route: EndpointRoute): void {
    this.routes.push(route);
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    // An encapsulated scope: its raw-bytes parser replaces the JSON parsers for these routes only.
    void fastify.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
      // Fastify's own refusals here (a body over the limit) get App Services' error body.
      scope.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
        const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
        const body = status === 413 ? { error: 'request body too large', error_code: 'RequestTooLarge' } : status < 500 ? { error: error.message, error_code: 'BadRequest' } : { error: `internal server error (correlation id ${correlationIdOf(request)})`, error_code: 'InternalServerError' };
        if (status === 500) this.logger.error({ err: error, correlationId: correlationIdOf(request), url: request.url }, 'unhandled endpoint error');
        void reply.status(status).header('content-type', 'application/json').send(JSON.stringify(body));
      });
      scope.route({
        method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        url: ENDPOINT_PREFIX,
        handler: (request, reply) => this.dispatch(request, reply),
      });
    });
  }

  async dispatch(raw: FastifyRequest, reply: FastifyReply): Promise<void> {
    const params = raw.params as { clientAppId: string; '*': string };
    const path = params['*'] ?? '';
    const route = this.routes.find((candidate) => candidate.matches(path));
    if (!route) {
      await reply.status(404).header('content-type', 'application/json').send(noRoute(path));
      return;
    }
    const body = Buffer.isBuffer(raw.body) ? raw.body : Buffer.alloc(0);
    await route.handle({ clientAppId: params.clientAppId, path, method: raw.method, body, raw }, reply);
  }
}
