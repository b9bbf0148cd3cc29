/** One function call, as the admin API lists it. */
export interface ExecutionLogEntry {
  id: string;
  appId: string;
  functionName: string;
  /** The function's config id, when it has one. */
  functionId?: string;
  /** Correlation id of the request that made the call (App Services logs it as `co_id`). */
  correlationId?: string;
  /** W3C trace id of the request that made the call, when it came with a trace context. */
  traceId?: string;
  /** Who called: a user id, or `system`. */
  callerId: string;
  /** Whom the function ran as: a user id, or `system`. */
  runAsId: string;
  origin: CallOrigin;
  remoteIPAddress?: string;
  startedAt: Date;
  durationMs: number;
  /** Used heap of the sandbox after the call, in bytes. */
  memoryBytes: number;
  logs: string[];
  error?: { code: string; message: string };
  /** Canonical EJSON of the arguments; absent when the function sets disable_arg_logs. */
  arguments?: string;
  argumentsOmitted: boolean;
  /** Set when a trigger fired the call. */
  trigger?: TriggerRun;
  /** Set when the call served an HTTPS endpoint or an incoming webhook: logged as `ENDPOINT` or `WEBHOOK`. */
  http?: { kind: 'endpoint' | 'webhook' | 'data-api'; route: string };
}

/** Which trigger a call ran for; App Services logs such a call as a run of the trigger (`DB_TRIGGER`, `SCHEDULED_TRIGGER`). */
export interface TriggerRun {
  name: string;
  id?: string;
  /** `DATABASE` or `SCHEDULED`. */
  type: string;
  /** When the change a database trigger runs for was made (the feed's wall time): its run's lag is measured from it. */
  changedAt?: Date;
}

/** Where a call came from; `client` and `http` calls are the only ones subject to `private` and `can_evaluate`. */
export type CallOrigin = 'client' | 'http' | 'trigger' | 'system';

export interface ExecutionLogQuery {
  appId: string;
  functionName?: string;
  /** `only`: failed calls only; `exclude`: successful calls only; absent: both. */
  errors?: 'only' | 'exclude';
  /** Calls made by this user. */
  userId?: string;
  correlationId?: string;
  /** Calls started after this instant (exclusive). */
  startDate?: Date;
  /** Calls started at or before this instant (inclusive). */
  endDate?: Date;
  skip?: number;
  /** At most this many entries (default 100). */
  limit?: number;
}

/** Where execution logs go (the admin API reads them back, newest first). */
export interface ExecutionLogStore {
  append(entry: ExecutionLogEntry): void | Promise<void>;
  list(query: ExecutionLogQuery): Promise<ExecutionLogEntry[]>;
  /** Writes entries a store buffers; the runtime calls it when it stops. */
  flush?(): Promise<void>;
}

/** True when the entry matches every criterion of the query except skip and limit. */
export function matchesLogQuery(entry: ExecutionLogEntry, query: ExecutionLogQuery): boolean {
  if (entry.appId !== query.appId) return false;
  if (query.functionName !== undefined && entry.functionName !== query.functionName) return false;
  if (query.errors === 'only' && !entry.error) return false;
  if (query.errors === 'exclude' && entry.error) return false;
  if (query.userId !== undefined && entry.callerId !== query.userId) return false;
  if (query.correlationId !== undefined && entry.correlationId !== query.correlationId) return false;
  if (query.startDate && entry.startedAt.getTime() <= query.startDate.getTime()) return false;
  if (query.endDate && entry.startedAt.getTime() > query.endDate.getTime()) return false;
  return true;
}
