import { randomUUID } from 'node:crypto';
import { type ClientProxy } from '@nestjs/microservices';
import { context as otelContext, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  type CommandRequestInput,
  type CommandResponse,
  type CommandSubject,
  type EventPayloadInput,
  type EventSubject,
  MessageHeaders,
  parseCommandRequest,
  parseCommandResponse,
  parseEventPayload,
  Subjects,
} from '@tessera/contracts';
import type { CancelSignal } from '@tessera/domain';
import { fromEvent, lastValueFrom, mergeMap, race, take, throwError, timeout } from 'rxjs';
import { MessagingTimeoutError, RequestAbortedError, toMessagingError } from './errors';
import { InProcessClient } from './in-process/in-process.client';
import { OutboundMessage } from './outbound-message';

export interface RequestOptions {
  /** How long to wait for the reply; the facade's default otherwise. */
  timeoutMs?: number;
  /** Extra headers (header name -> value): correlation id, traceparent, tracestate, ... */
  headers?: Readonly<Record<string, string>>;
  /**
   * The caller's interest (an HTTP request whose client may disconnect): when it aborts, the request rejects
   * with RequestAbortedError and the handler is told to stop (`messaging.request.abandoned`).
   */
  signal?: CancelSignal;
}

export interface EmitOptions {
  headers?: Readonly<Record<string, string>>;
}

export interface MessageBusOptions {
  /** Deadline of a request that names none. */
  defaultTimeoutMs?: number;
  /** Deadlines of particular subjects (a function call waits as long as the function may run). */
  timeouts?: Readonly<Partial<Record<CommandSubject, number>>>;
  /** Ambient headers added to every message (for example the current trace context); explicit ones win. */
  headers?: () => Readonly<Record<string, string>>;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** What the facade needs of a Nest client proxy (both InProcessClient and TesseraNatsClient have it). */
export type MessagingClient = Pick<ClientProxy, 'send' | 'emit' | 'connect' | 'close'>;

/**
 * The typed face of the message transport: services call `request` and `emit` with a subject from
 * `Subjects` and get compile-time payload types and run-time validation. Every message carries a
 * correlation id (generated when the caller has none); requests also carry their deadline.
 *
 * Each payload is validated where it is made (requests and events here, responses in the handler) and again
 * where it arrives from another process (NATS). On the in-process bus nothing arrives from outside, so the
 * receiving end trusts what the sending end checked: a call is validated twice, not four times.
 */
export class MessageBus {
  private readonly defaultTimeoutMs: number;
  /**
   * True when the transport is the in-process one: every handler of this bus is in this process, so replies
   * come from handlers that validated them (see CommandHandler), and an event meant for other processes
   * (replicas of a service) has nobody to reach.
   */
  readonly local: boolean;

  constructor(
    readonly client: MessagingClient,
    private readonly options: MessageBusOptions = {},
  ) {
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.local = client instanceof InProcessClient;
  }

  /**
   * Sends a command and waits for its response. Rejects with InvalidPayloadError (bad request or response),
   * MessagingTimeoutError, NoResponderError, RemoteHandlerError (the handler failed) or TransportError.
   */
  async request<S extends CommandSubject>(subject: S, payload: CommandRequestInput<S>, options: RequestOptions = {}): Promise<CommandResponse<S>> {
    const request = parseCommandRequest(subject, payload);
    const timeoutMs = options.timeoutMs ?? this.options.timeouts?.[subject] ?? this.defaultTimeoutMs;
    if (options.signal?.aborted) throw new RequestAbortedError(subject);
    const span = tracer().startSpan(`${subject} send`, { kind: SpanKind.CLIENT, attributes: { 'messaging.system': 'tessera', 'messaging.destination.name': subject } });
    const callId = randomUUID();
    const headers = this.headersFor(options.headers, { [MessageHeaders.Deadline]: String(Date.now() + timeoutMs), [MessageHeaders.CallId]: callId }, span);
    let response: unknown;
    try {
      response =
        this.client instanceof InProcessClient
          ? await this.requestInProcess(this.client, subject, request, headers, timeoutMs, options.signal)
          : await this.requestThroughProxy(subject, request, headers, timeoutMs, options.signal);
    } catch (error) {
      const failure = toMessagingError(subject, error);
      // The handler may still be working for nobody: tell it to stop (the deadline also stops it on its side).
      if (failure instanceof RequestAbortedError || failure instanceof MessagingTimeoutError) this.abandon(subject, callId, failure instanceof RequestAbortedError ? 'aborted' : 'deadline', headers);
      endSpan(span, failure);
      throw failure;
    }
    endSpan(span);
    return this.local ? (response as CommandResponse<S>) : parseCommandResponse(subject, response);
  }

  /** Publishes an event to every queue group listening; resolves once it is handed to the transport. */
  async emit<S extends EventSubject>(subject: S, payload: EventPayloadInput<S>, options: EmitOptions = {}): Promise<void> {
    const event = parseEventPayload(subject, payload);
    const span = tracer().startSpan(`${subject} publish`, { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'tessera', 'messaging.destination.name': subject } });
    try {
      await lastValueFrom(this.client.emit<unknown>(subject, new OutboundMessage(event, this.headersFor(options.headers, {}, span), true)), { defaultValue: undefined });
    } catch (error) {
      const failure = toMessagingError(subject, error);
      endSpan(span, failure);
      throw failure;
    }
    endSpan(span);
  }

  private requestThroughProxy(subject: string, request: unknown, headers: Record<string, string>, timeoutMs: number, signal: CancelSignal | undefined): Promise<unknown> {
    const reply$ = this.client.send<unknown>(subject, new OutboundMessage(request, headers, true)).pipe(timeout({ first: timeoutMs, with: () => throwError(() => new MessagingTimeoutError(subject, timeoutMs)) }));
    const aborted$ = signal ? fromEvent(signal, 'abort').pipe(take(1), mergeMap(() => throwError(() => new RequestAbortedError(subject)))) : undefined;
    return lastValueFrom(aborted$ ? race(reply$, aborted$) : reply$, { defaultValue: undefined });
  }

  /**
   * The in-process path of `request`: the bus's reply raced against the deadline and the caller's signal with
   * one timer and one listener, instead of a chain of observables per call (a function call's hottest path).
   */
  private requestInProcess(client: InProcessClient, subject: string, request: unknown, headers: Record<string, string>, timeoutMs: number, signal: CancelSignal | undefined): Promise<unknown> {
    const pending = client.request(subject, request, headers, true);
    return new Promise<unknown>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        pending.cancel();
      };
      const onAbort = (): void => {
        finish();
        reject(new RequestAbortedError(subject));
      };
      const timer = setTimeout(() => {
        finish();
        reject(new MessagingTimeoutError(subject, timeoutMs));
      }, timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      pending.reply.then(
        (value) => {
          finish();
          resolve(value);
        },
        (error: unknown) => {
          finish();
          // The handler's error body as the bus carried it: toMessagingError maps it, as on the proxy path.
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
          reject(error);
        },
      );
    });
  }

  private abandon(subject: string, callId: string, reason: 'aborted' | 'deadline', headers: Readonly<Record<string, string>>): void {
    const correlationId = headers[MessageHeaders.CorrelationId];
    this.emit(Subjects.MessagingRequestAbandoned, { callId, subject, reason }, correlationId ? { headers: { [MessageHeaders.CorrelationId]: correlationId } } : {}).catch(() => undefined);
  }

  private headersFor(explicit: Readonly<Record<string, string>> | undefined, extra: Record<string, string>, span: Span): Record<string, string> {
    // Explicit headers (a handler passes on those of the message it handles: see propagationHeaders) win over the ambient ones.
    const headers = { ...(this.options.headers?.() ?? {}), ...(explicit ?? {}), ...extra };
    headers[MessageHeaders.CorrelationId] ||= randomUUID();
    // With tracing on, the message continues the sender's trace as a child of this send's span (this replaces
    // a traceparent passed on from an incoming message); with tracing off the headers stay as given.
    if (trace.isSpanContextValid(span.spanContext())) propagation.inject(trace.setSpan(otelContext.active(), span), headers);
    return headers;
  }
}

const tracer = () => trace.getTracer('@tessera/messaging');

function endSpan(span: Span, error?: Error): void {
  if (error) {
    span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  }
  span.end();
}
