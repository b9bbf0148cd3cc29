// Public entry of @tessera/sync-service.
export const projectName = 'sync-service';
export { SyncServiceModule } from './sync-service.module';
export { SyncConnection, type SyncConnectionContext } from './sessions/sync-connection';
export { type SyncReport, type SyncSocket } from './sessions/session-connection';
export { historyKey, PartitionHub, type PartitionListener } from './sessions/partition-hub';
export { syncModeOf, defaultClientMaxOfflineDays, queryableFieldsFor, type SyncMode, type FlexibleSyncMode } from './sessions/sync-config';
export { authenticateSyncUser, type SyncAuthResult } from './upgrade/sync-auth';
export { SyncApps, type PermissionScope, type SyncAppView } from './lifecycle/sync-apps.service';
export { SyncCompaction, type CompactionRun } from './lifecycle/sync-compaction';
export { SyncConnections, type LiveConnection } from './lifecycle/sync-connections';
export { SyncPresence, PRESENCE_STALE_MS } from './lifecycle/sync-presence';
export { HistoryHousekeeping, type PartitionHistorySize, type PurgedHistory } from './storage/history-housekeeping';
export { DatastoreHistoryStorage, SYNC_HISTORY_DATABASE } from './storage/datastore-history-storage';
export { createSyncMetrics, registerHistoryGauges, type SyncMetrics } from './sessions/sync-metrics';
export { syncRuleUser } from './users/sync-user';
export { AppDeletion } from './lifecycle/app-deletion';
export { FlexibleHeldNamespace } from './flexible/flexible-client-files';
