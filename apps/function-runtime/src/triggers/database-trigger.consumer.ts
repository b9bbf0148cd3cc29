import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, Optional } from '@nestjs/common';
import { type DocumentChanged, Subjects } from '@tessera/contracts';
import { DATASTORE_CHANGES_STREAM, type DurableEventContext, DurableEvents, type DurableSubscription } from '@tessera/messaging';
import { AppNotDeployedError, AppRegistryError, AppRegistryErrorCode, DeployedApps } from '@tessera/platform';
import { ChangePublisher } from '../change-events/change-publisher';
import { FunctionRuntimeService } from '../function-runtime.service';
import { databaseTriggers, triggerEventFor } from './database-trigger';
import { TriggerClaims } from './trigger-claims';

/** The durable consumer (queue group) of the function runtime's replicas: each change goes to one of them. */
export const TRIGGERS_CONSUMER = 'function-runtime-triggers';

const logger = new Logger('DatabaseTriggers');

/**
 * Fires database triggers: a durable consumer of `datastore.document.changed` shared by every function-runtime
 * replica, so each change is handled by one replica, and a restarted replica resumes where the group stopped.
 * Each matching trigger's function runs as system with the change event as its argument; the run is logged
 * as the trigger's (`DB_TRIGGER`). A failing function is logged and not retried (as App Services); a failure
 * to reach the app's configuration makes the event come again. Each run is claimed first (TriggerClaims), so
 * a change that reaches a second replica after a broker restart does not run twice.
 */
@Injectable()
export class DatabaseTriggerConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private subscription?: DurableSubscription;

  constructor(
    @Inject(DurableEvents) private readonly events: DurableEvents,
    private readonly deployed: DeployedApps,
    private readonly runtime: FunctionRuntimeService,
    @Optional() private readonly claims?: TriggerClaims,
    @Optional() private readonly publisher?: ChangePublisher,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await this.events.consume({
      stream: DATASTORE_CHANGES_STREAM,
      durable: TRIGGERS_CONSUMER,
      subject: Subjects.DatastoreDocumentChanged,
      handler: (change, context) => this.handle(change, context),
      // A running trigger keeps its event by reporting progress; an event whose replica died (or whose
      // delivery a broker restart lost) goes to another replica after this long.
      ackWaitMs: 15_000,
    });
  }

  /**
   * Stops consuming after this process's publisher stopped, so what it published last is handled first
   * (in standalone mode the in-process stream does not outlive the process), and before the runtime's
   * sandboxes are torn down.
   */
  async onModuleDestroy(): Promise<void> {
    await this.publisher?.onModuleDestroy();
    await this.subscription?.stop();
  }

  async handle(change: DocumentChanged, context: DurableEventContext): Promise<void> {
    let triggers;
    try {
      triggers = databaseTriggers((await this.deployed.byId(change.appId)).config);
    } catch (error) {
      // The app is gone: nothing to fire. Anything else (the registry unreachable) gets the event again.
      if (error instanceof AppNotDeployedError || (error instanceof AppRegistryError && error.errorCode === AppRegistryErrorCode.AppNotFound)) return;
      throw error;
    }
    for (const trigger of triggers) {
      const event = triggerEventFor(trigger, change);
      if (!event) continue;
      // Another replica already ran it (the event came again after a broker restart): once is enough.
      if (context.messageId && this.claims && !(await this.claims.claim(`${change.appId}/${trigger.name}/${context.messageId}`))) continue;
      try {
        await this.runtime.execute({
          appId: change.appId,
          name: trigger.functionName,
          arguments: [event],
          caller: { type: 'system' },
          origin: 'trigger',
          ...(context.correlationId ? { correlationId: context.correlationId } : {}),
          trigger: { name: trigger.name, ...(trigger.id ? { id: trigger.id } : {}), type: 'DATABASE' },
        });
      } catch (error) {
        // Recorded in the app's logs by the runtime as a failed run of the trigger.
        logger.debug(`trigger ${trigger.name} of app ${change.appId} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
