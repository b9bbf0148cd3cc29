import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy, Optional } from '@nestjs/common';
import { Subjects } from '@tessera/contracts';
import { DATASTORE_CHANGES_STREAM, type DurableEvent, DurableEvents, type DurableSubscription } from '@tessera/messaging';
import { DeployedApps } from '@tessera/platform';
import { ChangePublisher } from '../change-events/change-publisher';
import { isAppGone } from './app-gone';
import { type DatabaseTrigger, databaseTriggers, watches } from './database-trigger';
import { DatabaseTriggerRunner, type TriggerDelivery } from './database-trigger-runner';

/** The durable consumer (queue group) of unordered triggers (`unordered: true`): replicas share the changes. */
export const TRIGGERS_CONSUMER = 'function-runtime-triggers';
/**
 * The durable consumer of ordered triggers (App Services' default): the group hands out one change at a time
 * (max ack pending 1), so whichever replica handles it, a collection's changes run in the order they happened.
 */
export const ORDERED_TRIGGERS_CONSUMER = 'function-runtime-ordered-triggers';
/** Changes handled together: one state read and one claim write per trigger and batch. */
export const TRIGGER_BATCH = 256;

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
        await this.events.consumeBatches({
          stream: DATASTORE_CHANGES_STREAM,
          durable: ordered ? ORDERED_TRIGGERS_CONSUMER : TRIGGERS_CONSUMER,
          subject: Subjects.DatastoreDocumentChanged,
          batch: TRIGGER_BATCH,
          batchHandler: (changes) => this.handle(changes, ordered),
          // A running trigger keeps its event by reporting progress; an event whose replica died (or whose
          // delivery a broker restart lost) goes to another replica after this long.
          ackWaitMs: 15_000,
          // Across replicas (JetStream) an ordered group hands out one change at a time; in one process the
          // in-process stream hands a member its changes in order, in batches.
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

  /**
   * A batch of changes, in stream order: each trigger gets the ones it watches, in that order; triggers run
   * side by side (an ordered trigger's changes one after the other, an unordered one's concurrently).
   */
  async handle(changes: ReadonlyArray<DurableEvent<typeof Subjects.DatastoreDocumentChanged>>, ordered: boolean): Promise<void> {
    const byTrigger = new Map<DatabaseTrigger, TriggerDelivery[]>();
    const configs = new Map<string, DatabaseTrigger[]>();
    for (const { payload: change, context } of changes) {
      let triggers = configs.get(change.appId);
      if (!triggers) {
        try {
          triggers = databaseTriggers((await this.deployed.byId(change.appId)).config);
        } catch (error) {
          // The app is gone: nothing to fire. Anything else (the registry unreachable) gets the events again.
          if (!isAppGone(error)) throw error;
          triggers = [];
        }
        configs.set(change.appId, triggers);
      }
      const delivery: TriggerDelivery = { change, messageId: context.messageId, ...(context.correlationId ? { correlationId: context.correlationId } : {}) };
      for (const trigger of triggers) {
        if (trigger.ordered !== ordered || !watches(trigger, change)) continue;
        const list = byTrigger.get(trigger);
        if (list) list.push(delivery);
        else byTrigger.set(trigger, [delivery]);
      }
    }
    // Every trigger finishes before a failure makes the batch come again (claims keep what ran from running twice).
    const results = await Promise.allSettled([...byTrigger].map(([trigger, deliveries]) => this.runner.deliverBatch(trigger, deliveries)));
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  }
}
