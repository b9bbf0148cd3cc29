import { type MessageHeaderMap } from '@tessera/contracts';

/**
 * A payload with its headers, as the facade hands it to a client proxy. Both transports' clients unwrap it:
 * the NATS client into NATS headers, the in-process client into the bus delivery.
 *
 * `validated` says the payload already passed its contract in this process (the facade checks what it
 * sends). Only the in-process transport carries the mark, so a handler in the same process need not check
 * the payload again; a message from another process never has it.
 */
export class OutboundMessage<T = unknown> {
  constructor(
    readonly data: T,
    readonly headers: MessageHeaderMap,
    readonly validated = false,
  ) {}
}

export function unwrapOutbound(data: unknown): { data: unknown; headers: MessageHeaderMap; validated: boolean } {
  return data instanceof OutboundMessage ? { data: data.data as unknown, headers: data.headers, validated: data.validated } : { data, headers: {}, validated: false };
}
