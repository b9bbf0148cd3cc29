import { createHmac } from 'node:crypto';
import { ObjectId } from 'bson';
import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession } from './admin-session';

type Hook = { _id: string; name: string; function_source: string; respond_result: boolean; options: { secret?: string; secretAsQueryParam: boolean; validationMethod: string } };
type ErrorBody = { error: string; error_code: string };

const PASSWORD = 'webhooks-schemas-password';
const SECRET = 'hook-secret';
const SOURCE = 'exports = function (payload) { return { got: payload.query.x === undefined ? null : payload.query.x }; };';

// Incoming webhooks, collection schemas and data-source commands through the admin API v3, checked in the
// app's files (pull) and in behaviour (the webhook served by the client API, documents of the cluster).
describe('admin API: incoming webhooks, schemas and service commands', () => {
  let host: TestHost;
  let admin: AdminSession;
  let app: { _id: string; client_app_id: string };
  let hooks: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: PASSWORD } });
    admin = await AdminSession.login(host, 'admin', PASSWORD);
    app = await admin.createApp('hooks', { data_source: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } } });
    const service = await admin.request('POST', admin.app(app._id, '/services'), { name: 'github', type: 'http', config: {} });
    expect(service.status, JSON.stringify(service.body)).toBe(201);
    hooks = admin.app(app._id, '/services/github/incoming_webhooks');
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const served = (name: string, query = '', init: RequestInit = { method: 'POST' }) => fetch(`${host.url}/api/client/v2.0/app/${app.client_app_id}/service/github/incoming_webhook/${name}${query}`, init);

  it('creates a webhook checking its secret as a query parameter, serves it, reads it back and shows it in the files', async () => {
    const created = await admin.request<Hook>('POST', hooks, { name: 'onPush', function_source: SOURCE, respond_result: true, options: { secret: SECRET, secretAsQueryParam: true } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ name: 'onPush', function_source: SOURCE, respond_result: true, options: { secret: SECRET, secretAsQueryParam: true, validationMethod: 'SECRET_AS_QUERY_PARAM' } });
    expect(created.body._id).toMatch(/^[0-9a-f]{24}$/);

    const ok = await served('onPush', `?secret=${SECRET}&x=1`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ got: '1' });
    for (const query of ['', '?secret=guess']) {
      const refused = await served('onPush', query);
      expect(refused.status, query).toBe(401);
      expect(await refused.json()).toMatchObject({ error_code: 'IncomingWebhookAuthFailed' });
    }

    const byId = await admin.request<Hook>('GET', `${hooks}/${created.body._id}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(created.body);
    const listed = await admin.request<Hook[]>('GET', hooks);
    expect(listed.body).toEqual([created.body]);
    const files = await admin.pull(app._id);
    const config = [...files].find(([path]) => path.endsWith('incoming_webhooks/onPush/config.json'));
    expect(JSON.parse(config![1])).toMatchObject({ name: 'onPush', options: { validationMethod: 'SECRET_AS_QUERY_PARAM', secret: SECRET } });
  });

  it('updates a webhook to a payload signature (secretAsQueryParam false), renames it and deletes it', async () => {
    const [hook] = (await admin.request<Hook[]>('GET', hooks)).body;
    const updated = await admin.request<Hook>('PUT', `${hooks}/${hook._id}`, { name: 'onSigned', function_source: SOURCE, respond_result: true, options: { secret: SECRET, secretAsQueryParam: false } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({ _id: hook._id, name: 'onSigned', options: { secretAsQueryParam: false, validationMethod: 'VERIFY_PAYLOAD' } });
    expect((await admin.request<Hook>('GET', `${hooks}/${hook._id}`)).body).toEqual(updated.body);

    const body = '{"event":"push"}';
    const signature = createHmac('sha256', SECRET).update(body).digest('hex');
    expect((await served('onSigned', '', { method: 'POST', headers: { 'x-hook-signature': `sha256=${signature}` }, body })).status).toBe(200);
    expect((await served('onSigned', `?secret=${SECRET}`, { method: 'POST', body })).status).toBe(401);
    expect((await served('onPush', `?secret=${SECRET}`)).status).toBe(404);

    expect((await admin.request('DELETE', `${hooks}/${hook._id}`)).status).toBe(204);
    expect((await admin.request<ErrorBody>('GET', `${hooks}/${hook._id}`)).body).toMatchObject({ error_code: 'IncomingWebhookNotFound' });
    expect((await served('onSigned', '', { method: 'POST', headers: { 'x-hook-signature': `sha256=${signature}` }, body })).status).toBe(404);
    expect([...(await admin.pull(app._id)).keys()].some((path) => path.includes('incoming_webhooks'))).toBe(false);
  });

  it('refuses bad webhook bodies, duplicates, unknown ids, data sources, other groups and no token', async () => {
    const good = { name: 'ok', function_source: SOURCE, respond_result: true };
    for (const bad of [undefined, [], { ...good, name: '' }, { ...good, function_source: 1 }, { ...good, respond_result: 'yes' }, { ...good, options: { secretAsQueryParam: 'true' } }, { ...good, options: { secretAsQueryParam: true } }, { ...good, options: { httpMethod: 'FETCH' } }]) {
      const refused = await admin.request<ErrorBody>('POST', hooks, bad);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.body.error_code).toBe('InvalidParameter');
    }
    const broken = await admin.request<ErrorBody>('POST', hooks, { ...good, function_source: 'exports = function ( {' });
    expect(broken.status).toBe(400);
    expect(broken.body.error_code).toBe('InvalidConfiguration');
    expect((await admin.request('POST', hooks, good)).status).toBe(201);
    expect((await admin.request<ErrorBody>('POST', hooks, good)).status).toBe(409);
    expect((await admin.request<ErrorBody>('PUT', `${hooks}/000000000000000000000000`, good)).status).toBe(404);
    expect((await admin.request<ErrorBody>('DELETE', `${hooks}/000000000000000000000000`)).status).toBe(404);
    const onCluster = await admin.request<ErrorBody>('POST', admin.app(app._id, '/services/mongodb-atlas/incoming_webhooks'), { ...good, name: 'x' });
    expect(onCluster.status).toBe(400);
    expect((await admin.request<ErrorBody>('GET', admin.app(app._id, '/services/nope/incoming_webhooks'))).body.error_code).toBe('ServiceNotFound');
    const otherGroup = await admin.request<ErrorBody>('GET', `/groups/000000000000000000000000/apps/${app._id}/services/github/incoming_webhooks`);
    expect([403, 404]).toContain(otherGroup.status);
    expect((await admin.request('GET', hooks, undefined, { token: 'not-a-token' })).status).toBe(401);
  });

  it('creates, reads, replaces and deletes a collection schema kept in the collection rule', async () => {
    const schemas = admin.app(app._id, '/schemas');
    const schema = { title: 'item', bsonType: 'object', required: ['_id', 'name'], properties: { _id: { bsonType: 'objectId' }, name: { bsonType: 'string' } } };
    const metadata = { data_source: 'mongodb-atlas', database: 'shop', collection: 'items' };
    const created = await admin.request<{ _id: string; metadata: object }>('POST', schemas, { metadata, schema });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.metadata).toEqual(metadata);
    expect((await admin.request('GET', schemas)).body).toEqual([{ _id: created.body._id, metadata }]);
    expect((await admin.request('GET', `${schemas}/${created.body._id}`)).body).toEqual({ _id: created.body._id, metadata, schema, relationships: {} });
    const rule = (await admin.pull(app._id)).get('services/mongodb-atlas/rules/shop.items.json');
    expect(JSON.parse(rule!)).toMatchObject({ database: 'shop', collection: 'items', schema });

    const replaced = { ...schema, properties: { ...schema.properties, price: { bsonType: 'double' } } };
    expect((await admin.request('PUT', `${schemas}/${created.body._id}`, { metadata, schema: replaced })).status).toBe(204);
    expect((await admin.request<{ schema: object }>('GET', `${schemas}/${created.body._id}`)).body.schema).toEqual(replaced);
    // The id stays the same after every deployment.
    expect((await admin.request<{ _id: string }[]>('GET', schemas)).body[0]._id).toBe(created.body._id);

    expect((await admin.request<ErrorBody>('POST', schemas, { metadata, schema })).status).toBe(409);
    for (const bad of [{ schema }, { metadata, schema: 'x' }, { metadata: { ...metadata, database: 1 }, schema }, []]) {
      expect((await admin.request('POST', schemas, bad)).status, JSON.stringify(bad)).toBe(400);
    }
    expect((await admin.request<ErrorBody>('POST', schemas, { metadata: { ...metadata, data_source: 'nope' }, schema })).status).toBe(404);
    expect((await admin.request('POST', schemas, { metadata: { ...metadata, data_source: 'github' }, schema })).status).toBe(400);
    expect((await admin.request('PUT', `${schemas}/${created.body._id}`, { metadata: { ...metadata, collection: 'other' }, schema })).status).toBe(400);

    expect((await admin.request('DELETE', `${schemas}/${created.body._id}`)).status).toBe(204);
    expect((await admin.request('GET', schemas)).body).toEqual([]);
    expect((await admin.request<ErrorBody>('GET', `${schemas}/${created.body._id}`)).body.error_code).toBe('SchemaNotFound');
    expect((await admin.request('DELETE', `${schemas}/${created.body._id}`)).status).toBe(404);
    expect((await admin.request('GET', `/groups/000000000000000000000000/apps/${app._id}/schemas`)).status).not.toBe(200);
  });

  it('generates a schema from sampled documents and validates documents against one', async () => {
    const ids = [new ObjectId(), new ObjectId(), new ObjectId()];
    await host.dataSources.forCluster('Cluster0').db('shop').collection('orders').insertMany([
      { _id: ids[0], name: 'a', total: 2.5, tags: ['x'], placed: new Date() },
      { _id: ids[1], name: 'b', total: 3.5, tags: [], placed: new Date() },
      { _id: ids[2], name: 7, total: 1.5, placed: new Date() },
    ]);
    const commands = admin.app(app._id, '/services/mongodb-atlas/commands');
    const generated = await admin.request<{ schema: Record<string, unknown> }>('POST', `${commands}/generate_schema`, { database_name: 'shop', collection_name: 'orders', limit: 2 });
    expect(generated.status, JSON.stringify(generated.body)).toBe(200);
    expect(generated.body.schema).toEqual({
      title: 'orders',
      bsonType: 'object',
      required: ['_id', 'name', 'total', 'tags', 'placed'],
      properties: { _id: { bsonType: 'objectId' }, name: { bsonType: 'string' }, total: { bsonType: 'double' }, tags: { bsonType: 'array', items: { bsonType: 'string' } }, placed: { bsonType: 'date' } },
    });

    const validated = await admin.request<{ errors: { error_code: string; field: string; error_count: number; failed_ids: string[] }[]; total_processed_count: number; total_error_count: number }>('POST', `${commands}/validate_documents`, {
      database_name: 'shop',
      collection_name: 'orders',
      from_schema: generated.body.schema,
    });
    expect(validated.status, JSON.stringify(validated.body)).toBe(200);
    expect(validated.body.total_processed_count).toBe(3);
    expect(validated.body.total_error_count).toBe(1);
    expect(validated.body.errors.map(({ error_code, field, error_count }) => `${error_code} ${field} ${error_count}`).sort()).toEqual(['invalid_type (root).name 1', 'required (root).tags 1']);
    expect(validated.body.errors[0].failed_ids[0]).toContain(ids[2].toHexString());
    const narrowed = await admin.request<{ total_processed_count: number; total_error_count: number }>('POST', `${commands}/validate_documents`, { database_name: 'shop', collection_name: 'orders', from_schema: generated.body.schema, query: { name: 'a' } });
    expect(narrowed.body).toMatchObject({ total_processed_count: 1, total_error_count: 0 });

    for (const [command, bad] of [['generate_schema', { database_name: 'shop', collection_name: 'orders' }], ['generate_schema', { database_name: 'shop', collection_name: 'orders', limit: 'all' }], ['validate_documents', { database_name: 'shop', collection_name: 'orders' }], ['validate_documents', { database_name: 'shop', collection_name: 'orders', from_schema: {}, limit: -1 }], ['generate_schema', { database_name: 'shop', collection_name: 'orders', limit: 1e9 }], ['validate_documents', { database_name: 'shop', collection_name: 'orders', from_schema: {}, limit: 1e9 }]] as const) {
      expect((await admin.request<ErrorBody>('POST', `${commands}/${command}`, bad)).status, JSON.stringify(bad)).toBe(400);
    }
    expect((await admin.request<ErrorBody>('POST', `${commands}/dropDatabase`, {})).body.error_code).toBe('CommandNotFound');
    expect((await admin.request('POST', admin.app(app._id, '/services/github/commands/generate_schema'), { database_name: 'shop', collection_name: 'orders', limit: 1 })).status).toBe(400);
    expect((await admin.request('POST', `${commands}/generate_schema`, { database_name: 'shop', collection_name: 'orders', limit: 1 }, { token: 'nope' })).status).toBe(401);
    expect((await admin.request('POST', `/groups/000000000000000000000000/apps/${app._id}/services/mongodb-atlas/commands/generate_schema`, { database_name: 'shop', collection_name: 'orders', limit: 1 })).status).not.toBe(200);
  });
});
