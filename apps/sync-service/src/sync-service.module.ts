import { Module } from '@nestjs/common';
import { SyncApps } from './lifecycle/sync-apps.service';
import { SyncCompaction } from './lifecycle/sync-compaction';
import { SyncConnections } from './lifecycle/sync-connections';
import { SyncEventsHandler } from './lifecycle/sync-events.handler';
import { PartitionHub } from './sessions/partition-hub';
import { SyncUpgradeHandler } from './upgrade/sync-upgrade.handler';

/** Partition-based sync (spec 2.6): the realm-sync WebSocket on the host's HTTP server, and its lifecycle (spec 3). */
@Module({
  controllers: [SyncEventsHandler],
  providers: [{ provide: PartitionHub, useFactory: () => new PartitionHub() }, SyncApps, SyncConnections, SyncCompaction, SyncUpgradeHandler],
  exports: [SyncCompaction, SyncConnections],
})
export class SyncServiceModule {}
