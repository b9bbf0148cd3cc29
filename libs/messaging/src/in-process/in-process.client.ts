import { ClientProxy, type MsPattern, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { type MessageHeaderMap } from '@tessera/contracts';
import { NoResponderError, TransportError } from '../errors';
import { unwrapOutbound } from '../outbound-message';
import { InProcessBus } from './in-process-bus';

/** A request in flight on the fast path: its last response once the handler is done, and how to stop listening. */
export interface InProcessRequest {
  reply: Promise<unknown>;
  cancel: () => void;
}

let fastPacketCounter = 0;

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

  /**
   * A request without Nest's observable plumbing (the facade's path for commands on the in-process bus):
   * the same packet on the same bus, answered by the same handler, and settled as `send` would settle it:
   * with the last response once the handler is done, or rejected with the handler's error, NoResponderError
   * or TransportError. The caller applies deadlines and cancellation; `cancel` drops a late answer.
   */
  request(subject: string, data: unknown, headers: MessageHeaderMap, validated: boolean): InProcessRequest {
    const id = `fast-${++fastPacketCounter}`;
    let active = true;
    const reply = new Promise<unknown>((resolve, reject) => {
      let last: unknown;
      const onReply = (packet: object): void => {
        if (!active) return;
        const answer = packet as WritePacket & { id?: string };
        if (answer.id !== undefined && answer.id !== id) return;
        if (answer.err !== undefined && answer.err !== null) {
          active = false;
          // The handler's error body, given to the facade as Nest's observer would give it.
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
          reject(answer.err);
          return;
        }
        if (answer.response !== undefined) last = answer.response;
        if (answer.isDisposed) {
          active = false;
          resolve(last);
        }
      };
      try {
        // The packet is handed over, not serialized: the facade made `data` for this request alone.
        const packet = validated ? { pattern: subject, data, id, validated } : { pattern: subject, data, id };
        if (this.bus.request(subject, packet, headers, onReply) === 0) {
          active = false;
          reject(new NoResponderError(subject));
        }
      } catch (error) {
        active = false;
        reject(new TransportError(subject, error));
      }
    });
    return {
      reply,
      cancel: () => {
        active = false;
      },
    };
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
