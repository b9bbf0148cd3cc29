import { z } from 'zod';

/**
 * A document of a flexible-sync type changed (written by a flexible session's upload, or by anyone else and
 * received from the change feed by one replica): every other sync-service replica reads it and sends it to
 * its sessions whose views it enters, changes in or leaves.
 */
export const SyncFlexibleDocumentChangedSchema = z.object({
  appId: z.string().min(1).describe('The app.'),
  table: z.string().min(1).describe('The synced type (object type name) of the document.'),
  documentKey: z.string().min(1).max(16_384).describe('The `_id` of the document, as canonical Extended JSON.'),
  replica: z.string().min(1).max(128).describe('Id of the replica that announces it: it has told its own sessions already.'),
});
export type SyncFlexibleDocumentChanged = z.infer<typeof SyncFlexibleDocumentChangedSchema>;
