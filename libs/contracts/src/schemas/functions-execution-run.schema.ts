import { z } from 'zod';
import { CallerSchema } from './caller.schema';
import { EjsonValueSchema } from './ejson.schema';

/** Where the call comes from: the runtime refuses private functions to `client` callers. */
export const CallOriginSchema = z.enum(['client', 'endpoint', 'trigger', 'graphql', 'rule', 'admin', 'function']);
export type CallOrigin = z.infer<typeof CallOriginSchema>;

/**
 * The caller's request, as `context.request` shows it to the function. All optional: a trigger has no HTTP
 * request. `origin` is required so the runtime can apply `private`.
 */
export const RequestMetadataSchema = z.object({
  origin: CallOriginSchema,
  remoteIpAddress: z.string().optional(),
  httpMethod: z.string().optional(),
  httpUserAgent: z.string().optional(),
  httpReferrer: z.string().optional(),
  rawQueryString: z.string().optional(),
  webhookUrl: z.string().optional(),
  requestHeaders: z.record(z.array(z.string())).optional(),
  service: z.string().optional(),
  action: z.string().optional(),
});
export type RequestMetadata = z.infer<typeof RequestMetadataSchema>;

/**
 * Hints on whose authority the function runs. The function's own configuration (run_as_system,
 * run_as_user_id, run_as_user_id_script_source) has the last word; a hint only applies where the
 * configuration leaves the choice to the caller (a trigger or an endpoint configured to run as system).
 */
export const RunAsHintsSchema = z.object({
  system: z.boolean().optional(),
  userId: z.string().min(1).optional(),
});
export type RunAsHints = z.infer<typeof RunAsHintsSchema>;

/**
 * A call that serves an HTTP request (a custom HTTPS endpoint or an incoming webhook): the function gets the
 * request as its first argument and App Services' `response` object as its second, and what it set on that
 * object comes back in the response's `http`. A webhook's source is the webhook's own (`service`, `webhook`),
 * not an app function's; `functionName` then names the webhook for the logs. `data-api` runs the Data API
 * configuration's `run_as_user_id_script_source` for the request and answers the id of the user it chose.
 */
export const HttpCallSchema = z.object({
  kind: z.enum(['endpoint', 'webhook', 'data-api']),
  /** The endpoint's route or the webhook's URL path, for the app's logs. */
  route: z.string().max(2048),
  service: z.string().min(1).max(64).optional(),
  webhook: z.string().min(1).max(256).optional(),
});
export type HttpCall = z.infer<typeof HttpCallSchema>;

/**
 * Source the admin API runs without deploying it (`debug/execute_function_source`), in place of a deployed
 * function, with its `eval_source` as the can_evaluate expression. The runtime takes it from `admin` calls only.
 */
export const UnsavedSourceSchema = z.object({
  text: z.string().min(1).max(1_000_000),
  canEvaluate: z.record(z.unknown()).optional(),
});
export type UnsavedSource = z.infer<typeof UnsavedSourceSchema>;

export const FunctionRunRequestSchema = z.object({
  appId: z.string().min(1),
  functionName: z.string().min(1).max(256),
  source: UnsavedSourceSchema.optional(),
  args: z.array(EjsonValueSchema).describe('Arguments, each in canonical Extended JSON.'),
  caller: CallerSchema,
  runAs: RunAsHintsSchema.optional(),
  metadata: RequestMetadataSchema,
  http: HttpCallSchema.optional(),
});
export type FunctionRunRequest = z.infer<typeof FunctionRunRequestSchema>;

/** What an HTTP-serving function set on its `response` object; nothing set is `{ headers: {} }`. */
export const HttpResponseStateSchema = z.object({
  statusCode: z.number().int().min(100).max(599).optional(),
  headers: z.record(z.array(z.string())),
  bodyBase64: z.string().optional(),
});
export type HttpResponseState = z.infer<typeof HttpResponseStateSchema>;

/** The function's return value, or why it failed (FunctionNotFound, FunctionExecutionError, ...). */
export const FunctionRunResponseSchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    result: EjsonValueSchema.describe('Return value in canonical Extended JSON; null when the function returned nothing.'),
    logs: z.array(z.string()).optional(),
    http: HttpResponseStateSchema.optional(),
  }),
  z.object({
    ok: z.literal(false),
    error: z.object({ errorCode: z.string().min(1), message: z.string() }),
    logs: z.array(z.string()).optional(),
  }),
]);
export type FunctionRunResponse = z.infer<typeof FunctionRunResponseSchema>;

/** What a caller of `functions.execution.run` allows beyond the runtime's time limit: answering, logging, the hops. */
export const FUNCTION_CALL_MARGIN_MS = 5_000;

/**
 * How long a caller waits for `functions.execution.run`: the runtime's execution time limit plus a margin, so
 * a function that runs to its limit is answered by the runtime (ExecutionTimeLimitExceeded), never cut off by
 * the transport. The deadline travels in the request's x-deadline header; the runtime stops the call there.
 */
export function functionCallTimeoutMs(timeLimitMs: number): number {
  return timeLimitMs + FUNCTION_CALL_MARGIN_MS;
}
