/**
 * The Fastify routes of HTTPS endpoints and incoming webhooks. They live in their own encapsulated Fastify
 * context because these requests are not JSON API calls: every content type is accepted and the body is kept
 * as the raw bytes (signatures are computed over them, and the function gets them as BSON Binary), which the
 * client API's JSON parser would refuse or rewrite. The host's root hooks (trace span, correlation, CORS of
 * the client API) still run for them.
 *
 * `/app/:appId/endpoint/*` is registered here as a wildcard, which a static path registered elsewhere (a
 * Data API route `/app/:appId/endpoint/data/v1/action/:action`) outranks in Fastify's router. When the
 * prefix is instead served by one dispatching route with a route table, `handleEndpoint` is that table's
 * entry for custom endpoints (it takes the table's request shape) and `registerEndpointWildcard` goes.
 */
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { clientGoneSignal, edgeMessageHeaders } from '@tessera/http-edge';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpExchange, HttpReply } from './http-exchange';
import { type CallContext, errorReply, HttpFunctionCalls, replyOfError } from './http-function-call';
import { HttpsEndpointsService } from './https-endpoints.service';
import { IncomingWebhooksService } from './incoming-webhooks.service';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
export const ENDPOINT_URL = '/app/:appId/endpoint/*';
export const WEBHOOK_URL = '/api/client/v2.0/app/:appId/service/:service/incoming_webhook/:webhook';

/** A request under `/app/<client app id>/endpoint/`: `path` is what follows `endpoint/`, without the query. */
export interface EndpointPathRequest {
  clientAppId: string;
  path: string;
  method: string;
  body: Buffer;
  raw: FastifyRequest;
}

function exchangeOf(request: FastifyRequest): HttpExchange {
  const url = request.raw.url ?? request.url;
  const query = url.indexOf('?');
  const body = request.body;
  return {
    method: request.method,
    path: query >= 0 ? url.slice(0, query) : url,
    rawQuery: query >= 0 ? url.slice(query + 1) : '',
    headers: request.headers,
    rawHeaders: request.raw.rawHeaders,
    body: Buffer.isBuffer(body) ? body : Buffer.alloc(0),
    remoteAddress: request.ip,
  };
}

async function send(reply: FastifyReply, answer: HttpReply): Promise<void> {
  void reply.status(answer.status);
  for (const [name, values] of Object.entries(answer.headers)) void reply.header(name, values.length === 1 ? values[0] : values);
  await reply.send(answer.body ?? '');
}

@Injectable()
export class HttpFunctionRoutes implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly endpoints: HttpsEndpointsService,
    private readonly webhooks: IncomingWebhooksService,
    private readonly calls: HttpFunctionCalls,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    void fastify.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
      // What Fastify refuses before the handler (a body over the limit, a malformed content type) in App Services' shape.
      scope.setErrorHandler(async (error: { statusCode?: number; message?: string }, _request, reply) => {
        const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
        const body = status === 413 ? { error: 'request body too large', error_code: 'RequestTooLarge' } : status < 500 ? { error: error.message ?? 'bad request', error_code: 'BadRequest' } : { error: 'internal server error', error_code: 'InternalServerError' };
        await send(reply, errorReply(status, body));
      });
      this.registerEndpointWildcard(scope);
      scope.route({
        method: METHODS,
        url: WEBHOOK_URL,
        handler: (request, reply) => {
          const params = request.params as Record<string, string | undefined>;
          return this.answer('webhook', request, reply, (exchange, context) => this.webhooks.serve(params['appId'] ?? '', params['service'] ?? '', params['webhook'] ?? '', exchange, context));
        },
      });
      await Promise.resolve();
    });
  }

  private registerEndpointWildcard(scope: FastifyInstance): void {
    scope.route({
      method: METHODS,
      url: ENDPOINT_URL,
      handler: (request, reply) => {
        const params = request.params as Record<string, string | undefined>;
        return this.handleEndpoint({ clientAppId: params['appId'] ?? '', path: params['*'] ?? '', method: request.method, body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0), raw: request }, reply);
      },
    });
  }

  /** Serves a custom HTTPS endpoint. Routes match exactly, and none holds `.` or `..` segments, so no path reaches another. */
  handleEndpoint(request: EndpointPathRequest, reply: FastifyReply): Promise<void> {
    return this.answer('endpoint', request.raw, reply, (exchange, context) => this.endpoints.serve(request.clientAppId, `/${request.path}`, { ...exchange, body: request.body }, context));
  }

  private async answer(kind: 'endpoint' | 'webhook', request: FastifyRequest, reply: FastifyReply, serve: (exchange: HttpExchange, context: CallContext) => Promise<HttpReply>): Promise<void> {
    const context = { signal: clientGoneSignal(reply), headers: edgeMessageHeaders(request) };
    let answer: HttpReply;
    try {
      answer = await serve(exchangeOf(request), context);
    } catch (error) {
      answer = replyOfError(error);
    }
    this.calls.count(kind, answer.status);
    await send(reply, answer);
  }
}
