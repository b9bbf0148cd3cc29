import { type EventPayload, type EventPayloadInput, type EventSubject } from '@tessera/contracts';
import { type MessageContext } from '../message-context';

export interface EventStreamConfig {
  /** Stream name (upper case by convention), e.g. `DATASTORE_CHANGES`. */
  name: string;
  subjects: readonly EventSubject[];
  /** How long events are kept (default 24 h): a consumer down for longer misses older ones. */
  maxAgeMs?: number;
  /** Window in which a re-published message id is recognised and dropped (default 2 min). */
  duplicateWindowMs?: number;
}

export interface DurablePublishOptions {
  /** Idempotency key (Nats-Msg-Id): publishing the same id twice within the window stores it once. Generated when absent. */
  messageId?: string;
  headers?: Readonly<Record<string, string>>;
  /** How long to keep retrying while the server is unreachable (default 10 s). */
  retryForMs?: number;
  /**
   * For a stream that lives in memory (standalone's in-process stream): resolve only once a consumer group
   * handled the event, waiting for the first group of its subject to join when none has yet, and reject when
   * the stream drops it unhandled (closed, too old); a publisher keeping its own copy until then loses
   * nothing to a crash. A server stream (JetStream) stores the event durably and ignores it.
   */
  untilConsumed?: boolean;
}

/** What a durable event handler learns besides the payload. */
export interface DurableEventContext extends MessageContext {
  /** The publisher's idempotency key. */
  readonly messageId: string;
  /** Position in the stream. */
  readonly sequence: number;
  /** 1 on first delivery; more when a replica died or failed before acknowledging it. */
  readonly deliveryCount: number;
}

/** What consuming a durable stream is configured with, whether events are handled one by one or in batches. */
interface DurableConsumerSettings<S extends EventSubject> {
  stream: string;
  /**
   * Durable consumer name: the "queue group". Every replica of a service consuming with the same name shares
   * the stream's events (each event to one of them); the server remembers how far the group got.
   */
  durable: string;
  subject: S;
  /**
   * An event not acknowledged within this time is delivered again (default 30 s). A handler still running
   * keeps its event (JetStream: the consumer reports progress every third of it).
   */
  ackWaitMs?: number;
  /** Deliveries before an event that keeps failing is given up (default 5). */
  maxDeliver?: number;
  /** Events pulled per batch by this replica (default 32). */
  batch?: number;
  /**
   * Events handed out and not yet acknowledged across the whole group (JetStream's `max_ack_pending`;
   * default: the server's). 1 hands the group's events out one at a time, in stream order, whichever
   * replica handles each. The in-process stream has one member per process and handles its events in order.
   */
  maxAckPending?: number;
}

export interface DurableConsumerOptions<S extends EventSubject> extends DurableConsumerSettings<S> {
  handler: (payload: EventPayload<S>, context: DurableEventContext) => Promise<void> | void;
}

/** One event of a batch. */
export interface DurableEvent<S extends EventSubject> {
  payload: EventPayload<S>;
  context: DurableEventContext;
}

export interface DurableBatchConsumerOptions<S extends EventSubject> extends DurableConsumerSettings<S> {
  /**
   * Handles the events that are ready, up to `batch` of them, in stream order. They are acknowledged together
   * after it; when it throws they all come again (handlers make their work idempotent by message id).
   */
  batchHandler: (events: ReadonlyArray<DurableEvent<S>>) => Promise<void>;
}

export interface DurableSubscription {
  /** Stops pulling and waits for the event being handled; the durable consumer (and its position) stays. */
  stop(): Promise<void>;
}

/**
 * Durable events as services use them, whatever carries them: JetStream in distributed mode, the in-process
 * stream in standalone mode. Same semantics at this interface: publishing an id twice within the duplicate
 * window stores it once; a durable consumer name is a queue group whose members share the events, each
 * acknowledged after its handler and redelivered (1 s later, at most `maxDeliver` times) when the handler
 * throws; the group's position outlives a member's `stop()`. Injectable by this class.
 */
export abstract class DurableEvents {
  /** Creates the stream, or updates its subjects and limits. */
  abstract ensureStream(config: EventStreamConfig): Promise<void>;
  /** Appends an event; resolves once the stream stored it (`duplicate` when its id was already there). */
  abstract publish<S extends EventSubject>(subject: S, payload: EventPayloadInput<S>, options?: DurablePublishOptions): Promise<{ sequence: number; duplicate: boolean }>;
  /** Joins (creating if needed) a durable consumer and handles its events until stopped. */
  abstract consume<S extends EventSubject>(options: DurableConsumerOptions<S>): Promise<DurableSubscription>;
  /**
   * Joins a durable consumer and handles its events in batches: whatever is ready when the handler is free,
   * up to `batch` (one event at a time where `maxAckPending` is 1 across replicas).
   */
  abstract consumeBatches<S extends EventSubject>(options: DurableBatchConsumerOptions<S>): Promise<DurableSubscription>;
  /**
   * Appends an event after the events this process appended before it under the same `key` (one change
   * feed), without waiting for them: the promise resolves when `publish`'s would. The default waits for the
   * previous one (a transport that could store a retried publish after a later one keeps the order so).
   */
  publishInOrder<S extends EventSubject>(key: string, subject: S, payload: EventPayloadInput<S>, options?: DurablePublishOptions): Promise<{ sequence: number; duplicate: boolean }> {
    // After a failure the ones queued behind it fail too: none is stored after one that is missing.
    const next = (this.orderedTails.get(key) ?? Promise.resolve()).then(() => this.publish(subject, payload, options));
    const tail = next.then(() => undefined);
    this.orderedTails.set(key, tail);
    void tail.catch(() => undefined).finally(() => {
      if (this.orderedTails.get(key) === tail) this.orderedTails.delete(key);
    });
    return next;
  }
  private readonly orderedTails = new Map<string, Promise<void>>();
  /** Stops every consumer of this process (finishing the event in hand) and releases the transport. */
  abstract close(): Promise<void>;
}
