// Public entry of @tessera/telemetry: the process-wide OpenTelemetry setup (tracer provider, sampler, OTLP
// export; meter provider and its OTLP export), the HTTP edge's server span, and the trace fields structured
// logs carry. Everything else traces and measures through @opentelemetry/api alone (the message bus and
// handlers propagate context in message headers).
export * from './metrics';
export * from './tracing';
