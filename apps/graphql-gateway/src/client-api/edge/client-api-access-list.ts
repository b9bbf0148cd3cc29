import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { accessAddress, accessCheckOf } from '@tessera/app-config';
import { DeployedApps } from '@tessera/platform';
import type { FastifyInstance } from 'fastify';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';

/** The app a client request names: `/api/client/v2.0/app/<id>/...` or the endpoint tree `/app/<id>/endpoint/...`. */
const APP_PATH = /^\/(?:api\/client\/v2\.0\/app|app)\/([^/?#]+)(?:\/|\?|$)/;
const ENDPOINT_TREE = /^\/app\/[^/?#]+\/endpoint(?:\/|\?|$)/;

/**
 * The app's IP access list (admin API `security/access_list`) at the client edge: a request for an app with
 * a list, from an address not on it, is answered 403 IPAddressNotAllowed before any route runs (the client
 * API, GraphQL, webhooks, the Data API and HTTPS endpoints; the sync service checks its WebSocket upgrades
 * itself). The address is the connection's peer, or the one a proxy on a private address appended to
 * X-Forwarded-For (accessAddress). Requests that name no app, or an unknown one, go on to their route.
 */
@Injectable()
export class ClientApiAccessList implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly deployed: DeployedApps,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    fastify.addHook('onRequest', (request, reply, done) => {
      const url = request.url;
      if (!url.startsWith('/api/client/v2.0/app/') && !ENDPOINT_TREE.test(url)) return done();
      const id = APP_PATH.exec(url)?.[1];
      if (!id) return done();
      let clientAppId: string;
      try {
        clientAppId = decodeURIComponent(id);
      } catch {
        return done();
      }
      this.deployed.byClientAppId(clientAppId).then(
        (app) => {
          const check = accessCheckOf(app.config);
          const address = check ? accessAddress(request.socket.remoteAddress, request.headers['x-forwarded-for']) : '';
          if (!check || check(address)) return done();
          const error = new ClientApiError(ClientApiErrorCode.IPAddressNotAllowed, `requests from ${address || 'this address'} are not allowed by the app's IP access list`);
          reply.status(error.httpStatus).header('content-type', 'application/json').send(JSON.stringify(error.toBody()));
        },
        // An unknown app: its route answers (AppNotFound), as it would without an access list.
        () => done(),
      );
    });
  }
}
