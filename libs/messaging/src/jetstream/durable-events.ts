import { Logger } from '@nestjs/common';
import { context as otelContext, propagation, SpanKind, trace } from '@opentelemetry/api';
import { type EventPayloadInput, type EventSubject, MessageHeaders, parseEventPayload } from '@tessera/contracts';
import {
  AckPolicy,
  connect,
  type ConnectionOptions,
  type ConsumerMessages,
  DeliverPolicy,
  headers as natsHeaders,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  nanos,
  type NatsConnection,
  RetentionPolicy,
  StorageType,
} from 'nats';
import { randomUUID } from 'node:crypto';
import { TransportError } from '../errors';
import { buildMessageContext, fromNatsHeaders } from '../message-context';
import { traced } from '../trace-context';
import {
  type DurableBatchConsumerOptions,
  type DurableConsumerOptions,
  type DurableEvent,
  type DurableEventContext,
  DurableEvents,
  type DurablePublishOptions,
  type DurableSubscription,
  type EventStreamConfig,
} from './durable-events.port';

const logger = new Logger('DurableEvents');

/**
 * Durable events over NATS JetStream: a stream stores the events of some subjects on the server; a publisher
 * appends to it (deduplicated by message id, retried across broker restarts); durable pull consumers share
 * its events between the replicas of a service and acknowledge each one after it was handled, so a replica
 * that restarts resumes where its group stopped, and two replicas never both get an event unless one died
 * before acknowledging it. An acknowledgement lost in a broker restart makes the server deliver the event
 * again; the replica that handled it recognises the message id and only acknowledges. Across replicas the
 * guarantee stays at-least-once: `deliveryCount` and `messageId` let a handler be idempotent.
 */
export class JetStreamEvents extends DurableEvents {
  private readonly subscriptions = new Set<DurableSubscription>();
  /** Message ids this process handled lately, by consumer: a redelivery of one (its ack lost in a broker restart) is acknowledged, not handled again. */
  private readonly recentlyHandled = new Map<string, Set<string>>();

  private constructor(
    readonly connection: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {
    super();
  }

  static async connect(options: { url: string | string[]; name?: string; connection?: Omit<ConnectionOptions, 'servers' | 'name'> }): Promise<JetStreamEvents> {
    const connection = await connect({ maxReconnectAttempts: -1, reconnectTimeWait: 1_000, ...options.connection, servers: options.url, name: options.name });
    return new JetStreamEvents(connection, connection.jetstream(), await connection.jetstreamManager());
  }

  /** Creates the stream, or updates its subjects and limits. */
  async ensureStream(config: EventStreamConfig): Promise<void> {
    const settings = {
      subjects: [...config.subjects],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      max_age: nanos(config.maxAgeMs ?? 24 * 60 * 60 * 1000),
      duplicate_window: nanos(config.duplicateWindowMs ?? 2 * 60 * 1000),
    };
    try {
      await this.jsm.streams.info(config.name);
      await this.jsm.streams.update(config.name, settings);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.jsm.streams.add({ name: config.name, ...settings });
    }
  }

  /** Appends an event; resolves once the server stored it. Retries with the same id while the server is away. */
  async publish<S extends EventSubject>(subject: S, payload: EventPayloadInput<S>, options: DurablePublishOptions = {}): Promise<{ sequence: number; duplicate: boolean }> {
    const event = parseEventPayload(subject, payload);
    const messageId = options.messageId ?? randomUUID();
    const headers = { ...(options.headers ?? {}) };
    headers[MessageHeaders.CorrelationId] ||= randomUUID();
    const span = trace.getTracer('@tessera/messaging').startSpan(`${subject} publish`, { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'nats-jetstream', 'messaging.destination.name': subject } });
    if (trace.isSpanContextValid(span.spanContext())) propagation.inject(trace.setSpan(otelContext.active(), span), headers);
    const hdrs = natsHeaders();
    for (const [key, value] of Object.entries(headers)) hdrs.set(key, value);
    const data = new TextEncoder().encode(JSON.stringify(event));
    const deadline = Date.now() + (options.retryForMs ?? 10_000);
    try {
      for (;;) {
        try {
          const ack = await this.js.publish(subject, data, { msgID: messageId, headers: hdrs, timeout: 2_000 });
          return { sequence: ack.seq, duplicate: ack.duplicate };
        } catch (error) {
          if (Date.now() > deadline || this.connection.isClosed()) throw new TransportError(subject, error);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    } finally {
      span.end();
    }
  }

  /** Joins (creating if needed) a durable consumer and handles its events until stopped. */
  async consume<S extends EventSubject>(options: DurableConsumerOptions<S>): Promise<DurableSubscription> {
    const messages = await this.join(options);
    const loop = (async () => {
      for await (const message of messages) await this.handle(options, message);
    })().catch((error: unknown) => logger.error(`consumer ${options.durable} on ${options.stream} stopped: ${String(error)}`));
    return this.subscription(messages, loop);
  }

  /**
   * Joins a durable consumer and handles its events in batches: while a batch is handled the next one
   * gathers what the server hands out (at most `batch` at a time, as many as the group may have pending).
   */
  async consumeBatches<S extends EventSubject>(options: DurableBatchConsumerOptions<S>): Promise<DurableSubscription> {
    const size = Math.max(1, Math.min(options.batch ?? 32, options.maxAckPending ?? Number.POSITIVE_INFINITY));
    const messages = await this.join({ ...options, batch: size });
    const waiting: JsMsg[] = [];
    let handling: Promise<void> | undefined;
    const drain = async (): Promise<void> => {
      while (waiting.length > 0) await this.handleBatch(options, waiting.splice(0, size));
      handling = undefined;
    };
    const loop = (async () => {
      for await (const message of messages) {
        waiting.push(message);
        handling ??= drain();
        // Pull no further ahead than one more batch.
        if (waiting.length >= size) await handling;
      }
      await handling;
    })().catch((error: unknown) => logger.error(`consumer ${options.durable} on ${options.stream} stopped: ${String(error)}`));
    return this.subscription(messages, loop);
  }

  private async join<S extends EventSubject>(options: Omit<DurableConsumerOptions<S>, 'handler'>): Promise<ConsumerMessages> {
    await this.jsm.consumers.add(options.stream, {
      durable_name: options.durable,
      filter_subject: options.subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(options.ackWaitMs ?? 30_000),
      max_deliver: options.maxDeliver ?? 5,
      ...(options.maxAckPending !== undefined ? { max_ack_pending: options.maxAckPending } : {}),
    });
    const consumer = await this.js.consumers.get(options.stream, options.durable);
    return consumer.consume({ max_messages: Math.min(options.batch ?? 32, options.maxAckPending ?? Number.POSITIVE_INFINITY) });
  }

  private subscription(messages: ConsumerMessages, loop: Promise<void>): DurableSubscription {
    const subscription: DurableSubscription = {
      stop: async () => {
        this.subscriptions.delete(subscription);
        await messages.close();
        await loop;
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** How far a consumer group is behind: events not yet delivered, delivered but unacknowledged, redelivered. */
  async lag(stream: string, durable: string): Promise<{ pending: number; ackPending: number; redelivered: number }> {
    const info = await this.jsm.consumers.info(stream, durable);
    return { pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered };
  }

  /** Stops every consumer (finishing the event in hand) and drains the connection. */
  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    if (!this.connection.isClosed()) await this.connection.drain();
  }

  /** The payload and context of a message; undefined (and the message terminated) when it is unreadable. */
  private read<S extends EventSubject>(subject: S, message: JsMsg): DurableEvent<S> | undefined {
    const headers = fromNatsHeaders(message.headers);
    const base = buildMessageContext(message.subject, 'jetstream', headers);
    const context: DurableEventContext = { ...base, messageId: message.headers?.get('Nats-Msg-Id') ?? '', sequence: message.seq, deliveryCount: message.info.deliveryCount };
    try {
      return { payload: parseEventPayload(subject, JSON.parse(new TextDecoder().decode(message.data))), context };
    } catch (error) {
      // An unreadable event never becomes readable: stop redelivering it.
      logger.error(`dropped an unreadable ${subject} event (sequence ${message.seq}): ${error instanceof Error ? error.message : String(error)}`);
      message.term();
      return undefined;
    }
  }

  private async handle<S extends EventSubject>(options: DurableConsumerOptions<S>, message: JsMsg): Promise<void> {
    await this.handleBatch({ ...options, batchHandler: async ([event]) => options.handler(event.payload, event.context) }, [message]);
  }

  private async handleBatch<S extends EventSubject>(options: DurableBatchConsumerOptions<S>, messages: JsMsg[]): Promise<void> {
    const recent = this.recentFor(`${options.stream}/${options.durable}`);
    const ackWaitMs = options.ackWaitMs ?? 30_000;
    const batch: Array<{ event: DurableEvent<S>; message: JsMsg }> = [];
    // Copies of an event already in this batch: a broker restarted while the batch gathered hands back what
    // it had handed out, so one batch may hold an event twice. They are settled with the first copy.
    const copies: JsMsg[] = [];
    const inBatch = new Set<string>();
    for (const message of messages) {
      const event = this.read(options.subject, message);
      if (!event) continue;
      const { messageId } = event.context;
      // Recognised whatever its delivery count: a broker restarted before it stored this group's
      // acknowledgements hands the events back as first deliveries.
      if (messageId && recent.has(messageId)) await this.acknowledge(message, ackWaitMs);
      else if (messageId && inBatch.has(messageId)) copies.push(message);
      else {
        if (messageId) inBatch.add(messageId);
        batch.push({ event, message });
      }
    }
    if (batch.length === 0) return;
    // A handler may run longer than the ack wait (a slow trigger function): tell the server it is still in
    // progress, so the events are not handed to another replica meanwhile; a replica that dies stops telling it.
    const progress = setInterval(() => batch.forEach(({ message }) => message.working()), Math.max(500, Math.floor(ackWaitMs / 3)));
    const first = batch[0].event.context;
    try {
      await traced(options.subject, 'process', SpanKind.CONSUMER, first, () => options.batchHandler(batch.map(({ event }) => event)));
    } catch (error) {
      const sequences = batch.map(({ message }) => message.seq).join(', ');
      logger.error(`handler of ${options.subject} failed (sequence ${sequences}, delivery ${first.deliveryCount}, correlation id ${first.correlationId ?? 'none'}): ${error instanceof Error ? error.message : String(error)}`);
      for (const { message } of batch) message.nak(1_000);
      for (const message of copies) message.nak(1_000);
      return;
    } finally {
      clearInterval(progress);
    }
    for (const { event } of batch) {
      if (!event.context.messageId) continue;
      recent.add(event.context.messageId);
      // Insertion order: drop the oldest beyond the bound.
      if (recent.size > 10_000) recent.delete(recent.values().next().value ?? '');
    }
    await Promise.all([...batch.map(({ message }) => message), ...copies].map((message) => this.acknowledge(message, ackWaitMs)));
  }

  private recentFor(key: string): Set<string> {
    let recent = this.recentlyHandled.get(key);
    if (!recent) this.recentlyHandled.set(key, (recent = new Set()));
    return recent;
  }

  /**
   * Acknowledges until the server confirms it: an ack lost in a broker restart would otherwise let the event
   * be delivered again once its ack wait ran out, and handled twice.
   */
  private async acknowledge(message: JsMsg, ackWaitMs: number): Promise<void> {
    const until = Date.now() + ackWaitMs;
    for (;;) {
      const confirmed = await message.ackAck({ timeout: 1_000 }).catch(() => false);
      if (confirmed) return;
      if (Date.now() > until || this.connection.isClosed()) {
        logger.warn(`no confirmation of the acknowledgement of sequence ${message.seq}; it may be delivered again`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof Error && /not found/i.test(error.message);
}
