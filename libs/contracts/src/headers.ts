/**
 * Names of the message headers every transport carries, from the HTTP edge to the last hop. Header names are
 * lower case on the wire (NATS header keys are case-sensitive, W3C trace context names are lower case).
 */
export const MessageHeaders = {
  /** One id per client request, logged by every service that touches it. */
  CorrelationId: 'x-correlation-id',
  /** W3C trace context: version, trace id, parent span id and flags. */
  Traceparent: 'traceparent',
  /** W3C trace context: vendor-specific state that travels with traceparent. */
  Tracestate: 'tracestate',
  /** Epoch milliseconds after which the caller no longer waits for a reply (set on requests). */
  Deadline: 'x-deadline',
  /** One id per request message, so a caller that stops waiting can name the request it abandons. */
  CallId: 'x-call-id',
} as const;

export type MessageHeaderName = (typeof MessageHeaders)[keyof typeof MessageHeaders];

/** Headers on a message: header name to value. Only string values travel. */
export type MessageHeaderMap = Readonly<Record<string, string>>;
