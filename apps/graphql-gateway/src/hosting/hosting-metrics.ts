import { Injectable } from '@nestjs/common';
import { type Counter, metrics } from '@opentelemetry/api';

/** The hosting edge's instruments, from the global meter provider (a process without one records nothing). */
@Injectable()
export class HostingMetrics {
  /** Hosting requests answered, by status code (no app or path: keeps the attribute set small). */
  readonly requests: Counter = metrics.getMeter('@tessera/graphql-gateway').createCounter('tessera.hosting.requests', { description: 'Static hosting requests answered' });
}
