import { randomUUID } from 'node:crypto';
import { type MessageHeaderMap, MessageHeaders } from '@tessera/contracts';
import type { FastifyRequest } from 'fastify';

/** A proxy's request id is taken as the correlation id only when it is a plain token of sane length. */
const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** W3C trace context: a well-formed `traceparent`, and a `tracestate` no longer than the 512 characters vendors must accept. */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const TRACESTATE_MAX = 512;

const ids = new WeakMap<object, string>();

/**
 * The correlation id of an HTTP request: the `x-request-id` a proxy in front set, or one made here. The same
 * id for the whole request (remembered on the request object), so the message headers of every call it
 * makes, the execution log (`co_id`) and the 500 body's "correlation id" all name the same request.
 */
export function correlationIdOf(request: Pick<FastifyRequest, 'headers'>): string {
  let id = ids.get(request);
  if (id === undefined) {
    const given = request.headers['x-request-id'];
    const first = Array.isArray(given) ? given[0] : given;
    id = first !== undefined && REQUEST_ID.test(first) ? first : randomUUID();
    ids.set(request, id);
  }
  return id;
}

/**
 * The headers a call made for this HTTP request carries over the bus: its correlation id and the caller's
 * W3C trace context, so that both start at the edge and reach the last hop (with tracing on, the bus
 * replaces `traceparent` with its own span's, a child of the request's).
 */
export function edgeMessageHeaders(request: Pick<FastifyRequest, 'headers'>): MessageHeaderMap {
  const headers: Record<string, string> = { [MessageHeaders.CorrelationId]: correlationIdOf(request) };
  // A caller's trace context rides on every message of the request: only a well-formed one is passed on
  // (without a traceparent, a tracestate means nothing).
  const traceparent = request.headers[MessageHeaders.Traceparent];
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return headers;
  headers[MessageHeaders.Traceparent] = traceparent;
  const tracestate = request.headers[MessageHeaders.Tracestate];
  if (typeof tracestate === 'string' && tracestate !== '' && tracestate.length <= TRACESTATE_MAX) headers[MessageHeaders.Tracestate] = tracestate;
  return headers;
}
