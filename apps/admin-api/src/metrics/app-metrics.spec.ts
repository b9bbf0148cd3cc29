import type { LogEntry } from '@tessera/platform';
import { durationMs, measure, METRICS, openConnections } from './app-metrics';

const entry = (type: string, started: string, ms: number, error?: string): LogEntry => ({ _id: started, type, messages: [], started, completed: new Date(new Date(started).getTime() + ms).toISOString(), ...(error ? { error } : {}) });

describe('app metrics from the log', () => {
  it('reads ISO-8601 durations and refuses anything else', () => {
    expect(durationMs('PT1H')).toBe(3_600_000);
    expect(durationMs('PT5M')).toBe(300_000);
    expect(durationMs('P31D')).toBe(31 * 86_400_000);
    for (const bad of ['P', 'PT', '1H', 'PT0H', 'hourly', 'P1Y']) expect(durationMs(bad)).toBeUndefined();
  });

  it('sums each series per hour, every hour of the range present, outside entries left out', () => {
    const entries = [
      entry('FUNCTION', '2026-01-01T10:05:00.000Z', 20),
      entry('FUNCTION', '2026-01-01T10:59:59.000Z', 30, 'boom'),
      entry('DB_TRIGGER', '2026-01-01T12:00:00.000Z', 5),
      entry('FUNCTION', '2026-01-01T13:00:00.000Z', 5),
    ];
    const series = ['SDK_SUCCESSFUL_REQUESTS', 'SDK_FAILED_REQUESTS', 'TRIGGERS_SUCCESSFUL_REQUESTS', 'OVERALL_COMPUTE_MS'].map((name) => ({ name, ...METRICS[name] }));
    const [ok, failed, triggers, compute] = measure(entries, series, new Date('2026-01-01T10:30:00Z'), new Date('2026-01-01T12:30:00Z'), 3_600_000);
    expect(ok.data_points).toEqual([
      { timestamp: '2026-01-01T10:00:00.000Z', value: 0 },
      { timestamp: '2026-01-01T11:00:00.000Z', value: 0 },
      { timestamp: '2026-01-01T12:00:00.000Z', value: 0 },
    ]);
    expect(failed.data_points.map((point) => point.value)).toEqual([1, 0, 0]);
    expect(triggers.data_points.map((point) => point.value)).toEqual([0, 0, 1]);
    expect(compute.data_points.map((point) => point.value)).toEqual([30, 0, 5]);
  });

  it('counts sync connections open in each period from their start and end entries, an unended one open until now', () => {
    const connection = (type: string, id: string, started: string, completed: string): LogEntry => ({ _id: `${type}${id}`, type, messages: [], started, completed, connection_id: id });
    const entries = [
      // Opened before the range, closed in its second hour.
      connection('SYNC_CONNECTION_START', 'a', '2026-01-01T09:00:00.000Z', '2026-01-01T09:00:00.000Z'),
      connection('SYNC_CONNECTION_END', 'a', '2026-01-01T09:00:00.000Z', '2026-01-01T11:10:00.000Z'),
      // Opened and closed within the first hour.
      connection('SYNC_CONNECTION_START', 'b', '2026-01-01T10:10:00.000Z', '2026-01-01T10:10:00.000Z'),
      connection('SYNC_CONNECTION_END', 'b', '2026-01-01T10:10:00.000Z', '2026-01-01T10:20:00.000Z'),
      // Opened in the second hour, still open.
      connection('SYNC_CONNECTION_START', 'c', '2026-01-01T11:30:00.000Z', '2026-01-01T11:30:00.000Z'),
    ];
    const open = openConnections(entries, new Date('2026-01-01T10:00:00Z'), new Date('2026-01-01T12:59:59Z'), 3_600_000, new Date('2026-01-01T12:15:00Z'));
    expect(open.name).toBe('ACTIVE_OPEN_SYNC_SESSIONS');
    expect(open.data_points.map((point) => point.value)).toEqual([2, 2, 1]);
    const [started, ended] = measure(entries, ['SYNC_SESSIONS_STARTED', 'SYNC_SESSIONS_ENDED'].map((name) => ({ name, ...METRICS[name] })), new Date('2026-01-01T10:00:00Z'), new Date('2026-01-01T12:59:59Z'), 3_600_000);
    // An end entry is dated by its connection's start, so `a`'s end falls before the range.
    expect(started.data_points.map((point) => point.value)).toEqual([1, 1, 0]);
    expect(ended.data_points.map((point) => point.value)).toEqual([1, 0, 0]);
  });

  it("leaves sync connections out of requests and compute time, and folds trigger lag as a sum and as a maximum", () => {
    const run = (started: string, lag?: number): LogEntry => ({ _id: started, type: 'DB_TRIGGER', messages: [], started, completed: started, ...(lag !== undefined ? { lag_ms: lag } : {}) });
    const entries = [
      { _id: 'c', type: 'SYNC_CONNECTION_END', messages: [], started: '2026-01-01T10:00:00.000Z', completed: '2026-01-01T10:30:00.000Z' },
      run('2026-01-01T10:01:00.000Z', 40),
      run('2026-01-01T10:02:00.000Z', 15),
      run('2026-01-01T10:03:00.000Z'),
    ];
    const names = ['OVERALL_SUCCESSFUL_REQUESTS', 'OVERALL_COMPUTE_MS', 'TRIGGERS_CURRENT_OPLOG_LAG_MS_SUM', 'TRIGGERS_MAX_LAG_MS'];
    const [requests, compute, sum, max] = measure(entries, names.map((name) => ({ name, ...METRICS[name] })), new Date('2026-01-01T10:00:00Z'), new Date('2026-01-01T10:59:59Z'), 3_600_000);
    expect(requests.data_points[0].value).toBe(3);
    expect(compute.data_points[0].value).toBe(0);
    expect(sum.data_points[0].value).toBe(55);
    expect(max.data_points[0].value).toBe(40);
  });
});
