import { Controller, Get, Inject, Param, Req } from '@nestjs/common';
import { SETTINGS, type Settings } from '@tessera/settings';
import { AppRegistry } from '@tessera/platform';
import type { FastifyRequest } from 'fastify';

export interface LocationResponse {
  deployment_model: string;
  location: string;
  hostname: string;
  ws_hostname: string;
}

/**
 * `GET /api/client/v2.0/app/<client app id>/location`. realm-core v14 requires hostname and ws_hostname,
 * v12/v13 also deployment_model and location; every later request goes to `hostname`, so it must point
 * back at this server: the configured public URL, or the scheme and host the client used to reach us.
 */
@Controller('api/client/v2.0/app/:appId')
export class LocationController {
  constructor(
    private readonly apps: AppRegistry,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  @Get('location')
  async location(@Param('appId') clientAppId: string, @Req() request: FastifyRequest): Promise<LocationResponse> {
    const app = await this.apps.getByClientAppId(clientAppId);
    const hostname = this.settings.publicUrl ?? `${request.protocol}://${request.headers.host ?? `localhost:${this.settings.port}`}`;
    return {
      deployment_model: app.deployment_model,
      location: app.location,
      hostname,
      ws_hostname: hostname.replace(/^http/, 'ws'),
    };
  }
}
