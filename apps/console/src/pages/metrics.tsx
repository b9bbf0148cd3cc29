import { useState } from 'preact/hooks';
import { Loading, useLoad, type AppPageProps } from '../ui';

interface Measurement {
  name: string;
  units: string;
  data_points: { timestamp: string; value: number }[];
}

const charts = [
  { name: 'OVERALL_SUCCESSFUL_REQUESTS', title: 'Requests' },
  { name: 'OVERALL_FAILED_REQUESTS', title: 'Failed requests' },
  { name: 'SDK_SUCCESSFUL_REQUESTS', title: 'Function executions (SDK calls)' },
  { name: 'OVERALL_COMPUTE_MS', title: 'Compute time' },
  { name: 'ACTIVE_OPEN_SYNC_SESSIONS', title: 'Sync connections open', fold: 'max' as const },
  { name: 'SYNC_SESSIONS_STARTED', title: 'Sync connections opened' },
  { name: 'TRIGGERS_SUCCESSFUL_REQUESTS', title: 'Trigger executions' },
  { name: 'TRIGGERS_MAX_LAG_MS', title: 'Trigger lag (largest)', fold: 'max' as const },
];

const ranges = {
  '1h': { ms: 3_600_000, granularity: 'PT5M' },
  '24h': { ms: 86_400_000, granularity: 'PT1H' },
  '7d': { ms: 7 * 86_400_000, granularity: 'P1D' },
} as const;

/** The app's metrics over time (the admin API computes them from the app's log: requests, function runs, sync connections, trigger lag), as bar charts with their numbers. */
export function MetricsPage({ api, appId }: AppPageProps) {
  const [range, setRange] = useState<keyof typeof ranges>('24h');
  const metrics = useLoad(async () => {
    const end = new Date();
    const start = new Date(end.getTime() - ranges[range].ms);
    const params = new URLSearchParams({ start: start.toISOString(), end: end.toISOString(), granularity: ranges[range].granularity, metrics: charts.map((chart) => chart.name).join(',') });
    return (await api.get<{ measurements: Measurement[] }>(api.app(appId, `/metrics?${params.toString()}`))).measurements;
  }, [appId, range]);
  const clients = useLoad(() => api.get<{ clients: unknown[] }>(api.app(appId, '/sync/clients')), [appId]);

  return (
    <section aria-labelledby="metrics-title">
      <h1 id="metrics-title">Metrics</h1>
      <div class="card row">
        <label>
          Period
          <select value={range} onChange={(event) => setRange(event.currentTarget.value as keyof typeof ranges)}>
            <option value="1h">Last hour (5 minutes)</option>
            <option value="24h">Last 24 hours (hourly)</option>
            <option value="7d">Last 7 days (daily)</option>
          </select>
        </label>
        <p>
          Sync connections as the sync replicas last reported them: <strong>{clients.data ? clients.data.clients.length : clients.error ? 'unavailable' : '…'}</strong>. Trigger lag is the time from a change's commit to
          the start of the database trigger run that handled it.
        </p>
      </div>
      <Loading loaded={metrics} />
      <div class="charts">
        {charts.map((chart) => {
          const measurement = metrics.data?.find((entry) => entry.name === chart.name);
          return measurement ? <BarChart key={chart.name} title={chart.title} measurement={measurement} fold={chart.fold ?? 'sum'} /> : null;
        })}
      </div>
    </section>
  );
}

/** A series as bars, one per period; `fold` says whether its periods add up (counts) or not (a largest lag). */
function BarChart({ title, measurement, fold }: { title: string; measurement: Measurement; fold: 'sum' | 'max' }) {
  const points = measurement.data_points;
  const max = Math.max(0, ...points.map((point) => point.value));
  // Bars are drawn against at least 1, so a quiet period draws no bar rather than a full one.
  const scale = Math.max(1, max);
  const total = points.reduce((sum, point) => sum + point.value, 0);
  const unit = measurement.units ? ` ${measurement.units.toLowerCase()}` : '';
  const width = 320;
  const height = 120;
  const bar = width / Math.max(1, points.length);
  return (
    <figure class="card chart">
      <figcaption>
        {title}: {fold === 'sum' ? `${Math.round(total * 100) / 100}${unit} in total, at most ${Math.round(max * 100) / 100} per period` : `at most ${Math.round(max * 100) / 100}${unit}`}
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${title} per period`}>
        {points.map((point, index) => {
          const barHeight = (point.value / scale) * (height - 4);
          return (
            <rect key={point.timestamp} x={index * bar + 1} y={height - barHeight} width={Math.max(1, bar - 2)} height={barHeight} class="bar">
              <title>
                {new Date(point.timestamp).toLocaleString()}: {point.value}
                {unit}
              </title>
            </rect>
          );
        })}
      </svg>
    </figure>
  );
}
