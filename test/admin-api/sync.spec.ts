import { SyncStateStore } from '@tessera/platform';
import { checkPartitionValue } from '@tessera/sync-protocol';
import { makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession, canonicalJson } from './admin-session';

type ErrorBody = { error: string; error_code: string; violations?: { file: string; path: string; rule: string; message: string }[] };
type SyncState = { everEnabled: boolean; enabled: boolean; lastDisabled?: number; resetEpoch: number; clientResetRequiredSince?: number; partition?: { key: string; type: string } };

const permissions = { read: { '%%partition': '%%user.id' }, write: { '%%partition': '%%user.id' } };
const enabledSync = (key: string, type = 'string', extra: Record<string, unknown> = {}) => ({ sync: { type: 'partition', state: 'enabled', database_name: 'app', partition: { key, type, permissions }, ...extra } });

// The sync configuration rules (spec 2.6, 8) and the sync state machine (spec 3) over the admin API.
// Row 5 of section 3 (a document moving between partitions) is runtime behaviour of the sync service.
describe('admin API: sync configuration and its state machine', () => {
  let host: TestHost;
  let admin: AdminSession;

  // In this process, so the test can read the sync state the admin API keeps in the platform database.
  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: 'sync-test-password' } });
    admin = await AdminSession.login(host, 'admin', 'sync-test-password');
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const clusterId = async (appId: string, name = 'mongodb-atlas'): Promise<string> => {
    const services = await admin.request<{ _id: string; name: string }[]>('GET', admin.app(appId, '/services'));
    return services.body.find((service) => service.name === name)!._id;
  };
  const patch = (appId: string, serviceId: string, body: unknown) => admin.request<ErrorBody & Record<string, unknown>>('PATCH', admin.app(appId, `/services/${serviceId}/config`), body);
  const syncState = (appId: string): Promise<SyncState> => host.nest.get(SyncStateStore).get(appId);

  /** An app whose sync was imported enabled with key owner_id (the import path keeps partition sync). */
  const importedSyncApp = async (name: string): Promise<{ appId: string; serviceId: string }> => {
    const app = await admin.createApp(name, { template_id: 'backend' });
    const files = await admin.pull(app._id);
    files.set('sync/config.json', canonicalJson({ ...enabledSync('owner_id').sync, service_name: 'mongodb-atlas' }));
    const pushed = await admin.push(app._id, files);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    return { appId: app._id, serviceId: await clusterId(app._id) };
  };

  it('refuses partition-based sync on an app that never had sync, naming flexible sync (spec 1.6, 9.3)', async () => {
    const app = await admin.createApp('never-synced', { template_id: 'backend' });
    const before = await admin.pull(app._id);
    const response = await patch(app._id, await clusterId(app._id), enabledSync('owner_id'));
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.body.error_code).toBe('PartitionSyncNotAllowed');
    expect(response.body.error).toContain('flexible sync');
    expect(response.body.error).toContain('TESSERA_ALLOW_NEW_PARTITION_SYNC');
    expect(await admin.pull(app._id)).toEqual(before);
  });

  it('keeps partition-based sync on an imported app: disabled -> enabled (row 1)', async () => {
    const { appId, serviceId } = await importedSyncApp('imported-sync');
    const config = await admin.request<{ sync: { state: string; partition: { key: string } } }>('GET', admin.app(appId, `/services/${serviceId}/config`));
    expect(config.body.sync).toMatchObject({ state: 'enabled', partition: { key: 'owner_id', type: 'string' } });
    expect(await syncState(appId)).toMatchObject({ everEnabled: true, enabled: true, resetEpoch: 0, partition: { key: 'owner_id', type: 'string' } });
    const data = await admin.request<{ service_id: string; partition_fields: { key: string; type: string }[] }>('GET', admin.app(appId, `/sync/data?service_id=${serviceId}`));
    expect(data.body).toEqual({ service_id: serviceId, partition_fields: [{ key: 'owner_id', type: 'string' }, { key: 'text', type: 'string' }] });
    expect((await admin.request('GET', admin.app(appId, '/sync/data'))).status).toBe(400);
  });

  it('refuses a change of key or permissions while enabled, and changes nothing (row 2)', async () => {
    const { appId, serviceId } = await importedSyncApp('locked');
    const before = await admin.pull(appId);
    const key = await patch(appId, serviceId, { sync: { partition: { key: 'text', type: 'string', permissions } } });
    expect(key.status).toBe(409);
    expect(key.body.error_code).toBe('SyncRulesLocked');
    expect(key.body.error).toContain('terminate sync');
    expect(key.body.violations).toEqual([{ file: 'sync/config.json', path: 'partition', rule: 'sync.rules.locked', message: expect.any(String) as string }]);
    const perms = await patch(appId, serviceId, { sync: { partition: { key: 'owner_id', type: 'string', permissions: { read: true, write: true } } } });
    expect(perms.status).toBe(409);
    expect(await admin.pull(appId)).toEqual(before);

    // The same refusal through a push of sync/config.json.
    const files = new Map(before);
    files.set('sync/config.json', canonicalJson({ ...enabledSync('text').sync, service_name: 'mongodb-atlas' }));
    const pushed = await admin.push(appId, files);
    expect(pushed.status).toBe(409);
    expect(pushed.body.error_code).toBe('SyncRulesLocked');
    // What is not a rule may change while enabled.
    const offline = await patch(appId, serviceId, { sync: { client_max_offline_days: 12 } });
    expect(offline.status).toBe(200);
    expect(offline.body['sync']).toMatchObject({ client_max_offline_days: 12, state: 'enabled' });
  });

  it('terminates (records last_disabled) and re-enables with a new key, marking every client for reset (rows 3 and 4)', async () => {
    const { appId, serviceId } = await importedSyncApp('cycled');
    const startedAt = Math.floor(Date.now() / 1000);
    const terminated = await patch(appId, serviceId, { sync: { state: 'disabled' } });
    expect(terminated.status).toBe(200);
    const disabled = terminated.body['sync'] as { state: string; last_disabled: number };
    expect(disabled.state).toBe('disabled');
    expect(disabled.last_disabled).toBeGreaterThanOrEqual(startedAt);
    expect(await syncState(appId)).toMatchObject({ enabled: false, lastDisabled: disabled.last_disabled, resetEpoch: 0 });
    expect((await syncState(appId)).clientResetRequiredSince).toBeUndefined();

    const reenabled = await patch(appId, serviceId, enabledSync('text'));
    expect(reenabled.status).toBe(200);
    expect(reenabled.body['sync']).toMatchObject({ state: 'enabled', partition: { key: 'text' } });
    const state = await syncState(appId);
    expect(state).toMatchObject({ enabled: true, resetEpoch: 1, partition: { key: 'text', type: 'string' } });
    expect(state.clientResetRequiredSince).toBeGreaterThanOrEqual(disabled.last_disabled);

    await patch(appId, serviceId, { sync: { state: 'disabled' } });
    expect((await patch(appId, serviceId, enabledSync('owner_id'))).status).toBe(200);
    expect((await syncState(appId)).resetEpoch).toBe(2);
  });

  it('cycles sync on the bootstrapped example app, whose sync predates any recorded state', async () => {
    const apps = await admin.request<{ _id: string; name: string }[]>('GET', `/groups/${admin.groupId}/apps`);
    const todo = apps.body.find((app) => app.name === 'todo')!;
    const serviceId = await clusterId(todo._id);
    expect((await patch(todo._id, serviceId, { sync: { state: 'disabled' } })).status).toBe(200);
    const reenabled = await patch(todo._id, serviceId, enabledSync('owner_id', 'string', { database_name: 'todo' }));
    expect(reenabled.status, JSON.stringify(reenabled.body)).toBe(200);
    expect(await syncState(todo._id)).toMatchObject({ everEnabled: true, enabled: true, resetEpoch: 1, partition: { key: 'owner_id' } });
  });

  it('gives the spec 7 error for a partition value of the wrong type, from the sync state the admin API recorded', async () => {
    const { appId } = await importedSyncApp('bind-check');
    const { partition } = await syncState(appId);
    expect(partition).toEqual({ key: 'owner_id', type: 'string' });
    expect(checkPartitionValue(partition!.type, '"user-1"')).toBeUndefined();
    expect(checkPartitionValue(partition!.type, '{"$oid":"65a000000000000000000001"}')).toEqual({
      errorCode: 'ErrorIllegalStorePath',
      message: 'attempted to bind on illegal partition, expected partition to have type string but found objectId',
    });
  });

  it.each([
    ['String', 'owner_id', 'string'],
    ['ObjectID', '_id', 'objectId'],
    ['Long', 'count', 'long'],
    ['UUID', 'ref', 'uuid'],
  ])('accepts the partition key type %s (spec 8)', async (type, key, bsonType) => {
    const { appId, serviceId } = await importedSyncApp(`type-${type.toLowerCase()}`);
    await patch(appId, serviceId, { sync: { state: 'disabled' } });
    const files = await admin.pull(appId);
    const rulePath = 'services/mongodb-atlas/rules/app.notes.json';
    const rule = JSON.parse(files.get(rulePath)!) as { schema: { properties: Record<string, unknown> } };
    rule.schema.properties[key] = { bsonType };
    files.set(rulePath, canonicalJson(rule));
    expect((await admin.push(appId, files)).status).toBe(204);
    const response = await patch(appId, serviceId, enabledSync(key, type));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  });

  /** Pushes a mutated copy of a synced app and returns the refusal. */
  const refusal = async (name: string, mutate: (files: Map<string, string>) => void): Promise<ErrorBody> => {
    const { appId } = await importedSyncApp(name);
    const before = await admin.pull(appId);
    const files = new Map(before);
    mutate(files);
    const response = await admin.push(appId, files);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await admin.pull(appId)).toEqual(before);
    return response.body as unknown as ErrorBody;
  };
  const where = (body: ErrorBody) => body.violations!.map((violation) => `${violation.file}#${violation.path}#${violation.rule}`);
  const syncFile = (extra: Record<string, unknown>) => canonicalJson({ ...enabledSync('owner_id').sync, service_name: 'mongodb-atlas', ...extra });

  it('refuses a partition key type other than String, ObjectID, Long or UUID', async () => {
    const body = await refusal('bad-type', (files) => files.set('sync/config.json', syncFile({ partition: { key: 'owner_id', type: 'double', permissions } })));
    expect(body.error_code).toBe('InvalidConfiguration');
    expect(where(body)).toContain('sync/config.json#partition.type#sync.partition.type.value');
  });

  it('refuses a partition key missing from a synced schema', async () => {
    const body = await refusal('missing-key', (files) => files.set('sync/config.json', syncFile({ partition: { key: '_partition', type: 'string', permissions } })));
    expect(where(body).some((entry) => entry.startsWith('services/mongodb-atlas/rules/app.notes.json#schema.properties#sync.partition.key.missing'))).toBe(true);
  });

  it('refuses a second synced cluster and a second partition key', async () => {
    const body = await refusal('two-clusters', (files) => {
      files.set('services/second/config.json', canonicalJson({ name: 'second', type: 'mongodb-atlas', config: { clusterName: 'Cluster1', sync: { type: 'partition', state: 'enabled', database_name: 'b', partition: { key: 'other', type: 'string', permissions } } } }));
    });
    const rules = body.violations!.map((violation) => violation.rule);
    expect(rules).toContain('sync.cluster.multiple');
    expect(rules).toContain('sync.partition.key.multiple');
  });

  it('refuses sync on a federated source and on a serverless instance', async () => {
    const federated = await refusal('federated', (files) => {
      files.set('services/lake/config.json', canonicalJson({ name: 'lake', type: 'datalake', config: { dataLakeName: 'Lake0' } }));
      files.set('sync/config.json', syncFile({ service_name: 'lake' }));
    });
    expect(where(federated)).toContain('sync/config.json#service_name#datasource.federated.sync');
    const serverless = await refusal('serverless', (files) => {
      files.set('services/mongodb-atlas/config.json', canonicalJson({ ...(JSON.parse(files.get('services/mongodb-atlas/config.json')!) as object), config: { clusterName: 'Serverless0', clusterType: 'serverless' } }));
    });
    expect(where(serverless)).toContain('services/mongodb-atlas/config.json#config.clusterType#sync.datasource.serverless');
  });

  it('refuses a cluster older than 4.4.0 where its version is known', async () => {
    const body = await refusal('old-cluster', (files) => {
      files.set('services/mongodb-atlas/config.json', canonicalJson({ ...(JSON.parse(files.get('services/mongodb-atlas/config.json')!) as object), config: { clusterName: 'Cluster0', clusterVersion: '4.2.21' } }));
    });
    expect(where(body)).toContain('services/mongodb-atlas/config.json#config.clusterVersion#sync.cluster.version');
  });

  it('enforces the name limits of spec 8: services, triggers and service rules 64, roles and filters 100', async () => {
    const long = (n: number) => 'n'.repeat(n);
    const body = await refusal('names', (files) => {
      files.set(`services/${long(65)}/config.json`, canonicalJson({ name: long(65), type: 'http', config: {} }));
      files.set('services/web/config.json', canonicalJson({ name: 'web', type: 'http', config: {} }));
      files.set('services/web/rules/r.json', canonicalJson({ name: `${long(64)}x`, actions: ['get'], when: {} }));
      files.set('triggers/t.json', canonicalJson({ name: long(65), type: 'SCHEDULED', function_name: 'hello', config: { schedule: '* * * * *' } }));
      const rulePath = 'services/mongodb-atlas/rules/app.notes.json';
      const rule = JSON.parse(files.get(rulePath)!) as { roles: { name: string }[]; filters: unknown[] };
      rule.roles[0].name = long(101);
      rule.filters = [{ name: long(101), apply_when: {}, query: {} }];
      files.set(rulePath, canonicalJson(rule));
    });
    const paths = where(body);
    expect(paths).toEqual(
      expect.arrayContaining([
        `services/${long(65)}/config.json#name#service.name.length`,
        'services/web/rules/r.json#name#service_rule.name.length',
        'triggers/t.json#name#trigger.name.length',
      ]),
    );
    expect(paths.some((entry) => entry.startsWith('services/mongodb-atlas/rules/app.notes.json#roles[0].name#'))).toBe(true);
    expect(paths.some((entry) => entry.startsWith('services/mongodb-atlas/rules/app.notes.json#filters[0].name#'))).toBe(true);
  });

  it('accepts names exactly at the limits: 64 for services and triggers, 100 for roles', async () => {
    const { appId } = await importedSyncApp('at-limits');
    const files = await admin.pull(appId);
    files.set(`services/${'s'.repeat(64)}/config.json`, canonicalJson({ name: 's'.repeat(64), type: 'http', config: {} }));
    files.set('triggers/t.json', canonicalJson({ name: 't'.repeat(64), type: 'SCHEDULED', function_name: 'hello', config: { schedule: '* * * * *' } }));
    const response = await admin.push(appId, files);
    expect(response.status, JSON.stringify(response.body)).toBe(204);
  });

  it('generates schemas from the synced types in development mode, into database_name', async () => {
    const { appId, serviceId } = await importedSyncApp('dev-mode');
    const types = { types: [{ name: 'Task', primary_key: '_id', properties: { _id: { type: 'objectId' }, title: { type: 'string' }, done: { type: 'bool', optional: true } } }] };
    const off = await admin.request<ErrorBody>('POST', admin.app(appId, '/sync/development_schemas'), types);
    expect(off.status).toBe(400);
    expect(off.body.error).toContain('development mode is off');
    expect((await patch(appId, serviceId, { sync: { development_mode_enabled: true, database_name: 'devdb' } })).status).toBe(200);
    const generated = await admin.request('POST', admin.app(appId, '/sync/development_schemas'), types);
    expect(generated.body).toEqual({ created: ['Task'], extended: [] });
    const rule = JSON.parse((await admin.pull(appId)).get('services/mongodb-atlas/rules/devdb.Task.json')!) as { schema: unknown };
    expect(rule.schema).toEqual({ title: 'Task', bsonType: 'object', required: ['_id', 'title'], properties: { _id: { bsonType: 'objectId' }, title: { bsonType: 'string' }, done: { bsonType: 'bool' }, owner_id: { bsonType: 'string' } } });
  });

  it('defaults client_max_offline_days to 30 and recovery mode on when sync is enabled through the API', async () => {
    const { appId, serviceId } = await importedSyncApp('defaults');
    await patch(appId, serviceId, { sync: { state: 'disabled' } });
    const files = await admin.pull(appId);
    const sync = JSON.parse(files.get('sync/config.json')!) as Record<string, unknown>;
    delete sync['client_max_offline_days'];
    delete sync['is_recovery_mode_disabled'];
    files.set('sync/config.json', canonicalJson(sync));
    expect((await admin.push(appId, files)).status).toBe(204);
    const enabled = await patch(appId, serviceId, { sync: { state: 'enabled' } });
    expect(enabled.body['sync']).toMatchObject({ client_max_offline_days: 30, is_recovery_mode_disabled: false });
  });
});

describe('admin API: a server that allows new partition-based sync', () => {
  const dataDir = makeTempDir('tessera-sync-allowed-');
  let server: ServerProcess;
  let admin: AdminSession;

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'sync-test-password', TESSERA_ALLOW_NEW_PARTITION_SYNC: 'true' } });
    admin = await AdminSession.login(server, 'admin', 'sync-test-password');
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  it('enables partition-based sync on an app that never had it (TESSERA_ALLOW_NEW_PARTITION_SYNC)', async () => {
    const app = await admin.createApp('fresh', { template_id: 'backend' });
    const services = await admin.request<{ _id: string; name: string }[]>('GET', admin.app(app._id, '/services'));
    const response = await admin.request<{ sync: { state: string } }>('PATCH', admin.app(app._id, `/services/${services.body[0]._id}/config`), enabledSync('owner_id'));
    expect(response.status).toBe(200);
    expect(response.body.sync.state).toBe('enabled');
  });
});
