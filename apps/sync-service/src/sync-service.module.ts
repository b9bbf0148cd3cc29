import { Module } from '@nestjs/common';
import { PartitionHub } from './sessions/partition-hub';
import { DocumentChangeConsumer } from './translation/document-change.consumer';
import { PartitionTranslator } from './translation/partition-translator';
import { TranslatingHistory } from './translation/translating-history';
import { SyncUpgradeHandler } from './upgrade/sync-upgrade.handler';

/** Partition-based sync (spec 2.6): the realm-sync WebSocket on the host's HTTP server. */
@Module({
  providers: [
    SyncUpgradeHandler,
    PartitionTranslator,
    DocumentChangeConsumer,
    {
      // Every partition's history keeps the synced collections in step with it (translation/).
      provide: PartitionHub,
      inject: [PartitionTranslator],
      useFactory: (translator: PartitionTranslator): PartitionHub => {
        const hub = new PartitionHub(undefined, (storage, key) => new TranslatingHistory(storage, key, translator));
        translator.attach(hub);
        return hub;
      },
    },
  ],
})
export class SyncServiceModule {}
