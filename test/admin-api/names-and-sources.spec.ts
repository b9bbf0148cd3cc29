import { unzipSync, zipSync } from 'fflate';
import { makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';
import { AdminSession } from './admin-session';

// Generous per-test time for a loaded machine.
const HTTP_TIMEOUT = 60_000;

type Refusal = { error: string; error_code: string; violations?: { file: string; path: string; rule: string }[] };

// Issue 14, item 14: every admin endpoint whose name becomes a path validates it, function sources are
// compiled when they are saved, and no archive the server writes or reads holds an entry outside its root.
describe('admin API: names that become paths, and function sources', () => {
  const dataDir = makeTempDir('tessera-admin-names-');
  let server: ServerProcess;
  let admin: AdminSession;
  let appId: string;

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'admin-test-password', TESSERA_EXAMPLE_APP: '' } });
    admin = await AdminSession.login(server, 'admin', 'admin-test-password');
    appId = (await admin.createApp('names', { template_id: 'backend' }))._id;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  const refused = (response: { status: number; body: unknown }, rule: string): void => {
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    const body = response.body as Refusal;
    expect(body.error_code).toBe('InvalidConfiguration');
    expect(body.violations?.map((v) => v.rule)).toContain(rule);
  };

  it.each(['../../evil', '..', 'a/../../b', '/etc/passwd', 'back\\slash', 'tab\tname', 'trailing/'])('refuses to create a function named %j with 400 and keeps the app as it was', async (name) => {
    const before = await admin.pull(appId);
    refused(await admin.request('POST', admin.app(appId, '/functions'), { name, source: 'exports = () => 1;' }), 'function.name.path');
    expect(await admin.pull(appId)).toEqual(before);
  }, HTTP_TIMEOUT);

  it('accepts a function in a folder, as App Services does', async () => {
    const created = await admin.request<{ _id: string; name: string }>('POST', admin.app(appId, '/functions'), { name: 'utils/format', source: 'exports = (x) => `${x}!`;' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.name).toBe('utils/format');
  }, HTTP_TIMEOUT);

  it('refuses a function whose source does not compile, at create and at update, naming the line', async () => {
    const create = await admin.request<Refusal>('POST', admin.app(appId, '/functions'), { name: 'broken', source: 'exports = function (a) {\n  return a +;\n};' });
    refused(create, 'function.source.syntax');
    expect(create.body.violations).toMatchObject([{ file: 'functions/broken/source.js', path: '', rule: 'function.source.syntax' }]);
    expect(create.body.error).toMatch(/does not compile: .*\(line 2\)/);

    const functions = (await admin.request<{ _id: string; name: string }[]>('GET', admin.app(appId, '/functions'))).body;
    const hello = functions.find((fn) => fn.name === 'hello')!;
    const original = (await admin.request<{ source: string }>('GET', admin.app(appId, `/functions/${hello._id}`))).body.source;
    refused(await admin.request('PUT', admin.app(appId, `/functions/${hello._id}`), { source: 'exports = () => {' }), 'function.source.syntax');
    refused(await admin.request('PUT', admin.app(appId, `/functions/${hello._id}`), { name: '../hello' }), 'function.name.path');
    expect((await admin.request<{ source: string; name: string }>('GET', admin.app(appId, `/functions/${hello._id}`))).body).toMatchObject({ name: 'hello', source: original });
    expect((await admin.request('PUT', admin.app(appId, `/functions/${hello._id}`), { source: 'exports = () => "hi";' })).status).toBe(204);
  }, HTTP_TIMEOUT);

  it('refuses values, auth providers, services, triggers, rules and webhooks whose names would climb out of their directory', async () => {
    refused(await admin.request('POST', admin.app(appId, '/values'), { name: '../../greeting', value: 'x' }), 'value.name.path');
    refused(await admin.request('POST', admin.app(appId, '/auth_providers'), { name: '../anon', type: 'anon-user' }), 'auth_provider.name.path');
    refused(await admin.request('POST', admin.app(appId, '/services'), { name: '../svc', type: 'http' }), 'service.name.charset');
    refused(await admin.request('POST', admin.app(appId, '/triggers'), { name: '../t', type: 'SCHEDULED', function_name: 'hello', config: { schedule: '0 0 * * *' } }), 'trigger.name.charset');
    const services = (await admin.request<{ _id: string; name: string }[]>('GET', admin.app(appId, '/services'))).body;
    const atlas = services.find((service) => service.name === 'mongodb-atlas')!;
    refused(await admin.request('POST', admin.app(appId, `/services/${atlas._id}/rules`), { database: '..', collection: 'x', roles: [] }), 'rule.database.name');
    refused(await admin.request('POST', admin.app(appId, `/services/${atlas._id}/rules`), { database: 'app', collection: '../../x', roles: [] }), 'rule.collection.name');
  }, HTTP_TIMEOUT);

  it('refuses a rule whose expression does not compile with 400 naming the path', async () => {
    const services = (await admin.request<{ _id: string; name: string }[]>('GET', admin.app(appId, '/services'))).body;
    const atlas = services.find((service) => service.name === 'mongodb-atlas')!;
    const response = await admin.request<Refusal>('POST', admin.app(appId, `/services/${atlas._id}/rules`), { database: 'app', collection: 'tasks', roles: [{ name: 'r', apply_when: { owner: { $foo: 1 } }, read: true }] });
    refused(response, 'rule.expression.invalid');
    expect(response.body.violations).toMatchObject([{ path: 'roles[0].apply_when.owner.$foo', rule: 'rule.expression.invalid' }]);
    expect(response.body.error).toContain('unknown operator $foo');
  }, HTTP_TIMEOUT);

  it('exports an archive whose every entry stays inside it', async () => {
    const response = await admin.request('GET', admin.app(appId, '/export'));
    expect(response.status).toBe(200);
    const paths = Object.keys(unzipSync(response.bytes));
    expect(paths).toContain('functions/utils/format.js');
    for (const path of paths) {
      expect(path.startsWith('/') || path.split('/').some((segment) => segment === '..' || segment === '.')).toBe(false);
    }
  }, HTTP_TIMEOUT);

  it('refuses an imported or pushed zip holding an entry outside the app directory', async () => {
    const files = await admin.pull(appId);
    const entries = Object.fromEntries([...files].map(([path, text]) => [path, Buffer.from(text)]));
    const evil = zipSync({ ...entries, '../../outside.js': Buffer.from('exports = 1;') });
    const push = await admin.request<Refusal>('PATCH', admin.app(appId, '/push'), undefined, { zip: evil });
    expect(push.status).toBe(400);
    expect(push.body).toMatchObject({ error_code: 'BadRequest' });
    expect(push.body.error).toContain('../../outside.js');
    expect(await admin.pull(appId)).toEqual(files);
  }, HTTP_TIMEOUT);
});
