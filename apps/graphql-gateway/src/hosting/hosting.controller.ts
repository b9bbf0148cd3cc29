import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { DeployedApps } from '@tessera/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendHostingAnswer, splitUrl } from './hosting-reply';
import { HostingService } from './hosting.service';

/**
 * `/hosting/<client app id>/<path>`: an app's hosted files on the API's own host (HEAD too, which Fastify
 * answers from the GET route). An unknown app is the client API's 404 AppNotFound.
 */
@Controller('hosting/:clientAppId')
export class HostingController {
  constructor(
    private readonly apps: DeployedApps,
    private readonly hosting: HostingService,
  ) {}

  @Get()
  async root(@Param('clientAppId') clientAppId: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // The site's root without its slash: relative links need it.
    await this.apps.byClientAppId(clientAppId);
    const { query } = splitUrl(request.url);
    void reply.code(301).header('location', `/hosting/${encodeURIComponent(clientAppId)}/${query}`).send();
  }

  @Get('*')
  async file(@Param('clientAppId') clientAppId: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const app = await this.apps.byClientAppId(clientAppId);
    const { path, query } = splitUrl(request.url);
    // The raw path after the mount, still percent-encoded: decoded once, in hostedPath.
    const mount = path.slice(0, path.indexOf('/', '/hosting/'.length));
    sendHostingAnswer(reply, await this.hosting.serve(app, path.slice(mount.length), query, mount, request.headers));
  }
}
