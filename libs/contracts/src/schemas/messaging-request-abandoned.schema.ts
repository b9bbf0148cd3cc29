import { z } from 'zod';

/**
 * A caller stopped waiting for a request: its client went away, or its deadline passed. Whoever handles the
 * request may stop working on it (the function runtime terminates the call and frees its sandbox).
 */
export const RequestAbandonedSchema = z.object({
  callId: z.string().min(1).max(128).describe('The x-call-id header of the abandoned request.'),
  subject: z.string().min(1).describe('Subject the request was sent on.'),
  reason: z.enum(['aborted', 'deadline']).describe('aborted: the caller cancelled (its client disconnected); deadline: it stopped waiting.'),
});
export type RequestAbandoned = z.infer<typeof RequestAbandonedSchema>;
