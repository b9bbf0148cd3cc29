import { Module } from '@nestjs/common';
import { HistoryAppendedHandler } from './replicas/history-appended.handler';
import { partitionHubProvider, SharedHistoryLifecycle } from './replicas/shared-history';
import { SyncUpgradeHandler } from './upgrade/sync-upgrade.handler';

/** Partition-based sync (spec 2.6): the realm-sync WebSocket on the host's HTTP server. */
@Module({ controllers: [HistoryAppendedHandler], providers: [partitionHubProvider, SharedHistoryLifecycle, SyncUpgradeHandler] })
export class SyncServiceModule {}
