import { z } from 'zod';

/**
 * Follow an app's data sources as deployed now (the admin API asks after a deploy, in distributed mode): one
 * function-runtime replica opens the change feeds the deployment links and answers once they watch, so that
 * a write made as soon as the deploy is answered fires the app's new database triggers.
 */
export const ChangeFeedsFollowRequestSchema = z.object({
  appId: z.string().min(1),
});
export type ChangeFeedsFollowRequest = z.infer<typeof ChangeFeedsFollowRequestSchema>;

export const ChangeFeedsFollowResponseSchema = z.object({
  feeds: z.array(z.string()).describe('The feeds that replica follows for the app, as `<app>/<service>`.'),
});
export type ChangeFeedsFollowResponse = z.infer<typeof ChangeFeedsFollowResponseSchema>;
