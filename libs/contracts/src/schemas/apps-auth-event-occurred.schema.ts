import { z } from 'zod';
import { CallerUserSchema } from './caller.schema';

/**
 * An authentication event of an app user (App Services' auth event): a user was created, logged in or was
 * deleted. Authentication triggers (`type: AUTHENTICATION`) run on it, and a creation runs the custom user
 * data's user creation function. `eventId` is unique per event: replicas claim their run by it.
 */
export const AppAuthEventSchema = z.object({
  appId: z.string().min(1),
  eventId: z.string().min(1),
  operationType: z.enum(['CREATE', 'LOGIN', 'DELETE']),
  /** The provider types the event concerns (`anon-user`, `local-userpass`, `api-key`, ...). */
  providers: z.array(z.string().min(1)),
  user: CallerUserSchema.describe('The user as context.user shows it.'),
  /** When it happened (ISO 8601). */
  time: z.string().min(1),
});
export type AppAuthEvent = z.infer<typeof AppAuthEventSchema>;
