import { Module } from '@nestjs/common';
import { FlexibleHub } from './flexible/flexible-hub';
import { AppDeletion } from './lifecycle/app-deletion';
import { ClientReset } from './lifecycle/client-reset';
import { SyncApps } from './lifecycle/sync-apps.service';
import { SyncCompaction } from './lifecycle/sync-compaction';
import { SyncConnections } from './lifecycle/sync-connections';
import { SyncEventsHandler } from './lifecycle/sync-events.handler';
import { SyncPresence } from './lifecycle/sync-presence';
import { SyncAdminHandler } from './lifecycle/sync-admin.handler';
import { FlexibleDocumentChangedHandler } from './replicas/flexible-document-changed.handler';
import { HistoryAppendedHandler } from './replicas/history-appended.handler';
import { historyHousekeepingProvider, partitionHubProvider, SharedHistoryLifecycle } from './replicas/shared-history';
import { DocumentChangeConsumer } from './translation/document-change.consumer';
import { PartitionTranslator } from './translation/partition-translator';
import { SyncUpgradeHandler } from './upgrade/sync-upgrade.handler';

/**
 * Partition-based sync (spec 2.6): the realm-sync WebSocket on the host's HTTP server, its lifecycle
 * (spec 3), the history shared with the other replicas through the datastore, and the translation that
 * keeps the synced collections and the histories in step.
 */
@Module({
  controllers: [SyncEventsHandler, HistoryAppendedHandler, FlexibleDocumentChangedHandler, SyncAdminHandler],
  providers: [
    partitionHubProvider,
    historyHousekeepingProvider,
    SharedHistoryLifecycle,
    PartitionTranslator,
    FlexibleHub,
    DocumentChangeConsumer,
    SyncApps,
    SyncConnections,
    SyncCompaction,
    SyncPresence,
    AppDeletion,
    ClientReset,
    SyncUpgradeHandler,
  ],
  exports: [SyncCompaction, SyncConnections, SyncPresence],
})
export class SyncServiceModule {}
