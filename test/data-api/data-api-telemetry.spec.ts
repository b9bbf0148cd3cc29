import { type Attributes, type Meter, type MeterProvider, metrics } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing, type Tracing } from '@tessera/telemetry';
import { startTestHost, type TestHost } from '../support/test-host';
import { dataApi, serverApiKey, withDataApiConfig } from './data-api-support';

/** A meter provider that keeps every counter addition with its attributes. */
function recordingMeterProvider(): { provider: MeterProvider; added: Array<{ name: string; value: number; attributes?: Attributes }> } {
  const added: Array<{ name: string; value: number; attributes?: Attributes }> = [];
  const meter = { createCounter: (name: string) => ({ add: (value: number, attributes?: Attributes) => added.push({ name, value, ...(attributes ? { attributes } : {}) }) }) } as unknown as Meter;
  return { provider: { getMeter: () => meter }, added };
}

// Each Data API request is one span, with the datastore's CLIENT spans under it, and is counted.
describe('Data API telemetry', () => {
  let host: TestHost;
  let tracing: Tracing;
  const spans = new InMemorySpanExporter();
  const recorded = recordingMeterProvider();

  beforeAll(async () => {
    // Registered before the host starts, as main.ts registers them before the application.
    tracing = startTracing({ serviceName: 'data-api-telemetry-test', exporter: spans, sampler: 'always_on' });
    metrics.setGlobalMeterProvider(recorded.provider);
    host = await startTestHost({ services: ['graphql-gateway'] });
  });

  afterAll(async () => {
    await host?.close();
    await tracing?.shutdown();
    metrics.disable();
  });

  it('traces a request through to the datastore and counts it by action and status', async () => {
    const app = await host.createApp('tracedapi', (config) => {
      config.authProviders.push({ name: 'api-key', type: 'api-key' });
      config.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Traced' } }, defaultRule: { roles: [{ name: 'all', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] }, collectionRules: [], rules: [], webhooks: [] });
      withDataApiConfig(config, { disabled: false, versions: ['v1'], return_type: 'JSON' });
    });
    const { key } = await serverApiKey(host, app.clientAppId, 'traced');
    const answer = await dataApi(host, app.clientAppId, 'insertOne', { dataSource: 'mongodb-atlas', database: 'traced', collection: 'things', document: { a: 1 } }, { headers: { apiKey: key } });
    expect(answer.status).toBe(201);
    expect((await dataApi(host, app.clientAppId, 'nope', {}, { headers: { apiKey: key } })).status).toBe(404);

    await tracing.forceFlush();
    const finished = spans.getFinishedSpans();
    const request = finished.find((span) => span.name === 'Data API insertOne' && span.attributes['tessera.client_app_id'] === app.clientAppId);
    expect(request?.attributes['http.response.status_code']).toBe(201);
    const store = finished.filter((span) => span.spanContext().traceId === request?.spanContext().traceId && span.attributes['db.operation.name'] !== undefined);
    expect(store.map((span) => span.attributes['db.operation.name'])).toContain('insertOne');
    expect(recorded.added).toEqual(expect.arrayContaining([
      { name: 'tessera.data_api.requests', value: 1, attributes: { action: 'insertOne', status: 201 } },
      { name: 'tessera.data_api.requests', value: 1, attributes: { action: 'unknown', status: 404 } },
    ]));
  });
});
