import { z } from 'zod';

/**
 * A sync-service replica appended to a partition's history (in the shared datastore): every other replica
 * with sessions on that partition reads the new versions from the datastore and sends them to its clients.
 */
export const SyncHistoryAppendedSchema = z.object({
  partition: z.string().min(1).describe('The partition: `<app id>/<partition value as canonical Extended JSON>`.'),
  version: z.number().int().min(1).describe('The head version after the append.'),
  replica: z.string().min(1).max(128).describe('Id of the replica that appended: it has woken its own sessions already.'),
});
export type SyncHistoryAppended = z.infer<typeof SyncHistoryAppendedSchema>;
