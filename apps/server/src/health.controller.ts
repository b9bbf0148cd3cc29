import { Controller, Get, HttpException, Inject } from '@nestjs/common';
import { TransportReadiness } from '@tessera/messaging';
import { SETTINGS, type Settings } from '@tessera/settings';

/** Liveness and readiness probes for Kubernetes and load balancers. */
@Controller()
export class HealthController {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly transport: TransportReadiness,
  ) {}

  @Get('healthz')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Ready while this process's message transport connections are up (503 while NATS is away). */
  @Get('readyz')
  ready(): { status: 'ready'; mode: string; services: readonly string[] } {
    const problems = this.transport.problems();
    if (problems.length > 0) throw new HttpException({ status: 'not ready', problems }, 503);
    return { status: 'ready', mode: this.settings.mode, services: this.settings.services };
  }
}
