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

/**
 * The App Services metrics (`GET .../metrics`, openapi-admin-v3.yaml) Tessera can answer, read from what the
 * app's log records: every function execution (`SDK_*`: functions called by clients, and every other run),
 * trigger run, HTTPS endpoint and Data API call, GraphQL request and login that writes a log entry. Metrics
 * nothing records yet (sync minutes and sessions, egress bytes) are refused by name rather than invented.
 */
export const METRICS: Record<string, { units: string; selects: (entry: LogEntry) => boolean; value: Reading }> = {
  OVERALL_SUCCESSFUL_REQUESTS: { units: '', selects: ok, value: count },
  OVERALL_FAILED_REQUESTS: { units: '', selects: (entry) => !ok(entry), value: count },
  OVERALL_COMPUTE_MS: { units: 'MILLISECONDS', selects: () => true, value: computeMs },
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
export function measure(entries: LogEntry[], series: Array<{ name: string; units: string; selects: (entry: LogEntry) => boolean; value: Reading }>, start: Date, end: Date, granularityMs: number, origin = 0): Measurement[] {
  const first = origin + Math.floor((start.getTime() - origin) / granularityMs) * granularityMs;
  const periods = Math.floor((end.getTime() - first) / granularityMs) + 1;
  return series.map(({ name, units, selects, value }) => {
    const values = new Array<number>(periods).fill(0);
    for (const entry of entries) {
      const at = new Date(entry.started).getTime();
      if (!(at >= start.getTime() && at <= end.getTime()) || !selects(entry)) continue;
      values[Math.floor((at - first) / granularityMs)] += value(entry);
    }
    return { name, units, data_points: values.map((sum, index) => ({ timestamp: new Date(first + index * granularityMs).toISOString(), value: sum })) };
  });
}
