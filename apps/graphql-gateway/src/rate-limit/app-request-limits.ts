/**
 * Per-app request budgets on every client-facing HTTP surface of an app: the client API (auth, functions,
 * remote data access, location), GraphQL, incoming webhooks, the Data API, custom HTTPS endpoints and hosting.
 * Each app has one token bucket in this process (settings `appRequestLimit`), so an app flooding the gateway
 * spends its own budget and gets 429 `TooManyRequests` with `Retry-After`, while other apps keep theirs.
 *
 * Requests are matched to their app by the path (`/api/client/v2.0/app/<id>/`, `/app/<id>/endpoint/`,
 * `/hosting/<id>/`) or, for `/api/client/v2.0/auth/...`, by the app its bearer token names; a site served at
 * its own domain is admitted by HostingEdge through `admit`. The check runs in `preParsing`, after the
 * onRequest hooks (so a refusal carries the CORS headers and the correlation id, and preflights are not
 * counted) and before any body is read. Names no app (an unknown id): the route answers it, uncounted.
 */
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type Counter, metrics } from '@opentelemetry/api';
import { TokenBuckets } from '@tessera/http-edge';
import { DeployedApps } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, tokenAppId } from '../client-api/auth/tokens';

/** The HTTP surfaces of an app, as the refusal counter labels them. */
export type AppSurface = 'client-api' | 'graphql' | 'webhook' | 'data-api' | 'endpoint' | 'hosting';

/** Where a request is going: an app named by its client app id, or by the bearer token it carries. */
export type SurfaceTarget = { surface: AppSurface; clientAppId: string } | { surface: AppSurface; byToken: true };

const CLIENT_APP = /^\/api\/client\/v2\.0\/app\/([^/?#]+)(\/[^?#]*)?/;
const ENDPOINT_TREE = /^\/app\/([^/?#]+)\/endpoint(\/[^?#]*)?/;
const HOSTING = /^\/hosting\/([^/?#]+)/;

/** The surface and app a request URL names, or undefined for paths that are no app's (admin API, health). */
export function surfaceOf(url: string): SurfaceTarget | undefined {
  let match = CLIENT_APP.exec(url);
  if (match) {
    const rest = match[2] ?? '';
    const surface: AppSurface = rest === '/graphql' || rest.startsWith('/graphql/') ? 'graphql' : /^\/service\/[^/]+\/incoming_webhook\//.test(rest) ? 'webhook' : 'client-api';
    return { surface, clientAppId: decode(match[1] ?? '') };
  }
  if (url.startsWith('/api/client/v2.0/auth/')) return { surface: 'client-api', byToken: true };
  match = ENDPOINT_TREE.exec(url);
  if (match) return { surface: /^\/data(\/|$)/.test(match[2] ?? '') ? 'data-api' : 'endpoint', clientAppId: decode(match[1] ?? '') };
  match = HOSTING.exec(url);
  if (match) return { surface: 'hosting', clientAppId: decode(match[1] ?? '') };
  return undefined;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

@Injectable()
export class AppRequestLimits implements OnModuleInit {
  private readonly buckets: TokenBuckets;
  private readonly refused: Counter = metrics.getMeter('@tessera/graphql-gateway').createCounter('tessera.http.rate_limited', {
    description: 'Requests refused with 429 because their app spent its request budget, by surface and app',
  });

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly deployed: DeployedApps,
    @Inject(SETTINGS) settings: Settings,
  ) {
    const { requestsPerSecond, burst } = settings.appRequestLimit;
    this.buckets = new TokenBuckets({ ratePerSecond: requestsPerSecond, burst });
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify || !this.buckets.enabled) return;
    // Callback style, so that a request of no app's surface, or of an app this process already knows by its
    // client app id and whose budget holds, goes on at once, without the promises and turns of an async hook.
    fastify.addHook('preParsing', (request, reply, payload, done) => {
      const target = surfaceOf(request.url);
      if (!target) return done(null, payload);
      const known = 'clientAppId' in target ? this.deployed.knownIdOf(target.clientAppId) : undefined;
      const admitted = known === undefined ? this.admitRequest(target, request, reply) : this.takeOrRefuse(known, target.surface, reply);
      if (admitted === true) return done(null, payload);
      admitted.then(() => done(null, payload), done);
    });
  }

  private async admitRequest(target: SurfaceTarget, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const appId = await this.appIdOf(target, request);
    if (appId !== undefined) await this.admit(appId, target.surface, reply);
  }

  /**
   * Takes one request of the app's budget; when it is spent, answers 429 with Retry-After and resolves false
   * (the caller must not answer). Always true when limiting is off.
   */
  async admit(appId: string, surface: AppSurface, reply: FastifyReply): Promise<boolean> {
    return this.takeOrRefuse(appId, surface, reply);
  }

  /** `admit`, answering true at once when the budget holds (the common case needs no promise). */
  private takeOrRefuse(appId: string, surface: AppSurface, reply: FastifyReply): true | Promise<boolean> {
    const taken = this.buckets.take(appId, Date.now());
    if (taken.ok) return true;
    return this.refuse(appId, surface, reply, taken.retryAfterSeconds);
  }

  private async refuse(appId: string, surface: AppSurface, reply: FastifyReply, retryAfterSeconds: number): Promise<boolean> {
    this.refused.add(1, { surface, app_id: appId });
    await reply
      .code(429)
      .header('retry-after', String(retryAfterSeconds))
      .header('content-type', 'application/json')
      .send(JSON.stringify({ error: `too many requests to this app: retry in ${retryAfterSeconds} s`, error_code: 'TooManyRequests' }));
    return false;
  }

  /** The app's `_id`, when the request names an app this server has; undefined otherwise (never throws). */
  private async appIdOf(target: SurfaceTarget, request: FastifyRequest): Promise<string | undefined> {
    try {
      if ('clientAppId' in target) return (await this.deployed.byClientAppId(target.clientAppId)).record._id;
      const token = bearerToken(request.headers.authorization);
      if (!token) return undefined;
      return (await this.deployed.byId(tokenAppId(token))).record._id;
    } catch {
      return undefined;
    }
  }
}
