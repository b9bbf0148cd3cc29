import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { DeployedApps } from '@tessera/platform';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppRequestLimits } from '../rate-limit/app-request-limits';
import { HostingDomains } from './hosting-domains';
import { sendHostingAnswer, splitUrl } from './hosting-reply';
import { HostingService } from './hosting.service';

/** The APIs a site's domain still reaches: the client and admin APIs, HTTPS endpoints and the Data API. */
const API_PATHS = /^\/(api\/|app\/[^/]+\/endpoint(\/|$))/;

/**
 * Serves an app's site at `/` of its own domains (`custom_domain`, `app_default_domain`): a request whose
 * host name is one of them is answered here, before routing, except under `/api/` and `/app/<id>/endpoint/`
 * (so a server whose public URL is the site's domain still serves its APIs there). Any other host name,
 * the API's own included, goes on to the routes untouched. A site's requests spend its app's request budget.
 */
@Injectable()
export class HostingEdge implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly domains: HostingDomains,
    private readonly apps: DeployedApps,
    private readonly hosting: HostingService,
    private readonly limits: AppRequestLimits,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    // Callback style, so that a request for another host name (every API request) goes on at once, without
    // the promise and the turn an async hook costs; a site's request waits for its answer.
    fastify.addHook('onRequest', (request, reply, done) => {
      const appId = this.domains.appFor(request.hostname);
      if (appId === undefined) return done();
      const { path, query } = splitUrl(request.url);
      if (API_PATHS.test(path)) return done();
      this.answer(appId, path, query, request, reply).then(() => done(), done);
    });
  }

  private async answer(appId: string, path: string, query: string, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    if (!(await this.limits.admit(appId, 'hosting', reply))) return reply;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      void reply.code(405).header('allow', 'GET, HEAD').header('content-type', 'application/json');
      return reply.send(JSON.stringify({ error: `method ${request.method} is not allowed on hosted files`, error_code: 'MethodNotAllowed' }));
    }
    return sendHostingAnswer(reply, await this.hosting.serve(await this.apps.byId(appId), path, query, '', request.headers));
  }
}
