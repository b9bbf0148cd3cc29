import type { LogEntry } from '@tessera/platform';
import { logTypeOf } from '../log-forwarders/log-forwarder';

/** A series of the admin API's metrics answers: `{ name, units, data_points: [{ timestamp, value }] }`. */
export interface Measurement {
  name: string;
  units: string;
  data_points: Array<{ timestamp: string; value: number }>;
}

type Reading = (entry: LogEntry) => number;

const count: Reading = () => 1;
/** Milliseconds between an entry's start and completion. */
const computeMs: Reading = (entry) => Math.max(0, new Date(entry.completed).getTime() - new Date(entry.started).getTime()) || 0;
const ok = (entry: LogEntry): boolean => entry.error === undefined;
const ofType = (type: ReturnType<typeof logTypeOf>, outcome?: boolean) => (entry: LogEntry) => logTypeOf(entry.type) === type && (outcome === undefined || ok(entry) === outcome);
/** A sync connection's start or end is not a request, and its duration is not compute time. */
export const isRequest = (entry: LogEntry): boolean => entry.type !== SYNC_CONNECTION_START && entry.type !== SYNC_CONNECTION_END;
const isType = (type: string) => (entry: LogEntry) => entry.type === type;
/** A database trigger run's lag (the runtime records it from the change's wall time), when known. */
const lagMs: Reading = (entry) => (typeof entry['lag_ms'] === 'number' ? entry['lag_ms'] : 0);
const hasLag = (entry: LogEntry): boolean => typeof entry['lag_ms'] === 'number';

export const SYNC_CONNECTION_START = 'SYNC_CONNECTION_START';
export const SYNC_CONNECTION_END = 'SYNC_CONNECTION_END';
/** The series computed from connection intervals, not summed per entry. */
export const OPEN_SYNC_CONNECTIONS = 'ACTIVE_OPEN_SYNC_SESSIONS';

/** How a series folds its readings within a period: summed, or the largest kept. */
export type Fold = 'sum' | 'max';

export interface MetricDefinition {
  units: string;
  selects: (entry: LogEntry) => boolean;
  value: Reading;
  fold?: Fold;
}

/**
 * The App Services metrics (`GET .../metrics`, openapi-admin-v3.yaml) Tessera can answer, read from what the
 * app's log records: every function execution (`SDK_*`: functions called by clients, and every other run),
 * trigger run, HTTPS endpoint and Data API call, GraphQL request and login that writes a log entry,
 * sync connections (started, ended, open) and database trigger lag. Metrics nothing records yet (sync
 * minutes, egress bytes, response times) are refused by name rather than invented.
 */
export const METRICS: Record<string, MetricDefinition> = {
  OVERALL_SUCCESSFUL_REQUESTS: { units: '', selects: (entry) => isRequest(entry) && ok(entry), value: count },
  OVERALL_FAILED_REQUESTS: { units: '', selects: (entry) => isRequest(entry) && !ok(entry), value: count },
  OVERALL_COMPUTE_MS: { units: 'MILLISECONDS', selects: isRequest, value: computeMs },
  SDK_SUCCESSFUL_REQUESTS: { units: '', selects: ofType('function', true), value: count },
  SDK_FAILED_REQUESTS: { units: '', selects: ofType('function', false), value: count },
  SDK_COMPUTE_MS: { units: 'MILLISECONDS', selects: ofType('function'), value: computeMs },
  TRIGGERS_SUCCESSFUL_REQUESTS: { units: '', selects: ofType('trigger', true), value: count },
  TRIGGERS_FAILED_REQUESTS: { units: '', selects: ofType('trigger', false), value: count },
  TRIGGERS_COMPUTE_MS: { units: 'MILLISECONDS', selects: ofType('trigger'), value: computeMs },
  ENDPOINTS_SUCCESSFUL_REQUESTS: { units: '', selects: ofType('endpoint', true), value: count },
  ENDPOINTS_FAILED_REQUEST: { units: '', selects: ofType('endpoint', false), value: count },
  ENDPOINTS_COMPUTE_MS: { units: 'MILLISECONDS', selects: ofType('endpoint'), value: computeMs },
  GRAPHQL_SUCCESSFUL_REQUESTS: { units: '', selects: ofType('graphql', true), value: count },
  GRAPHQL_FAILED_REQUESTS: { units: '', selects: ofType('graphql', false), value: count },
  AUTH_SUCCESSFUL_REQUESTS: { units: '', selects: ofType('auth', true), value: count },
  AUTH_FAILED_REQUESTS: { units: '', selects: ofType('auth', false), value: count },
  // Sync connections (the sync service logs each one's start and end): opened and closed per period, and
  // how many were open at some time in each period (computed from their intervals, see openConnections).
  SYNC_SESSIONS_STARTED: { units: '', selects: isType(SYNC_CONNECTION_START), value: count },
  SYNC_SESSIONS_ENDED: { units: '', selects: isType(SYNC_CONNECTION_END), value: count },
  [OPEN_SYNC_CONNECTIONS]: { units: '', selects: () => false, value: count },
  // Database trigger lag: from a change's commit to the start of the run that handled it.
  TRIGGERS_CURRENT_OPLOG_LAG_MS_SUM: { units: 'MILLISECONDS', selects: hasLag, value: lagMs },
  /** Tessera: the largest lag of a period, which a sum hides behind the number of runs. */
  TRIGGERS_MAX_LAG_MS: { units: 'MILLISECONDS', selects: hasLag, value: lagMs, fold: 'max' },
};

/** An ISO-8601 duration (`PT1H`, `PT5M`, `P1D`, `P31D`) in milliseconds; undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(text);
  if (!match || text === 'P' || text.endsWith('T')) return undefined;
  const [, days, hours, minutes, seconds] = match.map((part) => Number(part ?? 0));
  const ms = (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000;
  return ms > 0 ? ms : undefined;
}

/** Each series summed per period of `granularityMs` (aligned to `origin`, the epoch by default), every period of the range present. */
export function measure(entries: LogEntry[], series: Array<{ name: string } & MetricDefinition>, start: Date, end: Date, granularityMs: number, origin = 0): Measurement[] {
  const first = origin + Math.floor((start.getTime() - origin) / granularityMs) * granularityMs;
  const periods = Math.floor((end.getTime() - first) / granularityMs) + 1;
  return series.map(({ name, units, selects, value, fold }) => {
    const values = new Array<number>(periods).fill(0);
    for (const entry of entries) {
      const at = new Date(entry.started).getTime();
      if (!(at >= start.getTime() && at <= end.getTime()) || !selects(entry)) continue;
      const index = Math.floor((at - first) / granularityMs);
      values[index] = fold === 'max' ? Math.max(values[index], value(entry)) : values[index] + value(entry);
    }
    return { name, units, data_points: values.map((sum, index) => ({ timestamp: new Date(first + index * granularityMs).toISOString(), value: sum })) };
  });
}

/**
 * ACTIVE_OPEN_SYNC_SESSIONS: per period, the sync connections open at some time within it. A connection is
 * its end entry (`started` is its start, `completed` its end), or its start entry alone while it is open
 * (open until `now`). A start whose end was never written (a replica that died) counts as open until the
 * platform trims it from the log.
 */
export function openConnections(entries: LogEntry[], start: Date, end: Date, granularityMs: number, now: Date, origin = 0): Measurement {
  const first = origin + Math.floor((start.getTime() - origin) / granularityMs) * granularityMs;
  const periods = Math.floor((end.getTime() - first) / granularityMs) + 1;
  const ended = new Set(entries.filter((entry) => entry.type === SYNC_CONNECTION_END).map((entry) => String(entry['connection_id'])));
  const intervals = entries
    .filter((entry) => entry.type === SYNC_CONNECTION_END || (entry.type === SYNC_CONNECTION_START && !ended.has(String(entry['connection_id']))))
    .map((entry) => ({ from: new Date(entry.started).getTime(), to: entry.type === SYNC_CONNECTION_END ? new Date(entry.completed).getTime() : now.getTime() }));
  const values = new Array<number>(periods).fill(0);
  for (let index = 0; index < periods; index++) {
    const periodStart = Math.max(first + index * granularityMs, start.getTime());
    const periodEnd = Math.min(first + (index + 1) * granularityMs, end.getTime() + 1);
    values[index] = intervals.filter((interval) => interval.from < periodEnd && interval.to >= periodStart).length;
  }
  return { name: OPEN_SYNC_CONNECTIONS, units: '', data_points: values.map((value, index) => ({ timestamp: new Date(first + index * granularityMs).toISOString(), value })) };
}
