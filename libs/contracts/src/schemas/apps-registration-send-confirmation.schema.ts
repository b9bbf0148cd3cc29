import { z } from 'zod';

/**
 * Send a pending email/password user's confirmation again (the admin API's `send_confirm`): the client API,
 * which holds the provider's mailer, runs the flow the provider is configured with (the confirmation
 * function or the confirmation email).
 */
export const SendConfirmationRequestSchema = z.object({
  appId: z.string().min(1),
  email: z.string().min(1).max(254),
});
export type SendConfirmationRequest = z.infer<typeof SendConfirmationRequestSchema>;

export const SendConfirmationResponseSchema = z.object({
  outcome: z
    .enum(['sent', 'confirmed', 'pending', 'not_found', 'already_confirmed', 'not_enabled', 'failed'])
    .describe('sent: the email went out; confirmed or pending: what the confirmation function decided; failed: it failed or refused (message says why).'),
  message: z.string().optional(),
});
export type SendConfirmationResponse = z.infer<typeof SendConfirmationResponseSchema>;
