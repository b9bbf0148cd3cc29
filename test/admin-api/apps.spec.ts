import { deriveSigningKey, signJwt } from '@tessera/credentials';
import { eventually, makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';
import { AdminSession, canonicalJson, unzipText, zipText } from './admin-session';

// The admin API v3.0 over HTTP against the built server, with the status codes realm-cli checks.
describe('admin API: apps, import and export, drafts, secrets', () => {
  const dataDir = makeTempDir('tessera-admin-');
  // The server derives its keys from this master key, so the test can sign tokens as the server does.
  const signingKey = Buffer.alloc(32, 21);
  let server: ServerProcess;
  let admin: AdminSession;

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'admin-test-password', TESSERA_EXAMPLE_APP: '', TESSERA_SIGNING_KEY: signingKey.toString('base64') } });
    admin = await AdminSession.login(server, 'admin', 'admin-test-password');
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  it('lists the template apps, each with its client framework or None', async () => {
    const templates = await admin.request<{ id: string; client: string }[]>('GET', '/templates');
    expect(templates.status).toBe(200);
    expect(templates.body.map((template) => [template.id, template.client])).toEqual([
      ['backend', 'None'],
      ['triggers', 'None'],
      ['web.mql.todo', 'web'],
    ]);
  });

  it('creates an app from each template with 201 and deploys its backend', async () => {
    for (const template of ['backend', 'triggers', 'web.mql.todo']) {
      const app = await admin.createApp(`tpl-${template.replace(/\./g, '-')}`, { template_id: template });
      expect(app.client_app_id).toMatch(/^tpl-[a-z-]+-[a-z]{5}$/);
      const files = await admin.pull(app._id);
      expect(JSON.parse(files.get('config.json')!)).toMatchObject({ name: app.name, app_id: app.client_app_id, config_version: 20210101 });
      expect([...files.keys()].some((path) => path.startsWith('functions/'))).toBe(true);
    }
    const web = (await admin.request<{ _id: string; name: string }[]>('GET', `/groups/${admin.groupId}/apps`)).body.find((app) => app.name === 'tpl-web-mql-todo')!;
    const client = await admin.request('GET', admin.app(web._id, '/templates/web.mql.todo/client'));
    expect(client.status).toBe(200);
    const clientFiles = unzipText(client.bytes);
    const record = (await admin.request<{ client_app_id: string }>('GET', admin.app(web._id))).body;
    expect(clientFiles.get('config.js')).toContain(`appId: '${record.client_app_id}'`);
    expect((await admin.request('GET', admin.app(web._id, '/templates'))).body).toMatchObject([{ id: 'web.mql.todo' }]);
    const triggers = (await admin.request<{ _id: string; name: string }[]>('GET', `/groups/${admin.groupId}/apps`)).body.find((app) => app.name === 'tpl-triggers')!;
    expect((await admin.request('GET', admin.app(triggers._id, '/templates/triggers/client'))).status).toBe(204);
  });

  it('refuses an unknown template with 400 naming the templates that exist', async () => {
    const response = await admin.request<{ error: string; error_code: string }>('POST', `/groups/${admin.groupId}/apps`, { name: 'x1', template_id: 'ios.swift.todo' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: "template 'ios.swift.todo' not found; available templates: backend, triggers, web.mql.todo", error_code: 'TemplateNotFound' });
  });

  it.each([
    ['', 'app name is required'],
    ['a'.repeat(33), 'the limit is 32'],
    ['has space', 'ASCII letters, digits, underscores and hyphens'],
    ['dot.ted', 'ASCII letters, digits, underscores and hyphens'],
    ['émoji', 'ASCII letters, digits, underscores and hyphens'],
  ])('refuses the app name %j with 400', async (name, message) => {
    const response = await admin.request<{ error: string; error_code: string }>('POST', `/groups/${admin.groupId}/apps`, { name });
    expect(response.status).toBe(400);
    expect(response.body.error_code).toBe('InvalidAppName');
    expect(response.body.error).toContain(message);
  });

  it('accepts names at the limits: 1 and 32 characters', async () => {
    await admin.createApp('z');
    await admin.createApp(`A_-${'9'.repeat(29)}`);
    const duplicate = await admin.request<{ error_code: string }>('POST', `/groups/${admin.groupId}/apps`, { name: 'z' });
    expect(duplicate.status).toBe(409);
  });

  it('creates with a data source, filters the list by product, describes and deletes with 204', async () => {
    const app = await admin.createApp('with-source', { data_source: { name: 'datastore-cluster', type: 'datastore-cluster', config: { clusterName: 'Cluster7' } } });
    const services = await admin.request<{ _id: string; name: string; type: string }[]>('GET', admin.app(app._id, '/services'));
    expect(services.body).toMatchObject([{ name: 'datastore-cluster', type: 'datastore-cluster' }]);
    const config = await admin.request('GET', admin.app(app._id, `/services/${services.body[0]._id}/config`));
    expect(config.body).toEqual({ clusterName: 'Cluster7' });
    const standard = await admin.request<{ name: string }[]>('GET', `/groups/${admin.groupId}/apps?product=standard`);
    expect(standard.body.map((a) => a.name)).toContain('with-source');
    expect((await admin.request<unknown[]>('GET', `/groups/${admin.groupId}/apps?product=atlas`)).body).toEqual([]);
    const description = await admin.request<{ client_app_id: string; data_sources: unknown[] }>('GET', admin.app(app._id, '/description'));
    expect(description.body).toMatchObject({ client_app_id: app.client_app_id, data_sources: [{ name: 'datastore-cluster', data_source: 'Cluster7' }] });
    expect((await admin.request('DELETE', admin.app(app._id))).status).toBe(204);
    const gone = await admin.request<{ error_code: string }>('GET', admin.app(app._id));
    expect(gone.status).toBe(404);
    expect(gone.body.error_code).toBe('AppNotFound');
    expect((await admin.request('GET', `/groups/000000000000000000000000/apps`)).status).toBe(404);
  });

  it('exports the 20210101 layout realm-cli reads, with a Content-Disposition filename', async () => {
    const app = await admin.createApp('exported', { template_id: 'web.mql.todo' });
    const response = await admin.request('GET', admin.app(app._id, '/export?source_control=true&version=20210101'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename=exported_\d{14}\.zip$/);
    const files = unzipText(response.bytes);
    expect(JSON.parse(files.get('realm_config.json')!)).toEqual({ config_version: 20210101, name: 'exported', location: 'US-VA', deployment_model: 'GLOBAL', allowed_request_origins: [] });
    expect(JSON.parse(files.get('functions/config.json')!)).toMatchObject([{ name: 'addItem' }]);
    expect(files.get('functions/addItem.js')).toContain('insertOne');
    expect(JSON.parse(files.get('data_sources/mongodb-atlas/config.json')!)).toMatchObject({ name: 'mongodb-atlas', config: { clusterName: 'Cluster0' } });
    expect(JSON.parse(files.get('data_sources/mongodb-atlas/todo/items/schema.json')!)).toMatchObject({ title: 'Item' });
    expect(JSON.parse(files.get('data_sources/mongodb-atlas/todo/items/rules.json')!)).not.toHaveProperty('schema');
    expect(Object.keys(JSON.parse(files.get('auth/providers.json')!) as object)).toEqual(['anon-user', 'local-userpass']);
    const withId = unzipText((await admin.request('GET', admin.app(app._id, '/export'))).bytes);
    expect(JSON.parse(withId.get('realm_config.json')!)).toHaveProperty('app_id', app.client_app_id);
  });

  it('imports realm-cli AppData: diff=true answers 200 with diff strings, the import 204', async () => {
    const app = await admin.createApp('imported');
    const appData = {
      config_version: 20210101,
      name: 'imported',
      location: 'US-VA',
      deployment_model: 'GLOBAL',
      functions: { config: [{ name: 'double', private: false }], sources: { 'double.js': 'exports = (x) => x * 2;\n' } },
      values: [{ name: 'limit', value: '10', from_secret: false }],
      data_sources: [{ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } }, rules: [{ database: 'shop', collection: 'orders', roles: [{ name: 'all', apply_when: {}, read: true, write: false }], schema: { title: 'Order', bsonType: 'object', properties: { _id: { bsonType: 'objectId' } } } }] }],
      sync: { config: { development_mode_enabled: false } },
    };
    const diff = await admin.request<string[]>('POST', admin.app(app._id, '/import?strategy=replace-by-name&diff=true'), appData);
    expect(diff.status).toBe(200);
    expect(diff.body.find((line) => line.startsWith('+ added functions/double/source.js'))).toContain('+exports = (x) => x * 2;');
    expect((await admin.pull(app._id)).has('functions/double/source.js')).toBe(false);
    const imported = await admin.request('POST', admin.app(app._id, '/import?strategy=replace-by-name'), appData);
    expect(imported.status).toBe(204);
    const files = await admin.pull(app._id);
    expect(files.get('functions/double/source.js')).toBe('exports = (x) => x * 2;\n');
    expect(JSON.parse(files.get('services/mongodb-atlas/rules/shop.orders.json')!)).toMatchObject({ database: 'shop', collection: 'orders', schema: { title: 'Order' } });
    expect(JSON.parse(files.get('values/limit.json')!)).toMatchObject({ name: 'limit', value: '10' });
  });

  it('runs realm-cli push: draft 201, conflict 409 DraftAlreadyExists, staged import, deployment 201', async () => {
    const app = await admin.createApp('drafted', { template_id: 'backend' });
    const before = await admin.pull(app._id);
    const draft = await admin.request<{ _id: string }>('POST', admin.app(app._id, '/drafts'));
    expect(draft.status).toBe(201);
    const conflict = await admin.request<{ error_code: string }>('POST', admin.app(app._id, '/drafts'));
    expect(conflict.status).toBe(409);
    expect(conflict.body.error_code).toBe('DraftAlreadyExists');
    expect((await admin.request<{ _id: string }[]>('GET', admin.app(app._id, '/drafts'))).body).toMatchObject([{ _id: draft.body._id }]);

    const appData = { config_version: 20210101, name: 'drafted', functions: { config: [{ name: 'hello', private: false }], sources: { 'hello.js': 'exports = () => "changed";\n' } }, data_sources: [{ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } }, rules: [] }], values: [{ name: 'greeting', value: 'Hi' }] };
    expect((await admin.request('POST', admin.app(app._id, '/import'), appData)).status).toBe(204);
    expect(await admin.pull(app._id)).toEqual(before);
    const draftDiff = await admin.request<{ diffs: string[] }>('GET', admin.app(app._id, `/drafts/${draft.body._id}/diff`));
    expect(draftDiff.body.diffs.some((line) => line.includes('~ modified functions/hello/source.js'))).toBe(true);

    const deployment = await admin.request<{ _id: string; status: string }>('POST', admin.app(app._id, `/drafts/${draft.body._id}/deployment`));
    expect(deployment.status).toBe(201);
    expect(deployment.body.status).toBe('successful');
    expect((await admin.pull(app._id)).get('functions/hello/source.js')).toBe('exports = () => "changed";\n');
    expect((await admin.request<unknown[]>('GET', admin.app(app._id, '/drafts'))).body).toEqual([]);
    const one = await admin.request<{ _id: string }>('GET', admin.app(app._id, `/deployments/${deployment.body._id}`));
    expect(one.status).toBe(200);
    const all = await admin.request<{ _id: string }[]>('GET', admin.app(app._id, '/deployments'));
    expect(all.body[0]._id).toBe(deployment.body._id);

    const second = await admin.request<{ _id: string }>('POST', admin.app(app._id, '/drafts'));
    expect((await admin.request('DELETE', admin.app(app._id, `/drafts/${second.body._id}`))).status).toBe(204);
  });

  it('names a pushed deployment by deployment_name, and refuses a name that is blank, repeated, too long or holds control characters', async () => {
    const app = await admin.createApp('named-deploys', { template_id: 'backend' });
    const files = await admin.pull(app._id);
    files.set('values/v.json', canonicalJson({ name: 'v', value: 1, from_secret: false }));
    const push = (query: string) => admin.request<{ error_code?: string }>('PATCH', admin.app(app._id, `/push?${query}`), undefined, { zip: zipText(files) });
    for (const query of ['deployment_name=', 'deployment_name=%20%20', 'deployment_name=a&deployment_name=b', `deployment_name=${'x'.repeat(201)}`, 'deployment_name=release%0D%0A1', 'deployment_name=%1B%5B31mred']) {
      const refused = await push(query);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error_code, query).toBe('InvalidParameter');
    }
    expect((await admin.request<unknown[]>('GET', admin.app(app._id, '/deployments'))).body).toHaveLength(1);
    expect((await push('deployment_name=release%201')).status).toBe(204);
    const [latest] = (await admin.request<Array<{ name: string }>>('GET', admin.app(app._id, '/deployments'))).body;
    expect(latest.name).toBe('release 1');
  });

  it('refuses a push of an invalid directory with every violation, file and path, and changes nothing', async () => {
    const app = await admin.createApp('guarded', { template_id: 'backend' });
    const before = await admin.pull(app._id);
    const broken = new Map(before);
    broken.set('services/bad name/config.json', canonicalJson({ name: 'bad name', type: 'mongodb-atlas', config: { clusterName: 'C' } }));
    broken.set('triggers/t.json', canonicalJson({ name: 't', type: 'DATABASE', function_name: 'missing', config: {} }));
    broken.set('functions/hello/config.json', '{ "name": "hello", ');
    const rule = JSON.parse(before.get('services/mongodb-atlas/rules/app.notes.json')!) as { roles: { name: string }[] };
    rule.roles[0].name = 'r'.repeat(101);
    broken.set('services/mongodb-atlas/rules/app.notes.json', canonicalJson(rule));
    const response = await admin.push(app._id, broken);
    expect(response.status).toBe(400);
    expect(response.body.error_code).toBe('InvalidConfiguration');
    const where = response.body.violations!.map((violation) => `${violation.file}#${violation.path}`);
    expect(where).toEqual(expect.arrayContaining(['services/bad name/config.json#name', 'triggers/t.json#function_name', 'services/mongodb-atlas/rules/app.notes.json#roles[0].name']));
    expect(where.some((entry) => entry.startsWith('functions/hello/config.json#'))).toBe(true);
    expect(response.body.error).toContain('services/bad name/config.json');
    expect(await admin.pull(app._id)).toEqual(before);
    expect((await admin.request<unknown[]>('GET', admin.app(app._id, '/deployments'))).body).toHaveLength(1);
  });

  it("takes secrets.json in realm-cli's nested form: each option's value becomes the secret its owner names", async () => {
    const app = await admin.createApp('nested-secrets');
    const files = await admin.pull(app._id);
    files.set('services/hook/config.json', JSON.stringify({ name: 'hook', type: 'http', config: {}, secret_config: { apiKey: 'hookKey' } }));
    files.set('values/key.json', JSON.stringify({ name: 'key', value: 'hookKey', from_secret: true }));
    files.set('secrets.json', JSON.stringify({ services: { hook: { apiKey: 'nested-value' } }, auth_providers: {} }));
    const pushed = await admin.push(app._id, files);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    const listed = await admin.request<Array<{ name: string }>>('GET', admin.app(app._id, '/secrets'));
    expect(listed.body.map((secret) => secret.name)).toEqual(['hookKey']);
    expect(Buffer.from(listed.bytes).toString()).not.toContain('nested-value');
    // An option whose value is not text is refused, naming where.
    files.set('secrets.json', JSON.stringify({ services: { hook: { apiKey: 7 } } }));
    const refused = await admin.push(app._id, files);
    expect(refused.status).toBe(400);
    expect(refused.body.violations?.map((violation) => violation.file)).toContain('secrets.json');
  });

  it('keeps secret values in the data directory and never returns them', async () => {
    const app = await admin.createApp('secretive');
    const created = await admin.request<{ _id: string; name: string }>('POST', admin.app(app._id, '/secrets'), { name: 'apiKey', value: 's3cr3t-value' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ _id: expect.stringMatching(/^[0-9a-f]{24}$/), name: 'apiKey' });
    const listed = await admin.request('GET', admin.app(app._id, '/secrets'));
    expect(listed.body).toEqual([created.body]);
    expect(Buffer.from(listed.bytes).toString()).not.toContain('s3cr3t');
    expect((await admin.request('POST', admin.app(app._id, '/secrets'), { name: 'apiKey', value: 'x' })).status).toBe(409);
    expect((await admin.request('POST', admin.app(app._id, '/secrets'), { name: 'bad name', value: 'x' })).status).toBe(400);
    expect((await admin.request('PUT', admin.app(app._id, `/secrets/${created.body._id}`), { name: 'apiKey', value: 'rotated' })).status).toBe(204);
    expect((await admin.pull(app._id)).has('secrets.json')).toBe(false);
    // A value may now refer to the secret.
    const value = await admin.request('POST', admin.app(app._id, '/values'), { name: 'key', value: 'apiKey', from_secret: true });
    expect(value.status).toBe(201);
    expect((await admin.request('DELETE', admin.app(app._id, `/secrets/${created.body._id}`))).status).toBe(204);
  });

  it('serves functions, values, logs, users and pending registrations', async () => {
    const app = await admin.createApp('misc', { template_id: 'backend' });
    const functions = await admin.request<{ _id: string; name: string }[]>('GET', admin.app(app._id, '/functions'));
    expect(functions.body).toMatchObject([{ name: 'hello' }]);
    const fn = await admin.request<{ source: string }>('GET', admin.app(app._id, `/functions/${functions.body[0]._id}`));
    expect(fn.body.source).toContain('greeting');
    expect((await admin.request('POST', admin.app(app._id, '/functions'), { name: 'two', source: 'exports = () => 2;', private: true })).status).toBe(201);
    expect((await admin.request<{ name: string }[]>('GET', admin.app(app._id, '/values'))).body).toMatchObject([{ name: 'greeting' }]);
    expect((await admin.request('GET', admin.app(app._id, '/values/greeting'))).body).toMatchObject({ value: 'Hello' });

    expect((await admin.request('GET', admin.app(app._id, '/logs'))).body).toEqual({ logs: [] });
    // The server's function runtime writes one FUNCTION entry per run, in the platform database.
    expect((await admin.request('POST', admin.app(app._id, '/functions'), { name: 'say', source: "exports = () => { console.log('hi'); };", private: true })).status).toBe(201);
    expect((await admin.request('POST', admin.app(app._id, '/functions'), { name: 'fail', source: "exports = () => { throw new Error('boom'); };", private: true })).status).toBe(201);
    const run = (name: string) => admin.request('POST', admin.app(app._id, '/debug/execute_function?run_as_system=true'), { name, arguments: [] });
    expect((await run('say')).status).toBe(200);
    await eventually(async () => expect((await admin.request<{ logs: unknown[] }>('GET', admin.app(app._id, '/logs'))).body.logs).toHaveLength(1));
    await run('fail');
    const logs = await eventually(async () => {
      const listed = await admin.request<{ logs: { messages: string[]; error?: string }[] }>('GET', admin.app(app._id, '/logs'));
      expect(listed.body.logs).toHaveLength(2);
      return listed.body.logs;
    });
    expect(logs.map((log) => log.error ?? log.messages[0])).toEqual(['boom', 'hi']);
    expect((await admin.request<{ logs: unknown[] }>('GET', admin.app(app._id, '/logs?errors_only=true'))).body.logs).toHaveLength(1);
    expect((await admin.request<{ logs: unknown[] }>('GET', admin.app(app._id, '/logs?limit=1'))).body.logs).toHaveLength(1);
    expect((await admin.request<{ logs: unknown[] }>('GET', admin.app(app._id, '/logs?type=AUTH'))).body.logs).toHaveLength(0);
    expect((await admin.request<{ logs: unknown[] }>('GET', admin.app(app._id, `/logs?start_date=${new Date(Date.now() + 60_000).toISOString()}`))).body.logs).toHaveLength(0);

    expect((await admin.request('GET', admin.app(app._id, '/users'))).body).toEqual([]);
    const pending = await admin.request('GET', admin.app(app._id, '/user_registrations/pending_users'));
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual([]);
  });

  it('manages auth providers, services, rules, the default rule and custom user data as realm-core tests do', async () => {
    const app = await admin.createApp('managed');
    const provider = await admin.request<{ _id: string; name: string; disabled: boolean }>('POST', admin.app(app._id, '/auth_providers'), { type: 'local-userpass', config: { autoConfirm: true, resetPasswordUrl: 'http://localhost/reset' } });
    expect(provider.status).toBe(201);
    expect(provider.body).toMatchObject({ name: 'local-userpass', disabled: false });
    expect((await admin.request('PUT', admin.app(app._id, `/auth_providers/${provider.body._id}/disable`))).status).toBe(204);
    expect((await admin.request('GET', admin.app(app._id, `/auth_providers/${provider.body._id}`))).body).toMatchObject({ disabled: true, config: { autoConfirm: true } });
    expect((await admin.request('PUT', admin.app(app._id, `/auth_providers/${provider.body._id}/enable`))).status).toBe(204);
    expect((await admin.request('GET', admin.app(app._id, '/auth_providers'))).body).toEqual([{ _id: provider.body._id, name: 'local-userpass', type: 'local-userpass', disabled: false }]);

    const service = await admin.request<{ _id: string; name: string }>('POST', admin.app(app._id, '/services'), { name: 'BackingDB', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } });
    expect(service.status).toBe(201);
    expect((await admin.request('POST', admin.app(app._id, '/services'), { name: 'BackingDB', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } })).status).toBe(409);
    const badName = await admin.request<{ violations: { path: string; rule: string }[] }>('POST', admin.app(app._id, '/services'), { name: 'x'.repeat(65), type: 'http', config: {} });
    expect(badName.status).toBe(400);
    expect(badName.body.violations).toMatchObject([{ path: 'name', rule: 'service.name.length' }]);

    const roles = [{ name: 'all', apply_when: {}, read: true, write: true }];
    expect((await admin.request('POST', admin.app(app._id, `/services/${service.body._id}/default_rule`), { roles })).status).toBe(201);
    expect((await admin.request('GET', admin.app(app._id, `/services/${service.body._id}/default_rule`))).body).toMatchObject({ roles });
    const rule = await admin.request<{ _id: string }>('POST', admin.app(app._id, `/services/${service.body._id}/rules`), { database: 'db', collection: 'tasks', roles });
    expect(rule.status).toBe(201);
    expect((await admin.request('GET', admin.app(app._id, `/services/${service.body._id}/rules`))).body).toEqual([{ _id: rule.body._id, database: 'db', collection: 'tasks' }]);
    const updated = await admin.request('PUT', admin.app(app._id, `/services/${service.body._id}/rules/${rule.body._id}`), { database: 'db', collection: 'tasks', roles: [{ ...roles[0], write: false }] });
    expect(updated.status).toBe(200);
    expect(JSON.parse((await admin.pull(app._id)).get('services/BackingDB/rules/db.tasks.json')!)).toMatchObject({ roles: [{ name: 'all', write: false }] });

    expect((await admin.request('PATCH', admin.app(app._id, '/custom_user_data'), { enabled: true, mongo_service_id: service.body._id, database_name: 'db', collection_name: 'users', user_id_field: 'user_id' })).status).toBe(204);
    const inUse = await admin.request<{ error_code: string }>('DELETE', admin.app(app._id, `/services/${service.body._id}`));
    expect(inUse.status).toBe(400);
    expect(inUse.body.error_code).toBe('InvalidConfiguration');
    expect((await admin.request('PATCH', admin.app(app._id, '/custom_user_data'), { enabled: false, mongo_service_id: '' })).status).toBe(204);
    expect((await admin.request('DELETE', admin.app(app._id, `/services/${service.body._id}/rules/${rule.body._id}`))).status).toBe(204);
    expect((await admin.request('DELETE', admin.app(app._id, `/services/${service.body._id}`))).status).toBe(204);
    expect((await admin.request('DELETE', admin.app(app._id, `/auth_providers/${provider.body._id}`))).status).toBe(204);
  });

  it('lists, changes, refuses and deletes triggers', async () => {
    const app = await admin.createApp('triggered', { template_id: 'triggers' });
    const triggers = await admin.request<{ _id: string; name: string; function_name: string; disabled: boolean }[]>('GET', admin.app(app._id, '/triggers'));
    expect(triggers.body).toMatchObject([{ name: 'onNewOrder', function_name: 'recordOrder', disabled: false }]);
    const id = triggers.body[0]._id;
    expect((await admin.request('PUT', admin.app(app._id, `/triggers/${id}`), { disabled: true })).status).toBe(204);
    expect((await admin.request('GET', admin.app(app._id, `/triggers/${id}`))).body).toMatchObject({ _id: id, disabled: true, config: { collection: 'orders' } });
    const broken = await admin.request<{ violations: { file: string; path: string }[] }>('POST', admin.app(app._id, '/triggers'), { name: 'nightly', type: 'SCHEDULED', function_name: 'missing', config: { schedule: '0 0 * * *' } });
    expect(broken.status).toBe(400);
    expect(broken.body.violations).toMatchObject([{ file: 'triggers/nightly.json', path: 'function_name' }]);
    const created = await admin.request<{ _id: string }>('POST', admin.app(app._id, '/triggers'), { name: 'nightly', type: 'SCHEDULED', function_name: 'recordOrder', config: { schedule: '0 0 * * *' } });
    expect(created.status).toBe(201);
    expect((await admin.request('DELETE', admin.app(app._id, `/triggers/${created.body._id}`))).status).toBe(204);
    expect((await admin.request('GET', admin.app(app._id, `/triggers/${created.body._id}`))).status).toBe(404);
  });

  it('answers the status check realm-cli makes, without a token', async () => {
    const response = await fetch(`${server.url}/api/private/v1.0/version`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ backend: { version: expect.stringMatching(/^\d+\.\d+\.\d+/) as string } });
  });

  it('answers an expired or forged access token with 401 InvalidSession', async () => {
    const key = deriveSigningKey(signingKey, 'admin');
    const claims = JSON.parse(Buffer.from(admin.accessToken.split('.')[1], 'base64url').toString()) as { sub: string };
    const now = Math.floor(Date.now() / 1000);
    const expired = signJwt({ sub: claims.sub, iat: now - 3600, exp: now - 60, typ: 'access' }, key);
    const response = await admin.request<{ error: string; error_code: string }>('GET', `/groups/${admin.groupId}/apps`, undefined, { token: expired });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'invalid session: access token expired', error_code: 'InvalidSession' });
    const forged = signJwt({ sub: claims.sub, iat: now, exp: now + 60, typ: 'access' }, Buffer.alloc(32, 1));
    expect((await admin.request('GET', `/groups/${admin.groupId}/apps`, undefined, { token: forged })).status).toBe(401);
  });
});
