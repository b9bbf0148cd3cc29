import { z } from 'zod';

export const HealthPingRequestSchema = z.object({
  sentAt: z.string().datetime().optional().describe('When the caller sent the ping (ISO 8601).'),
});
export type HealthPingRequest = z.infer<typeof HealthPingRequestSchema>;

/** Who answered: one member of one queue group handles each ping. */
export const HealthPingResponseSchema = z.object({
  service: z.string().min(1),
  instanceId: z.string().min(1),
  uptimeMs: z.number().min(0).optional(),
});
export type HealthPingResponse = z.infer<typeof HealthPingResponseSchema>;
