import { ClientNats, type MsPattern, type NatsOptions, NatsRecord, type ReadPacket, type WritePacket } from '@nestjs/microservices';
import { headers as natsHeaders, type Msg, type MsgHdrs } from 'nats';
import { type MessageHeaderMap } from '@tessera/contracts';
import { NoResponderError, TransportError } from '../errors';
import { OutboundMessage } from '../outbound-message';

export type NatsClientOptions = Required<NatsOptions>['options'];

/**
 * Nest's NATS client, taught two things: OutboundMessage headers become NATS headers, and the server's
 * "no responders" status (503) becomes NoResponderError at once instead of an empty-response error.
 */
export class TesseraNatsClient extends ClientNats {
  constructor(options: NatsClientOptions) {
    super(options);
  }

  override createSubscriptionHandler(
    packet: Parameters<ClientNats['createSubscriptionHandler']>[0],
    callback: (packet: WritePacket) => unknown,
  ): ReturnType<ClientNats['createSubscriptionHandler']> {
    const inner = super.createSubscriptionHandler(packet, callback);
    const subject = this.normalizePattern(packet.pattern as MsPattern);
    return async (error, message) => {
      if (!error && (message as unknown as Msg | undefined)?.headers?.code === 503) {
        callback({ err: new NoResponderError(subject), isDisposed: true });
        return;
      }
      try {
        await inner(error, message);
      } catch (failure) {
        callback({ err: new TransportError(subject, failure), isDisposed: true });
      }
    };
  }

  protected override publish(partialPacket: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    return super.publish({ ...partialPacket, data: toNatsRecord(partialPacket.data) }, callback);
  }

  protected override dispatchEvent(packet: ReadPacket): Promise<unknown> {
    return super.dispatchEvent({ ...packet, data: toNatsRecord(packet.data) });
  }
}

function toNatsRecord(data: unknown): unknown {
  if (!(data instanceof OutboundMessage)) return data;
  return new NatsRecord(data.data, toMsgHdrs(data.headers));
}

function toMsgHdrs(headers: MessageHeaderMap): MsgHdrs | undefined {
  const entries = Object.entries(headers);
  if (entries.length === 0) return undefined;
  const out = natsHeaders();
  for (const [key, value] of entries) out.set(key, value);
  return out;
}
