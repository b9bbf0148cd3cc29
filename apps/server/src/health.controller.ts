import { Controller, Get, Inject } from '@nestjs/common';
import { SETTINGS, type Settings } from '@tessera/settings';

/** Liveness and readiness probes for Kubernetes and load balancers. */
@Controller()
export class HealthController {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  @Get('healthz')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  ready(): { status: 'ready'; mode: string; services: readonly string[] } {
    return { status: 'ready', mode: this.settings.mode, services: this.settings.services };
  }
}
