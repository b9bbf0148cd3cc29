import type { LogEntry, LogStore } from '@tessera/platform';
import type { ExecutionLogEntry, ExecutionLogQuery, ExecutionLogStore } from '../execution-logs/execution-log.store';

/**
 * Execution logs in the platform's log store, where the admin API (`GET .../logs`) and the CLI read them
 * as App Services `FUNCTION` entries.
 */
export class PlatformExecutionLogStore implements ExecutionLogStore {
  constructor(private readonly logs: LogStore) {}

  async append(entry: ExecutionLogEntry): Promise<void> {
    const completed = new Date(entry.startedAt.getTime() + entry.durationMs);
    await this.logs.append(entry.appId, {
      type: entry.trigger ? triggerLogType(entry.trigger.type) : entry.http ? (entry.http.kind === 'webhook' ? 'WEBHOOK' : 'ENDPOINT') : 'FUNCTION',
      ...(entry.http ? { request_url: entry.http.route } : {}),
      ...(entry.trigger ? { trigger_name: entry.trigger.name, ...(entry.trigger.id ? { trigger_id: entry.trigger.id } : {}), event_subscription_name: entry.trigger.name } : {}),
      messages: entry.logs,
      started: entry.startedAt.toISOString(),
      completed: completed.toISOString(),
      function_name: entry.functionName,
      user_id: entry.callerId,
      run_as: entry.runAsId,
      origin: entry.origin,
      execution_id: entry.id,
      ...(entry.correlationId ? { co_id: entry.correlationId } : {}),
      ...(entry.traceId ? { trace_id: entry.traceId } : {}),
      ...(entry.remoteIPAddress ? { remote_ip_address: entry.remoteIPAddress } : {}),
      mem_time_usage: entry.memoryBytes,
      duration_ms: entry.durationMs,
      ...(entry.error ? { error: entry.error.message, error_code: entry.error.code } : {}),
      ...(entry.arguments !== undefined ? { arguments: entry.arguments } : {}),
      arguments_omitted: entry.argumentsOmitted,
    });
  }

  async list(query: ExecutionLogQuery): Promise<ExecutionLogEntry[]> {
    const entries = await this.logs.list(query.appId, { types: ['FUNCTION'], limit: query.limit ?? 100, ...(query.correlationId !== undefined ? { coId: query.correlationId } : {}) });
    return entries.filter((entry) => !query.functionName || entry.function_name === query.functionName).map((entry) => toExecution(query.appId, entry));
  }
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
