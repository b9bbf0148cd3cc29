import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { RequestMetadata } from '@tessera/contracts';
import { clientGoneSignal, edgeMessageHeaders } from '@tessera/http-edge';
import { DeployedApps } from '@tessera/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GraphqlApps } from './graphql-apps.service';
import { GraphqlAuthenticator } from './graphql-authenticator';
import { directCall, runDirect } from './graphql-direct';
import { GraphqlEndpointError } from './graphql.error';
import { GraphqlExecutor } from './graphql-executor';

/**
 * `POST` (and `GET` for queries) `/api/client/v2.0/app/<client app id>/graphql`: the app's generated
 * schema on graphql-yoga, for a user with a valid access token. Token and app errors answer with App
 * Services error bodies; everything after that is a GraphQL response.
 */
@Controller('api/client/v2.0/app/:appId/graphql')
export class GraphqlController {
  constructor(
    private readonly deployed: DeployedApps,
    private readonly authenticator: GraphqlAuthenticator,
    private readonly apps: GraphqlApps,
    private readonly executor: GraphqlExecutor,
  ) {}

  // The app id is read from the request rather than by `@Param`: Nest resolves each decorated parameter
  // through its own promises, a cost every GraphQL request paid.
  @Post()
  post(@Req() request: FastifyRequest<{ Params: { appId: string } }>, @Res() reply: FastifyReply): Promise<void> {
    return this.handle(request.params.appId, request, reply);
  }

  @Get()
  get(@Param('appId') clientAppId: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.handle(clientAppId, request, reply);
  }

  private async handle(clientAppId: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await this.authenticator.authenticate(request.headers.authorization, clientAppId);
    const deployed = await this.appOf(clientAppId);
    const app = { id: deployed.record._id, deploymentId: deployed.deployment?._id, config: deployed.config };
    const entry = this.apps.entryFor(app, clientAppId);
    const metadata: RequestMetadata = {
      origin: 'graphql',
      httpMethod: request.method,
      ...(request.ip ? { remoteIpAddress: request.ip } : {}),
      ...(request.headers['user-agent'] ? { httpUserAgent: request.headers['user-agent'] } : {}),
    };
    // Only custom resolvers call functions: the request's signal and bus headers are made when one does.
    const graphql = this.executor.contextFor(app, entry.model, principal.user, metadata, () => ({ signal: clientGoneSignal(reply), headers: edgeMessageHeaders(request) }));
    const call = directCall(request, entry.endpoint);
    const direct = call ? await runDirect(entry.yoga, call, { graphql }) : undefined;
    if (direct && 'body' in direct) {
      await reply.status(direct.status).header('content-type', direct.contentType).send(direct.body);
      return;
    }
    if (!direct) yogaReadableBody(request);
    await sendResponse(reply, direct ? direct.response : await entry.yoga.handleNodeRequestAndResponse(request, reply, { graphql }));
  }

  private async appOf(clientAppId: string): Promise<Awaited<ReturnType<DeployedApps['byClientAppId']>>> {
    try {
      return await this.deployed.byClientAppId(clientAppId);
    } catch (error) {
      if (error instanceof Error && 'errorCode' in error && error.errorCode === 'AppNotFound') {
        throw new GraphqlEndpointError('AppNotFound', `cannot find app using Client App ID '${clientAppId}'`, 404);
      }
      throw error;
    }
  }
}

/**
 * yoga (through @whatwg-node/server) takes a body Fastify already parsed only when it has keys; for `{}`,
 * `null`, a number or a boolean it reads the consumed stream instead and answers "POST body sent invalid
 * JSON" with the parser's message. Such a body is handed back as its JSON text, which yoga parses itself.
 */
function yogaReadableBody(request: FastifyRequest): void {
  const body = request.body;
  const scalar = body === null || typeof body === 'number' || typeof body === 'boolean';
  const empty = typeof body === 'object' && body !== null && (Array.isArray(body) || Object.getPrototypeOf(body) === Object.prototype || Object.getPrototypeOf(body) === null) && Object.keys(body).length === 0;
  if (scalar || empty) request.body = Buffer.from(JSON.stringify(body));
}

/** A fetch-API Response of yoga's, sent through Fastify. */
async function sendResponse(reply: FastifyReply, response: Response): Promise<void> {
  // yoga refuses a content type it cannot read (text/plain, which Fastify parses) with an empty 415; the client
  // API answers it with the App Services body, as Fastify's own 415 for types it cannot parse.
  if (response.status === 415 && !response.body) throw new GraphqlEndpointError('BadRequest', 'Unsupported Media Type', 415);
  response.headers.forEach((value, key) => void reply.header(key, value));
  reply.status(response.status);
  await reply.send(response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
}
