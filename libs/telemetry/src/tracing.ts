import { context as contextApi, type Context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export type TraceSamplerName = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

export interface TracingOptions {
  /** `service.name` of every span of this process. */
  serviceName: string;
  serviceVersion?: string;
  /** OTLP/HTTP base URL: spans are posted (JSON) to `<endpoint>/v1/traces`. */
  otlpEndpoint?: string;
  /** Another exporter (tests: InMemorySpanExporter); exported span by span instead of in batches. */
  exporter?: SpanExporter;
  /** Default `parentbased_traceidratio`: a new trace is kept with probability `sampleRatio`, a continued one as its parent decided. */
  sampler?: TraceSamplerName;
  sampleRatio?: number;
}

export interface Tracing {
  /** Exports what is buffered. */
  forceFlush(): Promise<void>;
  /** Exports what is buffered and unregisters the tracer provider. */
  shutdown(): Promise<void>;
}

/** The OpenTelemetry sampler a standard `OTEL_TRACES_SAMPLER` name and ratio stand for. */
export function samplerFor(name: TraceSamplerName, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/**
 * Registers the process-wide tracer provider: AsyncLocalStorage context, W3C trace-context propagation (the
 * `traceparent`/`tracestate` headers that messages carry), the sampler, and an OTLP/HTTP exporter batching
 * spans. Call once, before the application is created; code elsewhere only uses `@opentelemetry/api`.
 */
export function startTracing(options: TracingOptions): Tracing {
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: `${(options.otlpEndpoint ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces` });
  const processor = options.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000, maxExportBatchSize: 512 });
  const provider = new NodeTracerProvider({
    resource: new Resource({ 'service.name': options.serviceName, ...(options.serviceVersion ? { 'service.version': options.serviceVersion } : {}) }),
    sampler: samplerFor(options.sampler ?? 'parentbased_traceidratio', options.sampleRatio ?? 1),
    spanProcessors: [processor],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return {
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      contextApi.disable();
    },
  };
}

/** Fields a structured log line gets from the active span (pino `mixin`): empty when nothing is traced. */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return trace.isSpanContextValid(span.spanContext()) ? { trace_id: traceId, span_id: spanId } : {};
}

export interface HttpServerSpan {
  /** The context to run the request's handlers in (its span is the active one). */
  readonly context: Context;
  end(statusCode: number, route?: string): void;
}

const tracer = () => trace.getTracer('@tessera/telemetry');

/**
 * Starts the SERVER span of an HTTP request at the edge, continuing the caller's trace when its headers
 * carry a `traceparent`. Without a registered provider this is a no-op span (nothing is recorded).
 */
export function startHttpServerSpan(method: string, url: string, headers: Readonly<Record<string, string | string[] | undefined>>): HttpServerSpan {
  const parent = propagation.extract(contextApi.active(), headers, {
    keys: (carrier) => Object.keys(carrier),
    get: (carrier, key) => carrier[key],
  });
  const path = url.split('?')[0] ?? url;
  const span = tracer().startSpan(`${method} ${path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } }, parent);
  return {
    context: trace.setSpan(parent, span),
    end: (statusCode, route) => {
      span.setAttribute('http.response.status_code', statusCode);
      if (route) {
        span.setAttribute('http.route', route);
        span.updateName(`${method} ${route}`);
      }
      if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}

/** Runs `fn` with `context` active, so spans started inside (and messages sent) join its trace. */
export function runInContext<T>(context: Context, fn: () => T): T {
  return contextApi.with(context, fn);
}
