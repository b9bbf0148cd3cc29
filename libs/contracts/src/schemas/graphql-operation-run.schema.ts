import { z } from 'zod';

/**
 * Run a GraphQL operation of an app's API as the system user (the admin API's `POST .../graphql`): rules and
 * authentication are bypassed, custom resolvers run their functions as the system. The gateway, which holds
 * each app's schema, runs it.
 */
export const GraphqlOperationRunRequestSchema = z.object({
  appId: z.string().min(1),
  query: z.string().min(1).max(1_000_000),
  variables: z.record(z.unknown()).optional(),
  operationName: z.string().min(1).max(1024).optional(),
});
export type GraphqlOperationRunRequest = z.infer<typeof GraphqlOperationRunRequestSchema>;

export const GraphqlOperationRunResponseSchema = z.object({
  /** The GraphQL response as JSON text (`data`, and `errors` when the operation had any), as the endpoint writes it. */
  body: z.string(),
});
export type GraphqlOperationRunResponse = z.infer<typeof GraphqlOperationRunResponseSchema>;
