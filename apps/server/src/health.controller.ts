import { Controller, Get, Inject, Optional } from '@nestjs/common';
import { embeddedStoreProblems } from '@tessera/datastore';
import { TesseraError } from '@tessera/domain';
import { TransportReadiness } from '@tessera/messaging';
import { SETTINGS, type Settings } from '@tessera/settings';
import { DatastoreWireService } from './datastore-service';

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
    @Optional() private readonly datastore?: DatastoreWireService,
  ) {}

  @Get('healthz')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready while this process's message transport connections are up (503 while NATS is away), every
   * embedded datastore it holds takes writes (503 naming the log failure otherwise) and, in the datastore
   * service, while its wire server listens.
   */
  @Get('readyz')
  ready(): { status: 'ready'; mode: string; services: readonly string[] } {
    const problems = [...this.transport.problems(), ...embeddedStoreProblems()];
    if (this.datastore && !this.datastore.ready) problems.push('datastore wire server is not listening');
    if (problems.length > 0) throw new NotReadyError(`not ready: ${problems.join('; ')}`);
    return { status: 'ready', mode: this.settings.mode, services: this.settings.services };
  }
}
