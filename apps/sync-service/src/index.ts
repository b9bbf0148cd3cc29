// Public entry of @tessera/sync-service.
export const projectName = 'sync-service';
export { SyncServiceModule } from './sync-service.module';
export { SyncConnection, type SyncConnectionContext, type SyncReport, type SyncSocket } from './sessions/sync-connection';
export { historyKey, PartitionHub, type PartitionListener } from './sessions/partition-hub';
export { syncModeOf, defaultClientMaxOfflineDays, queryableFieldsFor, type SyncMode, type FlexibleSyncMode } from './sessions/sync-config';
export { authenticateSyncUser, type SyncAuthResult } from './upgrade/sync-auth';
export { SyncApps, type PermissionScope, type SyncAppView } from './lifecycle/sync-apps.service';
export { SyncCompaction, type CompactionRun } from './lifecycle/sync-compaction';
export { SyncConnections } from './lifecycle/sync-connections';
export { syncRuleUser } from './users/sync-user';
