import { z } from 'zod';

/** An application's deployed configuration changed: replicas drop what they cached and reload this version. */
export const AppDeploymentChangedSchema = z.object({
  appId: z.string().min(1),
  deploymentId: z.string().min(1).describe('Id of the deployment that produced this configuration.'),
  version: z.number().int().min(0).describe('Monotonic configuration version of the app; a replica ignores versions it already has.'),
});
export type AppDeploymentChanged = z.infer<typeof AppDeploymentChangedSchema>;
