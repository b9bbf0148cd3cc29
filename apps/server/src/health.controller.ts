import { Controller, Get, Inject } from '@nestjs/common';
import { TesseraError } from '@tessera/domain';
import { TransportReadiness } from '@tessera/messaging';
import { SETTINGS, type Settings } from '@tessera/settings';

/**
 * 503 with the App Services error body, naming every connection that is down (an HttpException of 5xx
 * would reach clients as an internal error through the exception filter).
 */
export class NotReadyError extends TesseraError {
  readonly errorCode = 'ServiceUnavailable';
  readonly httpStatus = 503;
}

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
    if (problems.length > 0) throw new NotReadyError(`not ready: ${problems.join('; ')}`);
    return { status: 'ready', mode: this.settings.mode, services: this.settings.services };
  }
}
