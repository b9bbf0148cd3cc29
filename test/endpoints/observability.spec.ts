import { type Attributes, type Meter, type MeterProvider, metrics, SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { HTTPS_ENDPOINTS_FILE } from '@tessera/app-config';
import { startTracing, type Tracing } from '@tessera/telemetry';
import { eventually } from '@tessera/testing';
// The real process host, with the edge traced as `OTEL_EXPORTER_OTLP_ENDPOINT` turns it on.
import { startTestHost, type TestHost } from '../support/test-host';

/** A meter provider that keeps the sum of each counter by name and attributes. */
function recordingMeterProvider(): { provider: MeterProvider; sums: Map<string, number> } {
  const sums = new Map<string, number>();
  const instrument = (name: string) => ({
    add: (value: number, attributes: Attributes = {}) => {
      const key = `${name} ${JSON.stringify(attributes)}`;
      sums.set(key, (sums.get(key) ?? 0) + value);
    },
  });
  const meter = { createCounter: instrument, createUpDownCounter: instrument, createHistogram: () => ({ record: () => undefined }) } as unknown as Meter;
  return { provider: { getMeter: () => meter }, sums };
}

describe('HTTPS endpoints and webhooks are traced and counted', () => {
  let host: TestHost;
  let tracing: Tracing;
  let base: string;
  const spans = new InMemorySpanExporter();
  const recorded = recordingMeterProvider();

  beforeAll(async () => {
    // Registered before the host starts, as main.ts registers them before the application.
    tracing = startTracing({ serviceName: 'endpoints-observability-test', exporter: spans, sampler: 'always_on' });
    metrics.setGlobalMeterProvider(recorded.provider);
    host = await startTestHost({ settings: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' } });
    const { clientAppId } = await host.createApp('observed', (app) => {
      app.functions.push({ config: { name: 'ping', private: true, run_as_system: true }, source: 'exports = () => "pong";' });
      app.extraFiles.set(HTTPS_ENDPOINTS_FILE, new TextEncoder().encode(JSON.stringify([{ route: '/ping', http_method: 'GET', function_name: 'ping', respond_result: true }])));
    });
    base = `${host.url}/app/${clientAppId}/endpoint`;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    await tracing?.shutdown();
    metrics.disable();
  });

  it('opens one server span per request, joined by the function call over the bus, and counts replies by kind and status class', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await fetch(`${base}/ping`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    expect(await response.json()).toBe('pong');
    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
    await eventually(async () => {
      await tracing.forceFlush();
      const inTrace = spans.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
      const server = inTrace.filter((span) => span.kind === SpanKind.SERVER && span.attributes['url.path'] === new URL(`${base}/ping`).pathname);
      expect(server).toHaveLength(1);
      expect(server[0]?.attributes['http.response.status_code']).toBe(200);
      // The call to the function runtime continues the request's trace.
      expect(inTrace.some((span) => span.kind !== SpanKind.SERVER)).toBe(true);
    });
    expect(recorded.sums.get('tessera.endpoints.requests {"kind":"endpoint","status_class":"2xx"}')).toBe(1);
    expect(recorded.sums.get('tessera.endpoints.requests {"kind":"endpoint","status_class":"4xx"}')).toBe(1);
  });
});
