import { createServer, type Server } from 'node:http';
import { eventually, makeTempDir, type ServerProcess, startServerProcess } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { createSyncApp } from './sync-admin-app';
import { connect, createTaskUpload, syncUrl } from './sync-test-client';

// Tessera run as users run it (the built entry point, a child process) with OTEL_EXPORTER_OTLP_ENDPOINT set:
// the sync service's counters and per-partition history gauges reach an OTLP/HTTP collector.

interface OtlpMetric {
  name: string;
  sum?: { dataPoints?: OtlpPoint[] };
  gauge?: { dataPoints?: OtlpPoint[] };
}

interface OtlpPoint {
  attributes?: Array<{ key: string; value?: { stringValue?: string; intValue?: number | string } }>;
  asInt?: number | string;
  asDouble?: number;
}

interface OtlpMetricsBody {
  resourceMetrics?: Array<{ scopeMetrics?: Array<{ metrics?: OtlpMetric[] }> }>;
}

/** A local OTLP/HTTP collector of metrics (JSON encoding). */
async function startMetricsCollector(): Promise<{ url: string; metrics: OtlpMetric[]; close(): Promise<void> }> {
  const metrics: OtlpMetric[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      // Spans go to the same collector; only metrics are read here.
      if (request.url === '/v1/traces') return void response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      if (request.url !== '/v1/metrics') return void response.writeHead(404).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpMetricsBody;
      for (const resource of body.resourceMetrics ?? []) for (const scope of resource.scopeMetrics ?? []) metrics.push(...(scope.metrics ?? []));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, metrics, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const valueOf = (point: OtlpPoint): number => Number(point.asInt ?? point.asDouble ?? NaN);
const attribute = (point: OtlpPoint, key: string): string | number | undefined => {
  const value = point.attributes?.find((candidate) => candidate.key === key)?.value;
  return value?.stringValue ?? (value?.intValue !== undefined ? Number(value.intValue) : undefined);
};

describe('the server process exports sync metrics over OTLP', () => {
  const dir = makeTempDir('tessera-sync-ops-export-');
  let collector: Awaited<ReturnType<typeof startMetricsCollector>>;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    collector = await startMetricsCollector();
  });
  afterAll(async () => {
    await server?.stop();
    await collector?.close();
    dir.remove();
  });

  it('posts the sync counters and the history size of each partition to <endpoint>/v1/metrics', async () => {
    const password = 'sync-ops-export-password';
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dir.path, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_METRIC_EXPORT_INTERVAL: '500', TESSERA_ADMIN_PASSWORD: password, TESSERA_ALLOW_NEW_PARTITION_SYNC: 'true' } });
    const admin = await AdminSession.login(server, 'admin', password);
    const { appId, clientAppId } = await createSyncApp(admin, 'exported');
    const login = await fetch(`${server.url}/api/client/v2.0/app/${clientAppId}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const { access_token: access } = (await login.json()) as { access_token: string };
    const client = await connect(syncUrl(server.url, clientAppId, access));
    await client.openSession(1, '"exported"');
    client.send(createTaskUpload(1, 'exported', 'e1'));
    expect(await client.next()).toMatchObject({ type: 'download', downloadServerVersion: 1 });

    // The session stays open until a periodic export (every 500 ms here) has measured its partition. The
    // latest export counts: one taken between the session's start and its upload's commit measured none yet.
    const gauge = (name: string): OtlpPoint | undefined =>
      collector.metrics
        .filter((metric) => metric.name === name)
        .flatMap((metric) => metric.gauge?.dataPoints ?? [])
        .filter((point) => attribute(point, 'tessera.app_id') === appId)
        .at(-1);
    await eventually(() => expect(gauge('tessera.sync.history.versions')).toBeDefined(), { timeoutMs: 20_000, intervalMs: 200 });
    await eventually(() => expect(valueOf(gauge('tessera.sync.history.versions')!)).toBe(1), { timeoutMs: 20_000, intervalMs: 200 });
    expect(attribute(gauge('tessera.sync.history.versions')!, 'tessera.sync.partition')).toBe('"exported"');
    expect(valueOf(gauge('tessera.sync.history.bytes')!)).toBeGreaterThan(0);
    const total = (name: string): number => Math.max(0, ...collector.metrics.filter((metric) => metric.name === name).map((metric) => (metric.sum?.dataPoints ?? []).reduce((sum, point) => sum + valueOf(point), 0)));
    expect(total('tessera.sync.connections')).toBeGreaterThanOrEqual(1);
    expect(total('tessera.sync.sessions')).toBeGreaterThanOrEqual(1);
    expect(total('tessera.sync.uploads')).toBeGreaterThanOrEqual(1);
    expect(total('tessera.sync.downloads')).toBeGreaterThanOrEqual(2);
    client.close();
    const code = await server.stop();
    expect(code, server.output().slice(-3000)).toBe(0);
    server = undefined;
  }, 120_000);
});
