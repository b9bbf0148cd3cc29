import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { startTracing, type Tracing } from '@tessera/telemetry';
import { type MetricReader, startMetricReader } from '../support/metric-reader';
import { startTestHost, type TestHost } from '../support/test-host';
import { dataApi, serverApiKey, withDataApiConfig } from './data-api-support';

// Each Data API request is one span, with the datastore's CLIENT spans under it, and is counted.
describe('Data API telemetry', () => {
  let host: TestHost;
  let tracing: Tracing;
  const spans = new InMemorySpanExporter();
  let meters: MetricReader;

  beforeAll(async () => {
    // Registered before the host starts, as main.ts registers them before the application.
    tracing = startTracing({ serviceName: 'data-api-telemetry-test', exporter: spans, sampler: 'always_on' });
    meters = startMetricReader('data-api-telemetry-test');
    host = await startTestHost({ services: ['graphql-gateway'] });
  });

  afterAll(async () => {
    await host?.close();
    await tracing?.shutdown();
    await meters?.telemetry.shutdown();
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
    const counted = (await meters.points('tessera.data_api.requests')).map((point) => ({ value: point.value, attributes: point.attributes }));
    expect(counted).toEqual(expect.arrayContaining([
      { value: 1, attributes: { action: 'insertOne', status: 201 } },
      { value: 1, attributes: { action: 'unknown', status: 404 } },
    ]));
  });
});
