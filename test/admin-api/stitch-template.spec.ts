import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession, canonicalJson } from './admin-session';

type PushBody = { diffs: string[]; warnings?: { file: string; path: string; rule: string }[]; error_code?: string; violations?: { file: string; path: string; rule: string }[] };

// A Stitch app exported as a template (`stitch-cli export --as-template`: stitch.json without name or app
// id, the cluster service without clusterName), pushed as its README imported it: into an app that already
// links a cluster (`tessera apps create --cluster`, as `stitch-cli import --strategy=replace` into an app).
describe('admin API: a Stitch template export (config_version 20180301)', () => {
  let host: TestHost;
  let admin: AdminSession;

  const template = () =>
    new Map([
      ['stitch.json', canonicalJson({ config_version: 20180301, security: {} })],
      ['services/mongodb-atlas/config.json', canonicalJson({ name: 'mongodb-atlas', type: 'mongodb-atlas', config: { readPreference: 'primary', wireProtocolEnabled: false }, version: 1 })],
      ['services/mongodb-atlas/rules/shop.orders.json', canonicalJson({ database: 'shop', collection: 'orders', roles: [{ name: 'all', apply_when: {}, read: true, write: true, insert: true, delete: true }] })],
      ['auth_providers/anon-user.json', canonicalJson({ name: 'anon-user', type: 'anon-user', disabled: false })],
    ]);

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: 'stitch-template-password' } });
    admin = await AdminSession.login(host, 'admin', 'stitch-template-password');
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('keeps the cluster the app links, with a warning, and names the app as the server does', async () => {
    const app = await admin.createApp('shop', { data_source: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } } });
    const preview = await admin.push(app._id, template(), true);
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect((preview.body as PushBody).warnings?.map(({ file, path, rule }) => `${file}|${path}|${rule}`)).toEqual(['services/mongodb-atlas/config.json|config.clusterName|datasource.link.kept']);
    const pushed = await admin.push(app._id, template());
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    const pulled = await admin.pull(app._id);
    expect(JSON.parse(pulled.get('services/mongodb-atlas/config.json')!)).toMatchObject({ config: { clusterName: 'Cluster0', readPreference: 'primary' } });
    expect(JSON.parse(pulled.get('config.json')!)).toMatchObject({ name: 'shop', app_id: app.client_app_id });
  });

  it('refuses it, naming the file, for an app that links no cluster', async () => {
    const app = await admin.createApp('shop-unlinked');
    const pushed = await admin.push(app._id, template());
    expect(pushed.status).toBe(400);
    expect((pushed.body as PushBody).violations?.map(({ file, path, rule }) => `${file}|${path}|${rule}`)).toEqual(['services/mongodb-atlas/config.json|config.clusterName|datasource.link.exactly_one']);
  });
});
