import { z } from 'zod';
import { EjsonDocumentSchema } from './ejson.schema';

/**
 * The one identity of an application user between services: the shape App Services shows a function as
 * `context.user` (snake_case, as the client API's profile spells it). The HTTP edge makes it once from the
 * user record (see `callerUserOf` in @tessera/platform); every hop passes it on unchanged; the rules'
 * `%%user` is derived from it in one place (`ruleUserOf`). `data` and `custom_data` are canonical EJSON.
 */
export const CallerUserSchema = z.object({
  id: z.string().min(1),
  type: z.enum(['normal', 'server', 'system']).optional(),
  data: EjsonDocumentSchema.optional().describe('User metadata from the auth providers (context.user.data).'),
  custom_data: EjsonDocumentSchema.optional().describe('Custom user data (context.user.custom_data).'),
  identities: z.array(z.object({ id: z.string(), provider_type: z.string() })).optional(),
});
export type CallerUser = z.infer<typeof CallerUserSchema>;

/** Who asks for the call: an application user, or the platform itself (triggers, admin, rules). */
export const CallerSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('user'), user: CallerUserSchema }),
  z.object({ type: z.literal('system') }),
]);
export type Caller = z.infer<typeof CallerSchema>;

/** The user `context.user` shows while a function runs as system. */
export const SYSTEM_CALLER_USER: CallerUser = Object.freeze({
  id: '000000000000000000000000',
  type: 'system',
  data: { name: 'system' },
  custom_data: {},
  identities: [],
});
