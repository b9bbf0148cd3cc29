import type { CallerUser } from '@tessera/contracts';

/** Limits and sizes of the runtime; App Services defaults unless stated. */
export interface FunctionRuntimeOptions {
  /** Wall-clock limit of one call, nested calls included (App Services: 300 s). */
  timeLimitMs: number;
  /** Heap limit of one sandbox isolate (App Services: 350 MB). */
  memoryLimitMb: number;
  /** Largest result, as canonical EJSON text. */
  maxResultBytes: number;
  /** Warm sandboxes per app (each runs one call at a time). */
  sandboxesPerApp: number;
  /**
   * Sandboxes per app at most while every running call of the app waits on the host (data access, HTTP,
   * timers): calls that wait use no thread, and must not hold the app's other calls back.
   */
  sandboxesPerAppWhileWaiting: number;
  /** Nested `context.functions.execute` calls one top-level call may make. */
  maxNestedCalls: number;
  maxLogLines: number;
  maxLogBytes: number;
  maxLogLineBytes: number;
  /** Host operations (data access, HTTP, timers) one call may have in flight at once. */
  maxPendingOperations: number;
  /** A warm sandbox unused this long is disposed (0: never), so idle apps do not hold memory. */
  idleSandboxTtlMs: number;
}

export const DEFAULT_FUNCTION_RUNTIME_OPTIONS: FunctionRuntimeOptions = {
  timeLimitMs: 300_000,
  memoryLimitMb: 350,
  maxResultBytes: 16 * 1024 * 1024,
  sandboxesPerApp: 4,
  sandboxesPerAppWhileWaiting: 32,
  maxNestedCalls: 1_000,
  maxLogLines: 1_000,
  maxLogBytes: 1024 * 1024,
  maxLogLineBytes: 64 * 1024,
  maxPendingOperations: 10_000,
  idleSandboxTtlMs: 10 * 60_000,
};

/** What a can_evaluate expression is evaluated against. */
export interface CanEvaluateInput {
  appId: string;
  functionName: string;
  /** The calling user (null for a call without a user). */
  user: CallerUser | null;
  /** `%%args`: a function's arguments, or an HTTP service action's request (see assertHttpServiceRule). */
  arguments: unknown[] | Record<string, unknown>;
  request?: FunctionRequestInfo;
}

/** Evaluates a can_evaluate rule expression (libs/rules plugs in here). */
export type CanEvaluateEvaluator = (expression: Record<string, unknown>, input: CanEvaluateInput) => Promise<boolean>;

/** `context.request` of a call that came over HTTP. */
export interface FunctionRequestInfo {
  remoteIPAddress?: string;
  requestHeaders?: Record<string, string[]>;
  webhookUrl?: string;
  httpMethod?: string;
  rawQueryString?: string;
  httpReferrer?: string;
  httpUserAgent?: string;
  service?: string;
  action?: string;
  [key: string]: unknown;
}
