import { NatsContext } from '@nestjs/microservices';
import { type MessageHeaderMap, MessageHeaders } from '@tessera/contracts';
import type { CancelSignal } from '@tessera/domain';
import { type MsgHdrs } from 'nats';
import { InProcessContext } from './in-process/in-process.context';

/** What a typed handler learns about the message besides its payload, whatever the transport. */
export interface MessageContext {
  readonly subject: string;
  readonly transport: 'nats' | 'jetstream' | 'in-process' | 'direct';
  readonly headers: MessageHeaderMap;
  readonly correlationId: string | undefined;
  /** Epoch milliseconds after which the caller stops waiting (requests only). */
  readonly deadline: number | undefined;
  /**
   * Command handlers only: aborted when the caller stops waiting (it abandoned the request, or the deadline
   * passed). A handler doing long work (a function call) stops on it; its answer would reach nobody.
   */
  readonly signal?: CancelSignal;
}

/** Reads the transport's Nest context (NatsContext or InProcessContext) into a MessageContext. */
export function toMessageContext(subject: string, nestContext: unknown): MessageContext {
  if (nestContext instanceof InProcessContext) return buildMessageContext(nestContext.getSubject(), 'in-process', nestContext.getHeaders());
  if (nestContext instanceof NatsContext) return buildMessageContext(nestContext.getSubject(), 'nats', fromNatsHeaders(nestContext.getHeaders() as MsgHdrs | undefined));
  return buildMessageContext(subject, 'direct', {});
}

/** A MessageContext from a transport name and headers (the JetStream consumer builds its own). */
export function buildMessageContext(subject: string, transport: MessageContext['transport'], headers: MessageHeaderMap): MessageContext {
  const deadline = Number(headers[MessageHeaders.Deadline]);
  return { subject, transport, headers, correlationId: headers[MessageHeaders.CorrelationId], deadline: Number.isFinite(deadline) && deadline > 0 ? deadline : undefined };
}

export function fromNatsHeaders(headers: MsgHdrs | undefined): MessageHeaderMap {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const key of headers.keys()) out[key] = headers.get(key);
  return out;
}

/**
 * Headers to pass on when a handler calls further services: the correlation id and the trace context of the
 * message it is handling. A handler gives them to every message it sends on the way (`{ headers }` of a
 * request or an emit), so that one request keeps one correlation id to the last hop; nothing carries them
 * implicitly. (A tracer may replace traceparent with a child span before sending.)
 */
export function propagationHeaders(context: MessageContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [MessageHeaders.CorrelationId, MessageHeaders.Traceparent, MessageHeaders.Tracestate]) {
    const value = context.headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
