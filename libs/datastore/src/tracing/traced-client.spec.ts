import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing, type Tracing } from '@tessera/telemetry';
import { makeTempDir } from '@tessera/testing';
import { type DataSourceClient } from '../api/data-source';
import { createDataSourceClient } from '../client';

// The span layer every client from createDataSourceClient has, with a real tracer provider.
describe('datastore spans', () => {
  const dir = makeTempDir('tessera-datastore-spans-');
  let exporter: InMemorySpanExporter;
  let tracing: Tracing;
  let client: DataSourceClient;

  beforeAll(() => {
    client = createDataSourceClient({ clusterName: 'Traced', dataDir: dir.path });
  });
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    tracing = startTracing({ serviceName: 'datastore-spec', exporter, sampler: 'always_on' });
  });
  afterEach(async () => {
    await tracing.shutdown();
  });
  afterAll(async () => {
    await client.close();
    dir.remove();
  });

  const inRequest = <T>(work: () => Promise<T>): Promise<T> =>
    trace.getTracer('spec').startActiveSpan('request', async (span) => {
      try {
        return await work();
      } finally {
        span.end();
      }
    });

  it('records each operation as a CLIENT span of the request, with the database semantic attributes', async () => {
    const items = client.db('shop').collection('items');
    await inRequest(async () => {
      await items.insertOne({ _id: 1, name: 'one' });
      await items.findOne({ _id: 1 });
      await items.find({}).sort({ _id: 1 }).toArray();
    });
    await tracing.forceFlush();
    const spans = exporter.getFinishedSpans();
    const request = spans.find((span) => span.name === 'request')!;
    const data = spans.filter((span) => span.name !== 'request');
    expect(data.map((span) => span.name)).toEqual(['insertOne shop.items', 'findOne shop.items', 'find shop.items']);
    for (const span of data) {
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.parentSpanId).toBe(request.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(request.spanContext().traceId);
      expect(span.attributes).toMatchObject({ 'db.system': 'mongodb', 'db.name': 'shop', 'db.namespace': 'shop', 'db.collection.name': 'items', 'db.mongodb.collection': 'items', 'tessera.datastore.engine': 'embedded' });
    }
    expect(data.map((span) => span.attributes['db.operation.name'])).toEqual(['insertOne', 'findOne', 'find']);
  });

  it('records a failed operation as an error with its exception, and still throws it', async () => {
    const items = client.db('shop').collection('dupes');
    await expect(inRequest(async () => {
      await items.insertOne({ _id: 7 });
      await items.insertOne({ _id: 7 });
    })).rejects.toThrow(/duplicate key/i);
    await tracing.forceFlush();
    const failed = exporter.getFinishedSpans().filter((span) => span.name === 'insertOne shop.dupes')[1];
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed?.attributes['db.response.status_code']).toBe('DuplicateKey');
    expect(failed?.events.map((event) => event.name)).toContain('exception');
  });

  it('opens no span outside a request: background work makes no traces of its own', async () => {
    await client.db('shop').collection('items').findOne({ _id: 1 });
    await tracing.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
