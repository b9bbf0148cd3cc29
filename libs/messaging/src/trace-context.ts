// Internal helper of the handlers and the JetStream consumer; not part of the public entry.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@nestjs/common';
import { context as otelContext, propagation, type Span, type SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { type MessageContext, propagationHeaders } from './message-context';

/** The correlation id and trace context of the message whose handler is running (see handledMessageHeaders). */
const handling = new AsyncLocalStorage<Readonly<Record<string, string>>>();

/**
 * The correlation id and trace context of the message being handled, for every message its handler sends
 * on the way (a function's data access running a rule's `%function`, a trigger's call): one request keeps
 * one correlation id to the last hop without each service passing it by hand. Undefined outside a handler.
 */
export function handledMessageHeaders(): Readonly<Record<string, string>> | undefined {
  return handling.getStore();
}

const logger = new Logger('MessageHandler');

/**
 * Runs a handler in a span continuing the sender's trace (the message's traceparent), so whatever the handler
 * sends or logs joins the trace. A no-op without a registered tracer provider.
 */
export async function traced<T>(subject: string, operation: string, kind: SpanKind, context: MessageContext, run: () => Promise<T> | T): Promise<T> {
  const parent = propagation.extract(otelContext.active(), context.headers);
  const span: Span = trace.getTracer('@tessera/messaging').startSpan(
    `${subject} ${operation}`,
    { kind, attributes: { 'messaging.system': 'tessera', 'messaging.destination.name': subject, ...(context.correlationId ? { 'messaging.message.conversation_id': context.correlationId } : {}) } },
    parent,
  );
  try {
    return await otelContext.with(trace.setSpan(parent, span), async () => {
      const started = Date.now();
      const result = await handling.run(propagationHeaders(context), run);
      // Logged inside the span: with tracing on, the line carries trace_id and span_id (the host's pino mixin).
      logger.debug(`handled ${subject} in ${Date.now() - started} ms (correlation id ${context.correlationId ?? 'none'})`);
      return result;
    });
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

