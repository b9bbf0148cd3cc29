import { LOG_BUFFER_FLUSH_MS, LogBuffer, type LogEntry, type LogStore, type NewLogEntry } from '@tessera/platform';
import type { ExecutionLogEntry, ExecutionLogQuery, ExecutionLogStore } from '../execution-logs/execution-log.store';

/** How long an entry may wait for the entries of the calls after it before they are written together. */
export const EXECUTION_LOG_FLUSH_MS = LOG_BUFFER_FLUSH_MS;

/**
 * Execution logs in the platform's log store, where the admin API (`GET .../logs`) and the CLI read them
 * as App Services `FUNCTION` entries.
 *
 * Every call appends an entry; entries wait up to EXECUTION_LOG_FLUSH_MS and are written together (see
 * LogBuffer). `flush` writes what waits: the runtime calls it when it stops, so a clean stop keeps every entry.
 */
export class PlatformExecutionLogStore implements ExecutionLogStore {
  private readonly buffer: LogBuffer;

  constructor(
    private readonly logs: LogStore,
    flushMs = EXECUTION_LOG_FLUSH_MS,
  ) {
    this.buffer = new LogBuffer(logs, flushMs);
  }

  append(entry: ExecutionLogEntry): void {
    this.buffer.append(entry.appId, toLogEntry(entry));
  }

  /** Writes the buffered entries; resolves once the log store has them (a failed write drops its entries). */
  flush(): Promise<void> {
    return this.buffer.flush();
  }

  async list(query: ExecutionLogQuery): Promise<ExecutionLogEntry[]> {
    const entries = await this.logs.list(query.appId, { types: ['FUNCTION'], limit: query.limit ?? 100, ...(query.correlationId !== undefined ? { coId: query.correlationId } : {}) });
    return entries.filter((entry) => !query.functionName || entry.function_name === query.functionName).map((entry) => toExecution(query.appId, entry));
  }
}

/**
 * The entry App Services shows for a call. Built field by field rather than from spread conditional parts
 * (the same fields in the same order): every call makes one, and each part was an object of its own.
 */
function toLogEntry(entry: ExecutionLogEntry): NewLogEntry {
  const { trigger, http } = entry;
  const log: Record<string, unknown> = { type: trigger ? triggerLogType(trigger.type) : http ? (http.kind === 'webhook' ? 'WEBHOOK' : 'ENDPOINT') : 'FUNCTION' };
  if (http) log['request_url'] = http.route;
  if (trigger) {
    log['trigger_name'] = trigger.name;
    if (trigger.id) log['trigger_id'] = trigger.id;
    log['event_subscription_name'] = trigger.name;
    // The admin API's trigger lag metric: from the change's commit to the start of the run that handled it.
    if (trigger.changedAt) {
      log['event_time'] = trigger.changedAt.toISOString();
      log['lag_ms'] = Math.max(0, entry.startedAt.getTime() - trigger.changedAt.getTime());
    }
  }
  log['messages'] = entry.logs;
  log['started'] = entry.startedAt.toISOString();
  log['completed'] = new Date(entry.startedAt.getTime() + entry.durationMs).toISOString();
  log['function_name'] = entry.functionName;
  log['user_id'] = entry.callerId;
  log['run_as'] = entry.runAsId;
  log['origin'] = entry.origin;
  log['execution_id'] = entry.id;
  if (entry.correlationId) log['co_id'] = entry.correlationId;
  if (entry.traceId) log['trace_id'] = entry.traceId;
  if (entry.remoteIPAddress) log['remote_ip_address'] = entry.remoteIPAddress;
  log['mem_time_usage'] = entry.memoryBytes;
  log['duration_ms'] = entry.durationMs;
  if (entry.error) {
    log['error'] = entry.error.message;
    log['error_code'] = entry.error.code;
  }
  if (entry.arguments !== undefined) log['arguments'] = entry.arguments;
  log['arguments_omitted'] = entry.argumentsOmitted;
  return log as NewLogEntry;
}

/** The log type App Services gives a trigger's run. */
function triggerLogType(type: string): string {
  return type === 'SCHEDULED' ? 'SCHEDULED_TRIGGER' : type === 'AUTHENTICATION' ? 'AUTH_TRIGGER' : 'DB_TRIGGER';
}

function toExecution(appId: string, entry: LogEntry): ExecutionLogEntry {
  const startedAt = new Date(entry.started);
  return {
    id: typeof entry['execution_id'] === 'string' ? entry['execution_id'] : entry._id,
    appId,
    functionName: entry.function_name ?? '',
    ...(typeof entry['co_id'] === 'string' ? { correlationId: entry['co_id'] } : {}),
    ...(typeof entry['trace_id'] === 'string' ? { traceId: entry['trace_id'] } : {}),
    ...(typeof entry['remote_ip_address'] === 'string' ? { remoteIPAddress: entry['remote_ip_address'] } : {}),
    callerId: entry.user_id ?? 'system',
    runAsId: typeof entry['run_as'] === 'string' ? entry['run_as'] : (entry.user_id ?? 'system'),
    origin: (entry['origin'] as ExecutionLogEntry['origin'] | undefined) ?? 'system',
    startedAt,
    durationMs: Number(entry['duration_ms'] ?? Date.parse(entry.completed) - startedAt.getTime()),
    memoryBytes: Number(entry['mem_time_usage'] ?? 0),
    logs: entry.messages,
    ...(entry.error ? { error: { code: entry.error_code ?? 'FunctionExecutionError', message: entry.error } } : {}),
    ...(typeof entry['arguments'] === 'string' ? { arguments: entry['arguments'] } : {}),
    argumentsOmitted: entry['arguments_omitted'] === true,
  };
}
