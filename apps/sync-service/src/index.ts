// Public entry of @tessera/sync-service.
export const projectName = 'sync-service';
export { SyncServiceModule } from './sync-service.module';
export { SyncConnection, type SyncConnectionContext, type SyncSocket } from './sessions/sync-connection';
export { PartitionHub, type PartitionListener } from './sessions/partition-hub';
export { syncModeOf, type SyncMode } from './sessions/sync-config';
export { authenticateSyncUser, type SyncAuthResult } from './upgrade/sync-auth';
