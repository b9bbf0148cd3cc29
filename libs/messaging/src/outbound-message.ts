import { type MessageHeaderMap } from '@tessera/contracts';

/**
 * A payload with its headers, as the facade hands it to a client proxy. Both transports' clients unwrap it:
 * the NATS client into NATS headers, the in-process client into the bus delivery.
 */
export class OutboundMessage<T = unknown> {
  constructor(
    readonly data: T,
    readonly headers: MessageHeaderMap,
  ) {}
}

export function unwrapOutbound(data: unknown): { data: unknown; headers: MessageHeaderMap } {
  return data instanceof OutboundMessage ? { data: data.data as unknown, headers: data.headers } : { data, headers: {} };
}
