// Internal helper of the handlers and the JetStream consumer; not part of the public entry.
import { context as otelContext, propagation, type Span, type SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { type MessageContext } from './message-context';

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
    return await otelContext.with(trace.setSpan(parent, span), run);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

