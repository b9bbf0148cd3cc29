import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { type Metrics, startMetrics } from './metrics';

describe('metrics', () => {
  let handle: Metrics | undefined;
  let collector: Server | undefined;

  afterEach(async () => {
    await handle?.shutdown();
    handle = undefined;
    await new Promise((resolve) => (collector ? collector.close(resolve) : resolve(undefined)));
    collector = undefined;
  });

  it('records the instruments code creates from @opentelemetry/api once the provider is registered', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    handle = startMetrics({ serviceName: 'measured', reader: new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 }) });
    const counter = metrics.getMeter('test').createCounter('test.things');
    counter.add(2, { kind: 'a' });
    counter.add(3, { kind: 'a' });
    await handle.forceFlush();
    const [collected] = exporter.getMetrics();
    expect(collected?.resource.attributes['service.name']).toBe('measured');
    const metric = collected?.scopeMetrics.flatMap((scope) => scope.metrics).find((candidate) => candidate.descriptor.name === 'test.things');
    expect(metric?.dataPoints).toMatchObject([{ attributes: { kind: 'a' }, value: 5 }]);
  });

  it('posts metrics to the OTLP/HTTP endpoint as JSON', async () => {
    const received: Array<{ path: string; body: string }> = [];
    collector = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        received.push({ path: request.url ?? '', body });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector?.listen(0, '127.0.0.1', resolve));
    const { port } = collector.address() as AddressInfo;
    handle = startMetrics({ serviceName: 'exported', otlpEndpoint: `http://127.0.0.1:${port}/`, exportIntervalMs: 3_600_000 });
    metrics.getMeter('test').createUpDownCounter('test.open').add(4);
    await handle.forceFlush();
    const posted = received.find((request) => request.body.includes('test.open'));
    expect(posted?.path).toBe('/v1/metrics');
    expect(posted?.body).toContain('"exported"');
  });
});
