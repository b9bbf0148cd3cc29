/**
 * The process-wide OpenTelemetry meter provider: the instruments services create from `@opentelemetry/api`
 * (`metrics.getMeter(...)`) record nothing until one is registered. Exported over OTLP/HTTP (JSON) on a
 * period, or read by the reader a caller gives (tests: an in-memory exporter behind a manual reader).
 */
import { metrics } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { MeterProvider, type MetricReader, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';

export interface MetricsOptions {
  /** `service.name` of every metric of this process. */
  serviceName: string;
  serviceVersion?: string;
  /** OTLP/HTTP base URL: metrics are posted (JSON) to `<endpoint>/v1/metrics`. */
  otlpEndpoint?: string;
  /** How often the OTLP exporter sends (default 15 s). */
  exportIntervalMs?: number;
  /** Another reader instead of the OTLP exporter (tests: a reader over an InMemoryMetricExporter). */
  reader?: MetricReader;
}

export interface Metrics {
  /** Collects and exports what the instruments hold now. */
  forceFlush(): Promise<void>;
  /** Exports a last time and unregisters the meter provider. */
  shutdown(): Promise<void>;
}

/** Registers the global meter provider; call once, before the application creates its instruments. */
export function startMetrics(options: MetricsOptions): Metrics {
  const reader =
    options.reader ??
    new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({ url: `${(options.otlpEndpoint ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/metrics` }),
      exportIntervalMillis: options.exportIntervalMs ?? 15_000,
    });
  const provider = new MeterProvider({
    resource: new Resource({ 'service.name': options.serviceName, ...(options.serviceVersion ? { 'service.version': options.serviceVersion } : {}) }),
    readers: [reader],
  });
  metrics.setGlobalMeterProvider(provider);
  return {
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      metrics.disable();
    },
  };
}
