import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { snapshot, tessera } from './tessera-cli';

// Each step is a CLI subprocess: generous per-test time for a loaded machine.
const CLI_TIMEOUT = 180_000;

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** A realm-cli pull (config_version 20210101) of an app App Services deployed for years, unchanged. */
function realmCliExport(): Record<string, string> {
  const orders = 'data_sources/mongodb-atlas/shop/orders';
  return {
    'realm_config.json': json({ app_id: 'shop-abcde', config_version: 20210101, name: 'shop', location: 'US-VA', deployment_model: 'GLOBAL' }),
    'auth/providers.json': json({ 'anon-user': { name: 'anon-user', type: 'anon-user', disabled: false } }),
    'data_sources/mongodb-atlas/config.json': json({ name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0', readPreference: 'primary', wireProtocolEnabled: false }, version: 1 }),
    // No root bsonType: App Services treated the root as an object.
    [`${orders}/schema.json`]: json({ title: 'Order', required: ['_id', 'total'], properties: { _id: { bsonType: 'objectId' }, total: { bsonType: 'double' }, customer_id: { bsonType: 'objectId' } } }),
    [`${orders}/rules.json`]: json({
      database: 'shop',
      collection: 'orders',
      roles: [{ name: 'owner', apply_when: { '%%user.id': { $exists: true } }, read: true, write: { customer_id: { '%stringToOid': '%%user.id' } }, insert: true, delete: false, search: true, fields: {}, additional_fields: {} }],
      filters: [
        { name: 'summary', apply_when: { '%%user.data.role': 'clerk' }, query: {}, projection: { total: 1 } },
        { name: 'private', apply_when: { '%%user.data.role': 'guest' }, query: {}, projection: { customer_id: 0 } },
      ],
    }),
    [`${orders}/relationships.json`]: json({}),
    'data_sources/mongodb-atlas/shop/customers/schema.json': json({ title: 'Customer', properties: { _id: { bsonType: 'objectId' }, name: { bsonType: 'string' } } }),
    'data_sources/mongodb-atlas/shop/customers/rules.json': json({ database: 'shop', collection: 'customers', roles: [{ name: 'all', apply_when: {}, read: true, write: false, insert: false, delete: false, search: true }] }),
    'functions/config.json': json([{ name: 'report', private: false }]),
    'functions/report.js': 'exports = function () {\n  return { findings: [] };\n};\n',
    'graphql/config.json': json({ use_natural_pluralization: true }),
    'graphql/custom_resolvers/query_incidentReport.json': json({
      on_type: 'Query',
      field_name: 'incidentReport',
      function_name: 'report',
      input_type_format: '',
      payload_type: {
        title: 'IncidentReportPayload',
        bsonType: 'object',
        properties: { findings: { bsonType: 'array', items: { bsonType: 'object', properties: { 'alleged deployer of AI system': { bsonType: 'object', properties: { name: { bsonType: 'string' } } } } } } },
      },
      payload_type_format: 'custom',
    }),
    'sync/config.json': json({ development_mode_enabled: false }),
  };
}

// The gate as `tessera push` meets it (issue 14, items 7, 14 and 17): rules that cannot compile and names
// that would escape are refused with exit 5 naming file, path and rule; what App Services deployed imports.
describe('tessera push through the validation gate', () => {
  const dataDir = makeTempDir('tessera-gate-data-');
  const work = makeTempDir('tessera-gate-work-');
  let server: ServerProcess;
  let env: Record<string, string>;
  let appId: string;

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'gate-test-password', TESSERA_EXAMPLE_APP: '' } });
    env = { TESSERA_CONFIG_DIR: join(work.path, 'config') };
    const login = await tessera(['login', '--url', server.url, '--username', 'admin', '--password', 'gate-test-password'], env);
    expect(login.code, login.stderr).toBe(0);
    const created = await tessera(['apps', 'create', '--name', 'shop', '--local', join(work.path, 'created'), '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    appId = (JSON.parse(created.stdout) as { client_app_id: string }).client_app_id;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
    work.remove();
  });

  const pushDir = async (name: string, files: Record<string, string>) => {
    const dir = join(work.path, name);
    writeTree(dir, files);
    return tessera(['push', '--remote', appId, '--local', dir, '--yes'], env);
  };

  const deployed = async (): Promise<Record<string, string>> => {
    const dir = join(work.path, `pulled-${Math.random().toString(36).slice(2)}`);
    const pull = await tessera(['pull', '--remote', appId, '--local', dir], env);
    expect(pull.code, pull.stderr).toBe(0);
    return snapshot(dir);
  };

  it('pushes a realm-cli export whose collection schemas have no root bsonType, and generates its payload types as App Services did', async () => {
    const push = await pushDir('export', realmCliExport());
    expect(push.code, push.stderr).toBe(0);
    const admin = await AdminSession.login(server, 'admin', 'gate-test-password');
    const app = (await admin.request<{ _id: string; client_app_id: string }[]>('GET', `/groups/${admin.groupId}/apps`)).body.find((a) => a.client_app_id === appId)!;
    const sdl = await fetch(`${admin.baseUrl}${admin.app(app._id, '/graphql/schema')}`, { headers: { authorization: `Bearer ${admin.accessToken}` } });
    expect(sdl.status).toBe(200);
    const text = await sdl.text();
    expect(text).toContain('type Order {');
    expect(text).toContain('incidentReport: IncidentReportPayload');
    expect(text).toContain('type IncidentReportPayloadFinding {\n  AllegedDeployerOfAISystem: IncidentReportPayloadFindingAllegedDeployerOfAISystem\n}');
    expect(text).toContain('type IncidentReportPayloadFindingAllegedDeployerOfAISystem {');
    expect(text).not.toContain('scalar Decimal');
  }, CLI_TIMEOUT);

  it.each([
    ['an unknown operator in a role', (r: Record<string, unknown>) => ((r['roles'] as Record<string, unknown>[])[0]['write'] = { customer_id: { $foo: 1 } }), 'roles[0].write.customer_id.$foo', 'rule.expression.invalid'],
    ['an unknown expansion in apply_when', (r: Record<string, unknown>) => ((r['roles'] as Record<string, unknown>[])[0]['apply_when'] = { '%%usr.id': { $exists: true } }), 'roles[0].apply_when.%%usr.id', 'rule.expression.invalid'],
    ['a role member that does not exist', (r: Record<string, unknown>) => ((r['roles'] as Record<string, unknown>[])[0]['raed'] = true), 'roles[0].raed', 'role.field.unknown'],
    ['a document expansion in a filter query', (r: Record<string, unknown>) => ((r['filters'] as Record<string, unknown>[])[0]['query'] = { customer_id: '%%root._id' }), 'filters[0].query.customer_id', 'rule.expression.invalid'],
  ])('refuses a rule file with %s: exit 5 naming file, path and rule', async (name, change, path, rule) => {
    // One case also proves that nothing was deployed (each pull is a CLI run: keep the suite short).
    const checkUnchanged = name === 'an unknown operator in a role';
    const before = checkUnchanged ? await deployed() : undefined;
    const files = realmCliExport();
    const rulesPath = 'data_sources/mongodb-atlas/shop/orders/rules.json';
    const rules = JSON.parse(files[rulesPath]) as Record<string, unknown>;
    change(rules);
    files[rulesPath] = json(rules);
    const push = await pushDir(`bad-rule-${rule}-${path.length}`, files);
    expect(push.code, push.stdout).toBe(5);
    expect(push.stderr).toContain(`${rulesPath} at ${path}:`);
    expect(push.stderr).toContain(`(${rule})`);
    if (before) expect(await deployed()).toEqual(before);
  }, CLI_TIMEOUT);

  it('refuses a Sync permission that does not compile, in the current layout too', async () => {
    const dir = join(work.path, 'current');
    const pull = await tessera(['pull', '--remote', appId, '--local', dir], env);
    expect(pull.code, pull.stderr).toBe(0);
    writeTree(dir, {
      'sync/config.json': json({ type: 'partition', state: 'disabled', service_name: 'mongodb-atlas', database_name: 'shop', partition: { key: 'total', type: 'string', permissions: { read: true, write: { '%%partition': { $like: 'x' } } } } }),
    });
    const push = await tessera(['push', '--remote', appId, '--local', dir, '--yes', '--json'], env);
    expect(push.code).toBe(5);
    const error = JSON.parse(push.stderr) as { violations: { file: string; path: string; rule: string }[] };
    expect(error.violations).toEqual(expect.arrayContaining([{ file: 'sync/config.json', path: 'partition.permissions.write.%%partition.$like', rule: 'rule.expression.invalid', message: expect.stringContaining('$like') as unknown }]));
  }, CLI_TIMEOUT);

  it('refuses a function named ../../evil and a function that does not compile', async () => {
    const files = realmCliExport();
    files['functions/config.json'] = json([{ name: 'report' }, { name: '../../evil' }, { name: 'broken' }]);
    files['functions/broken.js'] = 'exports = function () {\n  return {;\n};\n';
    const push = await pushDir('bad-functions', files);
    expect(push.code).toBe(5);
    expect(push.stderr).toContain('(function.name.path)');
    expect(push.stderr).toMatch(/functions\/broken\.js: function "broken" does not compile: .*line 2.*\(function\.source\.syntax\)/);
  }, CLI_TIMEOUT);
});
