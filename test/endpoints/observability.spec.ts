import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { HTTPS_ENDPOINTS_FILE } from '@tessera/app-config';
import { startTracing, type Tracing } from '@tessera/telemetry';
import { eventually } from '@tessera/testing';
import { type MetricReader, startMetricReader } from '../support/metric-reader';
// The real process host, with the edge traced as `OTEL_EXPORTER_OTLP_ENDPOINT` turns it on.
import { startTestHost, type TestHost } from '../support/test-host';

describe('HTTPS endpoints and webhooks are traced and counted', () => {
  let host: TestHost;
  let tracing: Tracing;
  let base: string;
  const spans = new InMemorySpanExporter();
  let meters: MetricReader;

  beforeAll(async () => {
    // Registered before the host starts, as main.ts registers them before the application.
    tracing = startTracing({ serviceName: 'endpoints-observability-test', exporter: spans, sampler: 'always_on' });
    meters = startMetricReader('endpoints-observability-test');
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
    await meters?.telemetry.shutdown();
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
    const counted = (await meters.points('tessera.endpoints.requests')).map((point) => ({ value: point.value, attributes: point.attributes }));
    expect(counted).toEqual(expect.arrayContaining([
      { value: 1, attributes: { kind: 'endpoint', status_class: '2xx' } },
      { value: 1, attributes: { kind: 'endpoint', status_class: '4xx' } },
    ]));
  });
});
