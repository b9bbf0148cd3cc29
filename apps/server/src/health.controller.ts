import { Controller, Get, HttpException, Inject, Optional } from '@nestjs/common';
import { TransportReadiness } from '@tessera/messaging';
import { SETTINGS, type Settings } from '@tessera/settings';
import { DatastoreWireService } from './datastore-service';

/** Liveness and readiness probes for Kubernetes and load balancers. */
@Controller()
export class HealthController {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly transport: TransportReadiness,
    @Optional() private readonly datastore?: DatastoreWireService,
  ) {}

  @Get('healthz')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Ready while this process's message transport connections are up (503 while NATS is away) and, in the datastore service, while its wire server listens. */
  @Get('readyz')
  ready(): { status: 'ready'; mode: string; services: readonly string[] } {
    const problems = this.transport.problems();
    if (this.datastore && !this.datastore.listening) problems.push('datastore wire server is not listening');
    if (problems.length > 0) throw new HttpException({ status: 'not ready', problems }, 503);
    return { status: 'ready', mode: this.settings.mode, services: this.settings.services };
  }
}
