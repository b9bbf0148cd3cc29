import type { LogEntry } from '@tessera/platform';
import { durationMs, measure, METRICS } from './app-metrics';

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
});
