/**
 * Authentication events (a user created, logged in, deleted) on their way to the authentication triggers,
 * made durable: each is first written to an outbox in the platform database (a CREATE or DELETE before the
 * user write that makes it happen: `around`), then published on the durable stream (JetStream in
 * distributed mode, the in-process stream in standalone mode) with its event id as the message id, and
 * leaves the outbox once the stream has it (in standalone mode: once a trigger consumer handled it, as the
 * in-process stream lives in memory; a consumer that has not joined yet is waited for). The relay checks
 * a CREATE's or DELETE's user write happened before publishing it: one whose write never happened is dropped. What a crash leaves in the outbox is published again by the
 * relay of the next process that records auth events (the gateway's, the admin API's): at least once, and the
 * stream's de-duplication and the runtime's claims by event id make each run once. It must not run the
 * triggers or decide which fire: the function runtime does.
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, Optional } from '@nestjs/common';
import { type AppAuthEvent, callerUserOf, type CallerUserRecord, Subjects } from '@tessera/contracts';
import { DurableEvents } from '@tessera/messaging';
import { SETTINGS, type Settings } from '@tessera/settings';
import { PlatformDatabase } from './platform-database';

const logger = new Logger('AuthEvents');

/** How old an outbox entry is before the relay publishes it again (a publish under way is younger). */
export const AUTH_EVENT_RELAY_AFTER_MS = 30_000;
/** How often the relay looks. */
const RELAY_EVERY_MS = 15_000;
/** How long a stop waits for the publishes under way. */
const STOP_WAIT_MS = 2_000;
/** Entries relayed at a time. */
const RELAY_PAGE = 500;

interface OutboxEntry {
  _id: string;
  event: AppAuthEvent;
  at: Date;
}

@Injectable()
export class AuthEvents implements OnApplicationBootstrap, OnModuleDestroy {
  /** Event ids this process is publishing: the relay leaves them alone. */
  private readonly underWay = new Map<string, Promise<void>>();
  private timer?: NodeJS.Timeout;
  private relaying: Promise<void> = Promise.resolve();
  private readonly relays: boolean;

  constructor(
    private readonly db: PlatformDatabase,
    @Inject(SETTINGS) settings: Settings,
    @Optional() @Inject(DurableEvents) private readonly events?: DurableEvents,
  ) {
    // The processes that record auth events relay them; a runtime or datastore process may not reach the outbox.
    this.relays = settings.services.includes('graphql-gateway') || settings.services.includes('admin-api');
  }

  onApplicationBootstrap(): void {
    if (!this.relays || !this.events) return;
    // What a crashed process left is published now; later entries once they are old enough.
    this.schedule(0);
    this.timer = setInterval(() => this.schedule(AUTH_EVENT_RELAY_AFTER_MS), RELAY_EVERY_MS);
    this.timer.unref();
  }

  /**
   * Waits a moment for the publishes under way (their entries leave the outbox), then stops relaying; what
   * is still waiting for a consumer stays in the outbox for the next start.
   */
  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.relaying;
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.underWay.values()]), new Promise<void>((resolve) => (waited = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(waited);
  }

  /**
   * Records an event: resolves once it is in the outbox (it is safe then), and publishes it in the
   * background, so a slow trigger never delays the request that caused it. Rejects only when the outbox
   * could not be written: the caller decides whether that fails its request.
   */
  async occurred(event: AppAuthEvent): Promise<void> {
    if (!this.events) return;
    const outbox = await this.db.collection('auth_event_outbox');
    await outbox.insertOne({ _id: event.eventId, event, at: new Date() });
    this.publish(event);
  }

  /**
   * Records a CREATE or DELETE around the user write that makes it happen: in the outbox before `write`
   * runs, so a crash between the two loses no event (the relay publishes it once the write shows, and drops
   * it when the write never happened); published after, as `published` makes it from what `write` answered
   * (undefined: it did not happen after all, e.g. another request created the user, and it is withdrawn).
   * An outbox that cannot be written does not stop the write (logged): the event is then recorded after it.
   */
  async around<T>(event: AppAuthEvent, write: () => Promise<T>, published: (result: T) => AppAuthEvent | undefined = () => event): Promise<T> {
    if (!this.events) return write();
    let inOutbox = true;
    try {
      await (await this.db.collection('auth_event_outbox')).insertOne({ _id: event.eventId, event, at: new Date() });
    } catch (error) {
      inOutbox = false;
      logger.warn(`auth event ${event.eventId} of app ${event.appId} not in the outbox before its write: ${error instanceof Error ? error.message : String(error)}`);
    }
    const result = await write();
    const happened = published(result);
    if (!happened) {
      if (inOutbox) await (await this.db.collection('auth_event_outbox')).deleteOne({ _id: event.eventId }).catch(() => undefined);
    } else if (inOutbox) this.publish(happened);
    else await this.occurred(happened).catch((error: unknown) => logger.warn(`auth event ${event.eventId} of app ${event.appId} not recorded: ${error instanceof Error ? error.message : String(error)}`));
    return result;
  }

  /** Publishes what waits in the outbox for longer than `olderThanMs` and is not under way here. */
  async relay(olderThanMs = AUTH_EVENT_RELAY_AFTER_MS): Promise<number> {
    const outbox = await this.db.collection('auth_event_outbox');
    const due = (await outbox.find({ at: { $lte: new Date(Date.now() - olderThanMs) } }, undefined, { sort: { at: 1 }, limit: RELAY_PAGE }).toArray()) as unknown as OutboxEntry[];
    let relayed = 0;
    for (const entry of due) {
      if (this.underWay.has(entry._id)) continue;
      const event = await this.afterItsWrite(entry);
      if (!event) continue;
      this.publish(event);
      relayed++;
    }
    return relayed;
  }

  /**
   * The event of an outbox entry if its user write happened (a CREATE: the user exists, and is shown as
   * stored; a DELETE: the user is gone). One whose write has not happened is left for later while it is
   * young (the write may be under way elsewhere), and dropped once older than AUTH_EVENT_RELAY_AFTER_MS.
   */
  private async afterItsWrite(entry: OutboxEntry): Promise<AppAuthEvent | undefined> {
    const { event } = entry;
    if (event.operationType !== 'CREATE' && event.operationType !== 'DELETE') return event;
    const user = (await this.db.client.db(`app-${event.appId}`).collection('users').findOne({ _id: event.user.id })) as CallerUserRecord | null;
    if (event.operationType === 'CREATE' && user) return { ...event, user: callerUserOf(user) };
    if (event.operationType === 'DELETE' && !user) return event;
    if (Date.now() - new Date(entry.at).getTime() > AUTH_EVENT_RELAY_AFTER_MS) {
      logger.log(`dropped auth event ${event.eventId} (${event.operationType} of user ${event.user.id}): its user write never happened`);
      await (await this.db.collection('auth_event_outbox')).deleteOne({ _id: event.eventId });
    }
    return undefined;
  }

  private schedule(olderThanMs: number): void {
    this.relaying = this.relaying
      .then(() => this.relay(olderThanMs))
      .then(
        (relayed) => {
          if (relayed > 0) logger.log(`published ${relayed} auth event(s) left in the outbox again`);
        },
        (error: unknown) => logger.warn(`could not relay auth events: ${error instanceof Error ? error.message : String(error)}`),
      );
  }

  private publish(event: AppAuthEvent): void {
    const events = this.events;
    if (!events || this.underWay.has(event.eventId)) return;
    const publishing = (async () => {
      try {
        await events.publish(Subjects.AppsAuthEventOccurred, event, { messageId: event.eventId, untilConsumed: true });
        await (await this.db.collection('auth_event_outbox')).deleteOne({ _id: event.eventId });
      } catch (error) {
        // It stays in the outbox: the relay publishes it again.
        logger.warn(`auth event ${event.eventId} not published yet: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        this.underWay.delete(event.eventId);
      }
    })();
    this.underWay.set(event.eventId, publishing);
  }
}
