/**
 * The Fastify routes of HTTPS endpoints and incoming webhooks. They live in their own encapsulated Fastify
 * context because these requests are not JSON API calls: every content type is accepted and the body is kept
 * as the raw bytes (signatures are computed over them, and the function gets them as BSON Binary), which the
 * client API's JSON parser would refuse or rewrite. The host's root hooks (trace span, correlation, CORS of
 * the client API) still run for them.
 *
 * `/app/:appId/endpoint/*` is a wildcard: a static path registered elsewhere (the Data API's
 * `/app/:appId/endpoint/data/v1/action/:action`) is more specific and wins in Fastify's router, so the
 * Data API and custom endpoints share the prefix without a dispatch table.
 */
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { clientGoneSignal, edgeMessageHeaders } from '@tessera/http-edge';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpExchange, HttpReply } from './http-exchange';
import { errorReply, HttpFunctionCalls, replyOfError } from './http-function-call';
import { HttpsEndpointsService } from './https-endpoints.service';
import { IncomingWebhooksService } from './incoming-webhooks.service';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
export const ENDPOINT_URL = '/app/:appId/endpoint/*';
export const WEBHOOK_URL = '/api/client/v2.0/app/:appId/service/:service/incoming_webhook/:webhook';
const ENDPOINT_PREFIX = /^\/app\/[^/]+\/endpoint(\/.*)$/;

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
export class EndpointRoutes implements OnModuleInit {
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
      scope.route({ method: METHODS, url: ENDPOINT_URL, handler: (request, reply) => this.handle('endpoint', request, reply) });
      scope.route({ method: METHODS, url: WEBHOOK_URL, handler: (request, reply) => this.handle('webhook', request, reply) });
      await Promise.resolve();
    });
  }

  private async handle(kind: 'endpoint' | 'webhook', request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const exchange = exchangeOf(request);
    const params = request.params as Record<string, string>;
    const context = { signal: clientGoneSignal(reply), headers: edgeMessageHeaders(request) };
    let answer: HttpReply;
    try {
      if (kind === 'endpoint') {
        // The route as sent, undecoded: `%2e%2e` or `..` never turn into another route.
        const route = ENDPOINT_PREFIX.exec(exchange.path)?.[1] ?? '/';
        answer = await this.endpoints.serve(params['appId'] ?? '', route, exchange, context);
      } else {
        answer = await this.webhooks.serve(params['appId'] ?? '', params['service'] ?? '', params['webhook'] ?? '', exchange, context);
      }
    } catch (error) {
      answer = replyOfError(error);
    }
    this.calls.count(kind, answer.status);
    await send(reply, answer);
  }
}
