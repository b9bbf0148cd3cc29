/**
 * The HTTP routes of HTTPS endpoints and incoming webhooks. Custom endpoints are an entry of the
 * `/app/<client app id>/endpoint/*` route table (EndpointRoutes), after the Data API's `data/...`: the entry
 * takes every other path. Incoming webhooks have their own route, in an encapsulated Fastify context that
 * keeps the body as raw bytes as the table's does (signatures are computed over them, and the function gets
 * them as BSON Binary), which the client API's JSON parser would refuse or rewrite. The host's root hooks
 * (trace span, correlation, CORS of the client API) still run for both.
 */
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { clientGoneSignal, edgeMessageHeaders } from '@tessera/http-edge';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type EndpointRequest, EndpointRoutes, registerRawBodyRoutes } from '../data-api/endpoint-routes';
import { rawQueryOf } from '../data-api/endpoint-validation';
import type { HttpExchange, HttpReply } from './http-exchange';
import { type CallContext, HttpFunctionCalls, replyOfError } from './http-function-call';
import { HttpsEndpointsService } from './https-endpoints.service';
import { IncomingWebhooksService } from './incoming-webhooks.service';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
export const WEBHOOK_URL = '/api/client/v2.0/app/:appId/service/:service/incoming_webhook/:webhook';

const NO_BODY = Buffer.alloc(0);

/** What the handler read off the wire; `body` when the caller has read it already (the endpoint table has). */
function exchangeOf(request: FastifyRequest, body: unknown = request.body): HttpExchange {
  const url = request.raw.url ?? request.url;
  const mark = url.indexOf('?');
  return {
    method: request.method,
    path: mark >= 0 ? url.slice(0, mark) : url,
    rawQuery: rawQueryOf(url),
    headers: request.headers,
    rawHeaders: request.raw.rawHeaders,
    body: Buffer.isBuffer(body) ? body : NO_BODY,
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
  private readonly logger = new Logger('HttpFunctionRoutes');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly routes: EndpointRoutes,
    private readonly endpoints: HttpsEndpointsService,
    private readonly webhooks: IncomingWebhooksService,
    private readonly calls: HttpFunctionCalls,
  ) {}

  onModuleInit(): void {
    // Every path the Data API (added first: DataApiModule is imported by this module's) leaves.
    this.routes.add({ name: 'https-endpoints', matches: () => true, handle: (request, reply) => this.handleEndpoint(request, reply) });
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    registerRawBodyRoutes(fastify, this.logger, (scope) => {
      scope.route({
        method: METHODS,
        url: WEBHOOK_URL,
        handler: (request, reply) => {
          const params = request.params as Record<string, string | undefined>;
          return this.answer('webhook', request, request.body, reply, (exchange, context) => this.webhooks.serve(params['appId'] ?? '', params['service'] ?? '', params['webhook'] ?? '', exchange, context));
        },
      });
    });
  }

  /** Serves a custom HTTPS endpoint. Routes match exactly, and none holds `.` or `..` segments, so no path reaches another. */
  handleEndpoint(request: EndpointRequest, reply: FastifyReply): Promise<void> {
    return this.answer('endpoint', request.raw, request.body, reply, (exchange, context) => this.endpoints.serve(request.clientAppId, `/${request.path}`, exchange, context));
  }

  private async answer(kind: 'endpoint' | 'webhook', request: FastifyRequest, body: unknown, reply: FastifyReply, serve: (exchange: HttpExchange, context: CallContext) => Promise<HttpReply>): Promise<void> {
    const context = { signal: clientGoneSignal(reply), headers: edgeMessageHeaders(request) };
    let answer: HttpReply;
    try {
      answer = await serve(exchangeOf(request, body), context);
    } catch (error) {
      answer = replyOfError(error);
    }
    this.calls.count(kind, answer.status);
    await send(reply, answer);
  }
}
