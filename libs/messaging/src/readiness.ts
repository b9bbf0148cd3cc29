import { Injectable } from '@nestjs/common';
import { type Observable } from 'rxjs';

/**
 * Whether this process's connections to the message transport are up, for the readiness probe. Nest's NATS
 * client and server report `connected`, `disconnected` and `reconnecting`; the in-process transport never
 * disconnects and reports nothing.
 */
@Injectable()
export class TransportReadiness {
  private readonly states = new Map<string, string>();

  /** Follows a Nest client proxy or microservice server under `name`. */
  watch(name: string, source: { readonly status: Observable<string> }): void {
    source.status.subscribe((status) => this.states.set(name, status));
  }

  /** One line per connection that is not connected; empty when ready. */
  problems(): string[] {
    return [...this.states].filter(([, status]) => status !== 'connected').map(([name, status]) => `${name}: ${status}`);
  }
}
