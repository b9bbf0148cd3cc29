import { ClientProxy, type MsPattern, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { NoResponderError, TransportError } from '../errors';
import { unwrapOutbound } from '../outbound-message';
import { InProcessBus } from './in-process-bus';

export interface InProcessClientOptions {
  bus?: InProcessBus;
}

/**
 * The in-process client proxy: publishes Nest packets on the process-wide bus. A request nobody listens to
 * fails at once with NoResponderError, as NATS "no responders" does; deadlines are the caller's (the facade
 * applies them).
 */
export class InProcessClient extends ClientProxy {
  private readonly bus: InProcessBus;

  constructor(options: InProcessClientOptions = {}) {
    super();
    this.bus = options.bus ?? InProcessBus.shared();
    this._status$.next('connected');
  }

  async connect(): Promise<InProcessBus> {
    return this.bus;
  }

  async close(): Promise<void> {
    // Nothing to release: the bus belongs to the process.
  }

  override on(): void {
    // The bus has no connection events.
  }

  unwrap<T>(): T {
    return this.bus as T;
  }

  protected publish(partialPacket: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    const packet = this.assignPacketId(partialPacket);
    const subject = this.normalizePattern(partialPacket.pattern as MsPattern);
    let active = true;
    try {
      const { data, headers, validated } = unwrapOutbound(packet.data);
      const serialized = JSON.stringify(validated ? { pattern: subject, data, id: packet.id, validated } : { pattern: subject, data, id: packet.id });
      const reply = (text: string): void => {
        if (!active) return;
        const answer = JSON.parse(text) as WritePacket & { id?: string };
        if (answer.id !== undefined && answer.id !== packet.id) return;
        if (answer.err !== undefined || answer.isDisposed) active = false;
        callback({ err: answer.err as unknown, response: answer.response as unknown, isDisposed: answer.isDisposed ?? false });
      };
      if (this.bus.publish(subject, serialized, headers, reply) === 0) {
        active = false;
        callback({ err: new NoResponderError(subject), isDisposed: true });
      }
    } catch (error) {
      active = false;
      callback({ err: new TransportError(subject, error), isDisposed: true });
    }
    return () => {
      active = false;
    };
  }

  protected async dispatchEvent<T = undefined>(packet: ReadPacket): Promise<T> {
    const subject = this.normalizePattern(packet.pattern as MsPattern);
    const { data, headers, validated } = unwrapOutbound(packet.data);
    this.bus.publish(subject, JSON.stringify(validated ? { pattern: subject, data, validated } : { pattern: subject, data }), headers);
    return undefined as T;
  }
}
