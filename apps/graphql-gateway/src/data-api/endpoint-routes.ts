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

/**
 * App Services' answer for a route no surface serves, the one both the table (no entry matched) and the HTTPS
 * endpoints (no endpoint of the app has the route) give: 404 with the webhook machinery's code, which the SDKs
 * know (realm-core's IncomingWebhookNotFound), as App Services answered from the machinery it served both with.
 */
export const ENDPOINT_NOT_FOUND_CODE = 'IncomingWebhookNotFound';
export const endpointNotFoundMessage = (route: string): string => `no endpoint is configured for route ${route}`;

/**
 * Registers routes in an encapsulated Fastify scope whose raw-bytes parser replaces the JSON parsers for them
 * only (payload signatures are computed over the bytes, and each surface parses its own content types), and
 * whose error handler gives Fastify's own refusals (a body over the limit) App Services' error body.
 */
export function registerRawBodyRoutes(fastify: FastifyInstance, logger: Logger, register: (scope: FastifyInstance) => void): void {
  void fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
      const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
      const body = status === 413 ? { error: 'request body too large', error_code: 'RequestTooLarge' } : status < 500 ? { error: error.message, error_code: 'BadRequest' } : { error: `internal server error (correlation id ${correlationIdOf(request)})`, error_code: 'InternalServerError' };
      if (status === 500) logger.error({ err: error, correlationId: correlationIdOf(request), url: request.url }, 'unhandled HTTP surface error');
      void reply.status(status).header('content-type', 'application/json').send(JSON.stringify(body));
    });
    register(scope);
    await Promise.resolve();
  });
}

@Injectable()
export class EndpointRoutes implements OnModuleInit {
  private readonly routes: EndpointRoute[] = [];
  private readonly logger = new Logger('EndpointRoutes');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  /**
   * Adds a route; routes added earlier win, so a surface with a fixed prefix adds itself before a catch-all.
   * Surfaces add theirs in `onModuleInit`, which Nest runs for an imported module first: a module that adds a
   * catch-all imports the module of the fixed prefixes (EndpointsModule imports DataApiModule).
   */
  add(route: EndpointRoute): void {
    this.routes.push(route);
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    registerRawBodyRoutes(fastify, this.logger, (scope) => {
      scope.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], url: ENDPOINT_PREFIX, handler: (request, reply) => this.dispatch(request, reply) });
    });
  }

  async dispatch(raw: FastifyRequest, reply: FastifyReply): Promise<void> {
    const params = raw.params as { clientAppId: string; '*': string };
    const path = params['*'] ?? '';
    const route = this.routes.find((candidate) => candidate.matches(path));
    if (!route) {
      await reply.status(404).header('content-type', 'application/json').send(JSON.stringify({ error: endpointNotFoundMessage(`/${path}`), error_code: ENDPOINT_NOT_FOUND_CODE }));
      return;
    }
    const body = Buffer.isBuffer(raw.body) ? raw.body : Buffer.alloc(0);
    await route.handle({ clientAppId: params.clientAppId, path, method: raw.method, body, raw }, reply);
  }
}
