import { z } from 'zod';

/**
 * How a failure travels back to a caller: a stable code and a message safe to show to a client (never a
 * stack trace). `httpStatus` lets the HTTP edge answer as the failing service would have.
 */
export const RemoteErrorSchema = z.object({
  errorCode: z.string().min(1).describe('Stable error code, for example FunctionNotFound.'),
  message: z.string().describe('Message safe to show to a client.'),
  httpStatus: z.number().int().min(100).max(599).optional(),
  /** For InvalidPayload: which part of the exchange broke the contract, and how. */
  part: z.enum(['request', 'response', 'event']).optional(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export type RemoteError = z.infer<typeof RemoteErrorSchema>;
