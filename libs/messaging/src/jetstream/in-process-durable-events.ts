import { Logger } from '@nestjs/common';
import { context as otelContext, propagation, SpanKind, trace } from '@opentelemetry/api';
import { type EventPayload, type EventPayloadInput, type EventSubject, MessageHeaders } from '@tessera/contracts';
import { randomUUID } from 'node:crypto';
import { buildMessageContext } from '../message-context';
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

const logger = new Logger('InProcessDurableEvents');

interface StoredEvent {
  sequence: number;
  subject: EventSubject;
  /** The payload as JSON text: consumers get their own copy, as over the wire. */
  data: string;
  messageId: string;
  headers: Record<string, string>;
  storedAt: number;
  /**
   * Groups with live members when it was published that have not finished it, and the publish waiting for
   * them. `untilConsumed`: the publisher waits for a handling; with no group, the first to join is waited for.
   */
  settling?: { groups: Set<GroupState>; resolve: () => void; untilConsumed?: { reject: (error: Error) => void; settled: Promise<void> } };
}

interface StreamState {
  config: EventStreamConfig;
  events: StoredEvent[];
  nextSequence: number;
  /** Message id -> when it was stored, for the duplicate window. */
  recentIds: Map<string, number>;
  groups: Map<string, GroupState>;
}

/** A durable consumer: its position survives its members (replicas) stopping and joining again. */
interface GroupState {
  subject: EventSubject;
  /** Next sequence not yet handed to a member. */
  cursor: number;
  /** Every sequence up to this one is done (acknowledged or given up). */
  ackFloor: number;
  done: Set<number>;
  deliveries: Map<number, number>;
  /** Failed events waiting to be delivered again, by due time. */
  retries: Array<{ sequence: number; due: number }>;
  members: Set<Member>;
}

interface Member {
  stopped: boolean;
  wake?: () => void;
  timer?: NodeJS.Timeout;
}

/** Events kept beyond what every consumer group finished, for a group that joins later. */
const MAX_RETAINED = 10_000;

/**
 * The in-process stream of standalone mode, with JetStream's semantics at the `DurableEvents` interface:
 * duplicate ids dropped within the window, durable consumer groups whose members share events and whose
 * position outlives them, acknowledgement after the handler, redelivery after a failure. It lives in memory,
 * so memory is not where an event is safe: `publish` resolves once every group with live members finished
 * the event (a publisher that saves its position after publishing, as the change publisher does, then never
 * saves past an event a consumer has not handled, and a restart re-publishes it); with `untilConsumed`, once a
 * group handled it, a group that has not joined yet included (a publisher keeping its own copy, as the auth
 * events outbox does, then never drops one nobody handled). Events every group
 * finished are dropped, others after `maxAgeMs` or beyond 10,000 retained.
 *
 * Publishers and consumers share this process, so payloads are trusted as typed, not checked against their
 * contract (a change feed publishes every document written here: checking each one doubled its cost).
 */
export class InProcessDurableEvents extends DurableEvents {
  private readonly streams = new Map<string, StreamState>();
  private readonly subscriptions = new Set<DurableSubscription>();
  private closed = false;

  async ensureStream(config: EventStreamConfig): Promise<void> {
    const existing = this.streams.get(config.name);
    if (existing) existing.config = config;
    else this.streams.set(config.name, { config, events: [], nextSequence: 1, recentIds: new Map(), groups: new Map() });
  }

  async publish<S extends EventSubject>(subject: S, payload: EventPayloadInput<S>, options: DurablePublishOptions = {}): Promise<{ sequence: number; duplicate: boolean }> {
    const stream = [...this.streams.values()].find((candidate) => candidate.config.subjects.includes(subject));
    if (!stream) throw new Error(`no durable stream stores ${subject}`);
    const messageId = options.messageId ?? randomUUID();
    const now = Date.now();
    this.expireIds(stream, now);
    const known = stream.recentIds.get(messageId);
    if (known !== undefined) {
      // Published again while its first publish waits for a handling: this one waits for the same.
      const waiting = options.untilConsumed ? stream.events.find((event) => event.messageId === messageId)?.settling?.untilConsumed : undefined;
      if (waiting) await waiting.settled;
      return { sequence: 0, duplicate: true };
    }
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    headers[MessageHeaders.CorrelationId] ||= randomUUID();
    const span = trace.getTracer('@tessera/messaging').startSpan(`${subject} publish`, { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'tessera', 'messaging.destination.name': subject } });
    if (trace.isSpanContextValid(span.spanContext())) propagation.inject(trace.setSpan(otelContext.active(), span), headers);
    span.end();
    const sequence = stream.nextSequence++;
    const stored: StoredEvent = { sequence, subject, data: JSON.stringify(payload), messageId, headers, storedAt: now };
    const waitFor = new Set([...stream.groups.values()].filter((group) => group.subject === subject && group.members.size > 0));
    let settled: Promise<void> = Promise.resolve();
    if (options.untilConsumed) {
      const untilConsumed = { reject: (_error: Error): void => undefined, settled };
      const waiting: NonNullable<StoredEvent['settling']> = { groups: waitFor, resolve: () => undefined, untilConsumed };
      settled = untilConsumed.settled = new Promise<void>((resolve, reject) => {
        waiting.resolve = resolve;
        untilConsumed.reject = reject;
      });
      stored.settling = waiting;
    } else if (waitFor.size > 0) settled = new Promise<void>((resolve) => (stored.settling = { groups: waitFor, resolve }));
    stream.events.push(stored);
    stream.recentIds.set(messageId, now);
    this.trim(stream, now);
    for (const group of waitFor) wakeAll(group);
    await settled;
    return { sequence, duplicate: false };
  }

  /** Stored as it is called (in this process's order): no need to wait for the previous one. */
  override publishInOrder<S extends EventSubject>(_key: string, subject: S, payload: EventPayloadInput<S>, options?: DurablePublishOptions): Promise<{ sequence: number; duplicate: boolean }> {
    return this.publish(subject, payload, options);
  }

  /** One event at a time: a batch of one, handed to `handler`. */
  consume<S extends EventSubject>(options: DurableConsumerOptions<S>): Promise<DurableSubscription> {
    const { handler, ...settings } = options;
    return this.consumeBatches({ ...settings, batch: 1, batchHandler: async ([event]) => handler(event.payload, event.context) });
  }

  async consumeBatches<S extends EventSubject>(options: DurableBatchConsumerOptions<S>): Promise<DurableSubscription> {
    const stream = this.streams.get(options.stream);
    if (!stream) throw new Error(`stream not found: ${options.stream}`);
    let group = stream.groups.get(options.durable);
    if (!group) {
      // A new group starts at the oldest retained event (JetStream's deliver-all).
      const first = stream.events[0]?.sequence ?? stream.nextSequence;
      group = { subject: options.subject, cursor: first, ackFloor: first - 1, done: new Set(), deliveries: new Map(), retries: [], members: new Set() };
      stream.groups.set(options.durable, group);
    }
    const member: Member = { stopped: false };
    group.members.add(member);
    // Publishers waiting for a consumer of this subject wait for this group now.
    for (const event of stream.events) if (event.settling?.untilConsumed && event.subject === group.subject && event.sequence >= group.cursor) event.settling.groups.add(group);
    const loop = this.run(stream, group, member, options).catch((error: unknown) => logger.error(`consumer ${options.durable} on ${options.stream} stopped: ${String(error)}`));
    const held = group;
    const subscription: DurableSubscription = {
      stop: async () => {
        this.subscriptions.delete(subscription);
        member.stopped = true;
        if (member.timer) clearTimeout(member.timer);
        member.wake?.();
        await loop;
        held.members.delete(member);
        // A group nobody consumes now keeps its events for later; publishers stop waiting for it.
        if (held.members.size === 0) for (const event of stream.events) settle(event, held, false);
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** How far a consumer group is behind: events not yet handed out, and failed ones waiting to be retried. */
  lag(stream: string, durable: string): { pending: number; retrying: number } {
    const state = this.streams.get(stream);
    const group = state?.groups.get(durable);
    if (!state || !group) return { pending: 0, retrying: 0 };
    return { pending: state.events.filter((event) => event.sequence >= group.cursor && event.subject === group.subject).length, retrying: group.retries.length };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    // Publishers waiting for a handling keep their copy: the event was not handled here.
    for (const stream of this.streams.values()) for (const event of stream.events) release(stream, event);
  }

  private async run<S extends EventSubject>(stream: StreamState, group: GroupState, member: Member, options: DurableBatchConsumerOptions<S>): Promise<void> {
    const size = Math.max(1, options.batch ?? 32);
    while (!member.stopped && !this.closed) {
      const batch: StoredEvent[] = [];
      for (let next = this.take(stream, group, member); next; next = batch.length < size ? this.take(stream, group, member) : undefined) batch.push(next);
      if (batch.length === 0) {
        await new Promise<void>((resolve) => (member.wake = resolve));
        member.wake = undefined;
        continue;
      }
      await this.handle(stream, group, batch, options);
    }
  }

  /** The next event for a member: a retry that is due, else the next event of the subject; undefined to wait. */
  private take(stream: StreamState, group: GroupState, member: Member): StoredEvent | undefined {
    const now = Date.now();
    const due = group.retries.findIndex((retry) => retry.due <= now);
    if (due >= 0) {
      const [retry] = group.retries.splice(due, 1);
      const event = this.find(stream, retry.sequence);
      if (event) return event;
    }
    while (group.cursor < stream.nextSequence) {
      const event = this.find(stream, group.cursor);
      group.cursor++;
      if (event && event.subject === group.subject) return event;
      if (!event || event.subject !== group.subject) this.finish(stream, group, group.cursor - 1);
    }
    if (group.retries.length > 0 && !member.timer) {
      const wait = Math.max(0, Math.min(...group.retries.map((retry) => retry.due)) - now);
      member.timer = setTimeout(() => {
        member.timer = undefined;
        member.wake?.();
      }, wait);
      member.timer.unref();
    }
    return undefined;
  }

  private find(stream: StreamState, sequence: number): StoredEvent | undefined {
    const first = stream.events[0]?.sequence;
    if (first === undefined || sequence < first) return undefined;
    const event = stream.events[sequence - first];
    return event?.sequence === sequence ? event : undefined;
  }

  private async handle<S extends EventSubject>(stream: StreamState, group: GroupState, events: StoredEvent[], options: DurableBatchConsumerOptions<S>): Promise<void> {
    const batch: Array<DurableEvent<S> & { stored: StoredEvent }> = [];
    for (const event of events) {
      const deliveryCount = (group.deliveries.get(event.sequence) ?? 0) + 1;
      group.deliveries.set(event.sequence, deliveryCount);
      const context: DurableEventContext = { ...buildMessageContext(event.subject, 'in-process', event.headers), messageId: event.messageId, sequence: event.sequence, deliveryCount };
      try {
        batch.push({ payload: JSON.parse(event.data) as EventPayload<S>, context, stored: event });
      } catch (error) {
        logger.error(`dropped an unreadable ${options.subject} event (sequence ${event.sequence}): ${error instanceof Error ? error.message : String(error)}`);
        this.finish(stream, group, event.sequence);
      }
    }
    if (batch.length === 0) return;
    try {
      // One span per batch, in the context of its first event (a batch of one is traced as before).
      await traced(options.subject, 'process', SpanKind.CONSUMER, batch[0].context, () => options.batchHandler(batch.map(({ payload, context }) => ({ payload, context }))));
    } catch (error) {
      const sequences = batch.map((event) => event.context.sequence).join(', ');
      logger.error(`handler of ${options.subject} failed (sequence ${sequences}, delivery ${batch[0].context.deliveryCount}, correlation id ${batch[0].context.correlationId ?? 'none'}): ${error instanceof Error ? error.message : String(error)}`);
      for (const { context, stored } of batch) {
        if (context.deliveryCount < (options.maxDeliver ?? 5)) group.retries.push({ sequence: stored.sequence, due: Date.now() + 1_000 });
        else {
          logger.error(`gave up ${options.subject} event (sequence ${stored.sequence}) after ${context.deliveryCount} deliveries`);
          this.finish(stream, group, stored.sequence);
        }
      }
      wakeAll(group);
      return;
    }
    // Events every group finished are dropped once for the batch (dropping is a copy of what stays).
    for (const { stored } of batch) this.finish(stream, group, stored.sequence, false);
    this.trim(stream, Date.now());
  }

  /** Marks an event done for a group and drops events every group is done with. */
  private finish(stream: StreamState, group: GroupState, sequence: number, trim = true): void {
    const event = this.find(stream, sequence);
    if (event) settle(event, group);
    group.deliveries.delete(sequence);
    group.done.add(sequence);
    while (group.done.delete(group.ackFloor + 1)) group.ackFloor++;
    if (trim) this.trim(stream, Date.now());
  }

  private trim(stream: StreamState, now: number): void {
    const floor = stream.groups.size > 0 ? Math.min(...[...stream.groups.values()].map((group) => group.ackFloor)) : 0;
    const maxAge = stream.config.maxAgeMs ?? 24 * 60 * 60 * 1000;
    let drop = 0;
    while (drop < stream.events.length) {
      const event = stream.events[drop];
      if (event.sequence <= floor || now - event.storedAt > maxAge || stream.events.length - drop > MAX_RETAINED) drop++;
      else break;
    }
    if (drop > 0) for (const dropped of stream.events.splice(0, drop)) release(stream, dropped);
  }

  private expireIds(stream: StreamState, now: number): void {
    const window = stream.config.duplicateWindowMs ?? 2 * 60 * 1000;
    // Insertion order is age order: stop at the first id still inside the window.
    for (const [id, at] of stream.recentIds) {
      if (now - at <= window) break;
      stream.recentIds.delete(id);
    }
  }
}

function wakeAll(group: GroupState): void {
  for (const member of group.members) member.wake?.();
}

/**
 * A group is done with an event (`handled`), or stops consuming before it handled it: a publisher waiting
 * for a handling (`untilConsumed`) then waits for the next group to join instead.
 */
function settle(event: StoredEvent, group: GroupState, handled = true): void {
  if (!event.settling?.groups.delete(group) || event.settling.groups.size > 0) return;
  if (!handled && event.settling.untilConsumed) return;
  const { resolve } = event.settling;
  event.settling = undefined;
  resolve();
}

/**
 * The stream no longer holds the event: its publisher stops waiting, and learns it was not handled when it
 * asked (its id is forgotten then, so publishing it again stores it again rather than being a duplicate).
 */
function release(stream: StreamState, event: StoredEvent): void {
  const settling = event.settling;
  if (!settling) return;
  event.settling = undefined;
  if (!settling.untilConsumed) return settling.resolve();
  stream.recentIds.delete(event.messageId);
  settling.untilConsumed.reject(new Error('the event was dropped from the in-process stream before a consumer handled it'));
}
