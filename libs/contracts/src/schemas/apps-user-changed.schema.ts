import { z } from 'zod';

/**
 * An app user lost access (disabled, deleted, or every session revoked): services holding live connections
 * of that user close them.
 */
export const AppUserChangedSchema = z.object({
  appId: z.string().min(1),
  userId: z.string().min(1),
  change: z.enum(['disabled', 'deleted', 'sessions-revoked']).describe('What happened to the user.'),
});
export type AppUserChanged = z.infer<typeof AppUserChangedSchema>;
