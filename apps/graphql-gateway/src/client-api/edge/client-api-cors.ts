import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';
import { type ClientApp, ClientApps } from '../client-apps.service';
import { bearerToken, tokenAppId } from '../auth/tokens';

const CLIENT_API = '/api/client/v2.0/';
/** The Data API and custom HTTPS endpoints: `/app/<client app id>/endpoint/...`. */
const ENDPOINT_TREE = /^\/app\/([^/?#]+)\/endpoint(\/|\?|$)/;
const allowedHeaders = 'Authorization, Content-Type, Accept, X-Requested-With, X-BAAS-Request-Origin';
const allowedMethods = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * CORS of the client API and of the endpoint tree (Data API, HTTPS endpoints) from each app's
 * `security.allowed_request_origins` (config.json). Browsers send `Origin`. On the client API an app with no
 * list accepts every origin, an app with a list accepts only those. The endpoint tree is left alone unless the
 * app has a list (App Services answered it with no CORS headers: browsers could not call it, and an endpoint
 * function could set its own headers); with a list it is treated as the client API is. A listed origin gets
 * `Access-Control-Allow-Origin` and its preflight answered; another origin is refused with 403
 * DomainNotAllowed, preflight or not. The app is named by the path (`/app/<client app id>/...`) or by the
 * token of `/auth/...` requests. Preflights are answered here, before routing, since no route answers OPTIONS.
 */
@Injectable()
export class ClientApiCors implements OnModuleInit {
  private readonly logger = new Logger('ClientApiCors');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly apps: ClientApps,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    // Callback style, so that a request without an Origin (every request but a browser's) goes on at once,
    // without the promise and the turn an async hook costs; one with an Origin waits for its answer.
    fastify.addHook('onRequest', (request, reply, done) => {
      const endpointTree = ENDPOINT_TREE.exec(request.url);
      if (!endpointTree && !request.url.startsWith(CLIENT_API)) return done();
      const origin = request.headers.origin;
      if (typeof origin !== 'string' || origin === '') return done();
      this.answerCors(request, reply, endpointTree, origin).then(() => done(), done);
    });
  }

  /** What the hook does for a request with an Origin: headers set, or the request answered (403, preflight). */
  private async answerCors(request: FastifyRequest, reply: FastifyReply, endpointTree: RegExpExecArray | null, origin: string): Promise<void> {
    const preflight = request.method === 'OPTIONS';
    const app = endpointTree ? await this.endpointAppOf(endpointTree[1] ?? '') : await this.appOf(request);
    if (endpointTree && (!app || !hasOriginList(app))) return;
    if (app && !originAllowed(app, origin)) {
      const error = new ClientApiError(ClientApiErrorCode.DomainNotAllowed, `origin '${origin}' is not allowed to make requests to this app`);
      await reply.status(error.httpStatus).header('content-type', 'application/json').send(JSON.stringify(error.toBody()));
      return;
    }
    void reply.header('access-control-allow-origin', origin).header('access-control-allow-credentials', 'true').header('vary', 'Origin');
    if (preflight) {
      const requested = request.headers['access-control-request-headers'];
      await reply
        .status(204)
        .header('access-control-allow-methods', allowedMethods)
        .header('access-control-allow-headers', typeof requested === 'string' && requested ? requested : allowedHeaders)
        .header('access-control-max-age', '600')
        .send();
      return;
    }
    void reply.header('access-control-expose-headers', 'x-baas-location, Content-Type');
  }

  /** The app of an endpoint-tree request, or undefined when there is none (the route then answers). */
  private async endpointAppOf(clientAppId: string): Promise<ClientApp | undefined> {
    try {
      return await this.apps.byClientAppId(decodeURIComponent(clientAppId));
    } catch {
      return undefined;
    }
  }

  /** The app the request is for, or undefined when the request names none we know (the route then answers). */
  private async appOf(request: FastifyRequest): Promise<ClientApp | undefined> {
    try {
      const match = /^\/api\/client\/v2\.0\/app\/([^/?]+)/.exec(request.url);
      if (match?.[1]) return await this.apps.byClientAppId(decodeURIComponent(match[1]));
      const token = bearerToken(request.headers.authorization);
      if (token) return await this.apps.byAppId(tokenAppId(token));
    } catch (error) {
      if (!(error instanceof ClientApiError) && !(error instanceof Error && 'errorCode' in error)) this.logger.warn(`could not resolve the app of a CORS request: ${String(error)}`);
    }
    return undefined;
  }
}

function hasOriginList(app: ClientApp): boolean {
  const allowed = app.config.settings.security?.allowed_request_origins;
  return Array.isArray(allowed) && allowed.length > 0;
}

function originAllowed(app: ClientApp, origin: string): boolean {
  const allowed = app.config.settings.security?.allowed_request_origins;
  if (!Array.isArray(allowed) || allowed.length === 0) return true;
  return allowed.some((entry) => entry === '*' || entry.replace(/\/+$/, '') === origin);
}

