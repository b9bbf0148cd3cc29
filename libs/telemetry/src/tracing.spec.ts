import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { runInContext, startHttpServerSpan, startTracing, traceLogFields, type Tracing } from './tracing';

const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
const callerSpan = '00f067aa0ba902b7';

describe('tracing', () => {
  let exporter: InMemorySpanExporter;
  let tracing: Tracing | undefined;

  beforeEach(() => {
    exporter = new InMemorySpanExporter();
  });
  afterEach(async () => {
    await tracing?.shutdown();
    tracing = undefined;
  });

  it('continues the caller trace at the HTTP edge and names the span after the route', async () => {
    tracing = startTracing({ serviceName: 'edge', exporter });
    const span = startHttpServerSpan('GET', '/api/things/7?x=1', { traceparent: `00-${callerTrace}-${callerSpan}-01` });
    const logged = runInContext(span.context, () => traceLogFields());
    span.end(200, '/api/things/:id');
    await tracing.forceFlush();
    const [finished] = exporter.getFinishedSpans();
    expect(finished?.name).toBe('GET /api/things/:id');
    expect(finished?.spanContext().traceId).toBe(callerTrace);
    expect(finished?.parentSpanId).toBe(callerSpan);
    expect(finished?.attributes['http.response.status_code']).toBe(200);
    expect(finished?.resource.attributes['service.name']).toBe('edge');
    expect(logged).toEqual({ trace_id: callerTrace, span_id: finished?.spanContext().spanId });
  });

  it('samples new traces by ratio but always follows a sampled parent', async () => {
    tracing = startTracing({ serviceName: 'edge', exporter, sampleRatio: 0 });
    for (let index = 0; index < 20; index += 1) startHttpServerSpan('GET', '/', {}).end(200);
    startHttpServerSpan('GET', '/continued', { traceparent: `00-${callerTrace}-${callerSpan}-01` }).end(200);
    await tracing.forceFlush();
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['GET /continued']);
  });

  it('gives logs no trace fields outside a span or without a tracer provider', () => {
    expect(traceLogFields()).toEqual({});
    const span = startHttpServerSpan('GET', '/', { traceparent: `00-${callerTrace}-${callerSpan}-01` });
    expect(runInContext(span.context, () => traceLogFields())).toEqual({});
  });
});
