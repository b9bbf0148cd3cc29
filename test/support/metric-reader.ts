import { AggregationTemporality, type DataPoint, InMemoryMetricExporter, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { type Metrics, startMetrics } from '@tessera/telemetry';

/**
 * The process's meter provider (the one main.ts registers) with an in-memory exporter: `points` collects
 * now and gives the data points of one metric, cumulative since the provider started.
 */
export interface MetricReader {
  readonly telemetry: Metrics;
  points(name: string): Promise<DataPoint<number>[]>;
  /** The sum of a counter's or up-down counter's points over every attribute set. */
  sum(name: string): Promise<number>;
}

export function startMetricReader(serviceName: string): MetricReader {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exported only when asked: the period is longer than any test.
  const telemetry = startMetrics({ serviceName, reader: new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 }) });
  const points = async (name: string): Promise<DataPoint<number>[]> => {
    exporter.reset();
    await telemetry.forceFlush();
    const [collected] = exporter.getMetrics();
    return (collected?.scopeMetrics ?? []).flatMap((scope) => scope.metrics).filter((metric) => metric.descriptor.name === name).flatMap((metric) => metric.dataPoints as DataPoint<number>[]);
  };
  return {
    telemetry,
    points,
    sum: async (name) => (await points(name)).reduce((total, point) => total + point.value, 0),
  };
}
