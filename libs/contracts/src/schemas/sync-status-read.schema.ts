import { z } from 'zod';

/** What the sync service knows of an app right now, across its replicas (for the admin API). */
export const SyncStatusRequestSchema = z.object({
  appId: z.string().min(1),
});
export type SyncStatusRequest = z.infer<typeof SyncStatusRequestSchema>;

export const SyncConnectedClientSchema = z.object({
  user_id: z.string().describe('The app user the connection authenticated as.'),
  partitions: z.array(z.string()).describe('Partition values of the sessions bound on the connection (as the client wrote them).'),
  connected_at: z.string().describe('When the WebSocket was accepted (ISO 8601).'),
  replica: z.string().describe('Id of the sync-service replica holding the connection.'),
});
export type SyncConnectedClient = z.infer<typeof SyncConnectedClientSchema>;

export const SyncPartitionHistorySchema = z.object({
  partition: z.string().describe('The partition value as canonical Extended JSON.'),
  epoch: z.number().int().min(0).describe('The reset epoch the history belongs to (each re-enable after a terminate starts a new one).'),
  versions: z.number().int().min(0),
  bytes: z.number().int().min(0).describe('Changeset bytes up to the head version.'),
  compacted_until: z.number().int().min(0),
  client_files: z.number().int().min(0),
});
export type SyncPartitionHistory = z.infer<typeof SyncPartitionHistorySchema>;

export const SyncStatusResponseSchema = z.object({
  replicas: z.number().int().min(0).describe('Sync-service replicas alive that reported their connections.'),
  clients: z.array(SyncConnectedClientSchema),
  partitions: z.array(SyncPartitionHistorySchema),
  truncated: z.boolean().describe('True when a listing stopped at its limit.'),
});
export type SyncStatusResponse = z.infer<typeof SyncStatusResponseSchema>;

/** Resets one client file of an app (the admin API's `sync/force_reset`): its next IDENT or UPLOAD gets a client reset. */
export const SyncClientResetRequestSchema = z.object({
  appId: z.string().min(1),
  fileIdent: z.number().int().min(1).describe('The client file ident the server issued (idents are per partition in Tessera).'),
  partition: z.string().max(4096).optional().describe('The partition value as the client binds it; needed when the ident exists in several partitions.'),
});
export type SyncClientResetRequest = z.infer<typeof SyncClientResetRequestSchema>;

export const SyncClientResetResponseSchema = z.object({
  outcome: z.enum(['reset', 'not_found', 'ambiguous', 'invalid_partition']),
  partitions: z.array(z.string()).describe('Partitions (canonical Extended JSON) where the ident was found.'),
});
export type SyncClientResetResponse = z.infer<typeof SyncClientResetResponseSchema>;
