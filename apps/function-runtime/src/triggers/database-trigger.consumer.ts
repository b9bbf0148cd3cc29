import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy, Optional } from '@nestjs/common';
import { type DocumentChanged, Subjects } from '@tessera/contracts';
import { DATASTORE_CHANGES_STREAM, type DurableEventContext, DurableEvents, type DurableSubscription } from '@tessera/messaging';
import { DeployedApps } from '@tessera/platform';
import { ChangePublisher } from '../change-events/change-publisher';
import { isAppGone } from './app-gone';
import { databaseTriggers, watches } from './database-trigger';
import { DatabaseTriggerRunner } from './database-trigger-runner';

/** The durable consumer (queue group) of unordered triggers (`unordered: true`): replicas share the changes. */
export const TRIGGERS_CONSUMER = 'function-runtime-triggers';
/**
 * The durable consumer of ordered triggers (App Services' default): the group hands out one change at a time
 * (max ack pending 1), so whichever replica handles it, a collection's changes run in the order they happened.
 */
export const ORDERED_TRIGGERS_CONSUMER = 'function-runtime-ordered-triggers';

/**
 * Fires database triggers: durable consumers of `datastore.document.changed` shared by every function-runtime
 * replica, so each change is handled by one replica, and a restarted replica resumes where the group stopped.
 * Each change goes to the triggers that watch its source, namespace and operation type (and `match`) only;
 * DatabaseTriggerRunner runs them with App Services' lifecycle (retries, suspension, backlog, resume). A
 * failure to reach the app's configuration makes the event come again.
 */
@Injectable()
export class DatabaseTriggerConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly subscriptions: DurableSubscription[] = [];

  constructor(
    @Inject(DurableEvents) private readonly events: DurableEvents,
    private readonly deployed: DeployedApps,
    private readonly runner: DatabaseTriggerRunner,
    @Optional() private readonly publisher?: ChangePublisher,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const ordered of [false, true]) {
      this.subscriptions.push(
        await this.events.consume({
          stream: DATASTORE_CHANGES_STREAM,
          durable: ordered ? ORDERED_TRIGGERS_CONSUMER : TRIGGERS_CONSUMER,
          subject: Subjects.DatastoreDocumentChanged,
          handler: (change, context) => this.handle(change, context, ordered),
          // A running trigger keeps its event by reporting progress; an event whose replica died (or whose
          // delivery a broker restart lost) goes to another replica after this long.
          ackWaitMs: 15_000,
          ...(ordered ? { maxAckPending: 1 } : {}),
        }),
      );
    }
  }

  /**
   * Stops consuming after this process's publisher stopped, so what it published last is handled first
   * (in standalone mode the in-process stream does not outlive the process), and before the runtime's
   * sandboxes are torn down.
   */
  async onModuleDestroy(): Promise<void> {
    await this.publisher?.onModuleDestroy();
    await Promise.all(this.subscriptions.map((subscription) => subscription.stop()));
  }

  async handle(change: DocumentChanged, context: DurableEventContext, ordered: boolean): Promise<void> {
    let triggers;
    try {
      triggers = databaseTriggers((await this.deployed.byId(change.appId)).config);
    } catch (error) {
      // The app is gone: nothing to fire. Anything else (the registry unreachable) gets the event again.
      if (isAppGone(error)) return;
      throw error;
    }
    const delivery = { change, messageId: context.messageId, ...(context.correlationId ? { correlationId: context.correlationId } : {}) };
    for (const trigger of triggers) {
      if (trigger.ordered !== ordered || !watches(trigger, change)) continue;
      await this.runner.deliver(trigger, delivery);
    }
  }
}
