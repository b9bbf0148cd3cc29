import { createHash, randomBytes } from 'node:crypto';
import { eventually, findNatsServer, natsSkipReason } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { adminPassword, Cluster } from '../distributed/cluster';
import { OtlpCollector } from '../distributed/otlp-collector';
import { curl, multipartUpload, zipDirectory } from './hosting-support';

const md5 = (data: string) => createHash('md5').update(data).digest('hex');

// Distributed mode: the admin API and the gateway are separate processes with data directories of their
// own; hosted files pushed to the one are served by the other, so they live in the platform database (the
// datastore service), not on a local disk.
describe.skipIf(!findNatsServer())(`static hosting across processes${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  let cluster: Cluster;
  let collector: OtlpCollector;
  let admin: AdminSession;
  let app: { _id: string; client_app_id: string };

  beforeAll(async () => {
    collector = await OtlpCollector.start();
    cluster = await Cluster.start({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER_ARG: '1' } });
    admin = await AdminSession.login(cluster.one('admin-api'), 'admin', adminPassword);
    app = await admin.createApp('distsite');
    const live = await admin.pull(app._id);
    const config = JSON.parse(live.get('config.json') ?? '{}') as Record<string, unknown>;
    const directory = { ...Object.fromEntries(live), 'config.json': JSON.stringify({ ...config, hosting: { enabled: true, custom_domain: 'dist.example.com' } }), 'hosting/files/index.html': '<h1>dist</h1>', 'hosting/metadata.json': '[]' };
    const pushed = await admin.request('PATCH', admin.app(app._id, '/push'), undefined, { zip: zipDirectory(directory) });
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await collector?.close();
  });

  it('serves from the gateway process what the admin API process stored, by path and by Host, with 304s', async () => {
    const gateway = cluster.one('graphql-gateway').url;
    const page = await eventually(async () => {
      const response = await fetch(`${gateway}/hosting/${app.client_app_id}/`);
      expect(response.status).toBe(200);
      return response;
    });
    expect(await page.text()).toBe('<h1>dist</h1>');
    expect(page.headers.get('etag')).toBe(`"${md5('<h1>dist</h1>')}"`);
    expect((await fetch(`${gateway}/hosting/${app.client_app_id}/index.html`, { headers: { 'if-none-match': page.headers.get('etag')! } })).status).toBe(304);
    const byHost = await eventually(async () => {
      const result = await curl(['-H', 'Host: dist.example.com', `${gateway}/index.html`]);
      expect(result.status).toBe(200);
      return result;
    });
    expect(byHost.body).toBe('<h1>dist</h1>');

    // An upload and a delete through the admin process are served (and gone) at once from the gateway.
    const upload = multipartUpload({ path: '/news.html', attrs: [] }, Buffer.from('<p>news</p>'));
    const put = await fetch(`${admin.baseUrl}${admin.app(app._id, '/hosting/assets/asset')}`, { method: 'PUT', headers: { authorization: `Bearer ${admin.accessToken}`, 'content-type': upload.contentType }, body: upload.body });
    expect(put.status).toBe(204);
    expect(await (await fetch(`${gateway}/hosting/${app.client_app_id}/news.html`)).text()).toBe('<p>news</p>');
    expect((await admin.request('DELETE', admin.app(app._id, '/hosting/assets/asset?path=/news.html'))).status).toBe(204);
    expect((await fetch(`${gateway}/hosting/${app.client_app_id}/news.html`)).status).toBe(404);
  });

  it('traces a hosting request from the edge to the platform database, by path and by Host', async () => {
    const gateway = cluster.one('graphql-gateway').url;
    const caller = randomBytes(8).toString('hex');
    for (const [url, headers] of [
      [`${gateway}/hosting/${app.client_app_id}/index.html`, {}],
      [`${gateway}/index.html`, { host: 'dist.example.com' }],
    ] as const) {
      const traceId = randomBytes(16).toString('hex');
      const traceparent = `00-${traceId}-${caller}-01`;
      const served = headers.host ? await curl(['-H', `Host: ${headers.host}`, '-H', `traceparent: ${traceparent}`, url]) : await fetch(url, { headers: { traceparent } });
      expect(served.status).toBe(200);
      const spans = await eventually(() => {
        const found = collector.trace(traceId);
        expect(found.some((span) => span.name === 'find platform.hosting_content')).toBe(true);
        return found;
      }, { timeoutMs: 15_000 });
      const edge = spans.find((span) => span.parentSpanId === caller);
      expect(edge).toMatchObject({ service: 'tessera-graphql-gateway', attributes: { 'tessera.app_id': app._id, 'tessera.hosting.path': '/index.html', 'http.response.status_code': 200 } });
      const reads = spans.filter((span) => span.name.endsWith('platform.hosting_assets') || span.name.endsWith('platform.hosting_content'));
      expect(reads.length).toBeGreaterThanOrEqual(2);
      for (const read of reads) expect(read.parentSpanId, read.name).toBe(edge?.spanId);
    }
  });
});
