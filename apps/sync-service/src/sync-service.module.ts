import { Module } from '@nestjs/common';
import { SyncUpgradeHandler } from './upgrade/sync-upgrade.handler';

/** Partition-based sync (spec 2.6): the realm-sync WebSocket on the host's HTTP server. */
@Module({ providers: [SyncUpgradeHandler] })
export class SyncServiceModule {}
