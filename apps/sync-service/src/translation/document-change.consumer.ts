import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { Subjects } from '@tessera/contracts';
import { DATASTORE_CHANGES_STREAM, DurableEvents, type DurableSubscription } from '@tessera/messaging';
import { FlexibleHub } from '../flexible/flexible-hub';
import { PartitionTranslator } from './partition-translator';

/** The durable consumer (queue group) of the sync service's replicas: each change goes to one of them. */
export const SYNC_TRANSLATION_CONSUMER = 'sync-service-translation';

/**
 * Feeds `datastore.document.changed` (published by the function runtime's change publisher for every
 * linked data source) to the translator, which appends server changesets to the partitions a change
 * touches. A failure to reach a store makes the event come again; a document that does not fit is the
 * translator's to skip.
 */
@Injectable()
export class DocumentChangeConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private subscription?: DurableSubscription;

  constructor(
    @Inject(DurableEvents) private readonly events: DurableEvents,
    private readonly translator: PartitionTranslator,
    private readonly flexible: FlexibleHub,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await this.events.consume({
      stream: DATASTORE_CHANGES_STREAM,
      durable: SYNC_TRANSLATION_CONSUMER,
      subject: Subjects.DatastoreDocumentChanged,
      // The flexible-sync sessions of this process whose views the change concerns (they are told at once and
      // read the document themselves, so telling them again on a redelivery is harmless), then partition
      // histories: a change waits for no history work before it reaches the sessions it concerns.
      handler: async (change) => {
        await this.flexible.handleChange(change);
        await this.translator.handleChange(change);
      },
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.subscription?.stop();
  }
}
