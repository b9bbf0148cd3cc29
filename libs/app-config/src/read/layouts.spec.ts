import { join } from 'node:path';
import { contentTypeFor, loadApp, readAppFiles, stableId, writeAppFiles, type AppFiles } from '../index';
import { editJson, jsonOf, put, readDirSync, text } from '../__fixtures__/app-files';

const FIXTURES = join(__dirname, '..', '__fixtures__');
const legacyFiles = () => readDirSync(join(FIXTURES, 'legacy-app'));
const exportFiles = () => readDirSync(join(FIXTURES, 'export-20210101'));
const issues = (files: AppFiles) => loadApp(files).violations.map(({ file, path, rule }) => `${file}|${path}|${rule}`);

describe('the legacy layout (data_sources/)', () => {
  it('reads with zero violations', () => {
    const { layout, violations } = loadApp(legacyFiles());
    expect(layout).toBe('legacy');
    expect(violations).toEqual([]);
  });

  it('converts to the current layout: one rule file per collection holding rules, schema and relationships', () => {
    const source = legacyFiles();
    const out = writeAppFiles(readAppFiles(source).app);
    expect([...out.keys()]).toEqual([
      'auth_providers/api-key.json',
      'config.json',
      'functions/hello/config.json',
      'functions/hello/source.js',
      'services/http/config.json',
      'services/http/incoming_webhooks/ping/config.json',
      'services/http/incoming_webhooks/ping/source.js',
      'services/lake/config.json',
      'services/mongodb-atlas/config.json',
      'services/mongodb-atlas/default_rule.json',
      'services/mongodb-atlas/rules/shop.customers.json',
      'services/mongodb-atlas/rules/shop.orders.json',
      'triggers/orderPlaced.json',
      'values/currency.json',
    ]);
    const legacy = (p: string) => jsonOf(source, `data_sources/mongodb-atlas/shop/${p}`) as Record<string, unknown>;
    expect(jsonOf(out, 'services/mongodb-atlas/rules/shop.orders.json')).toEqual({
      ...legacy('orders/rules.json'),
      schema: legacy('orders/schema.json'),
      relationships: legacy('orders/relationships.json'),
    });
    expect(jsonOf(out, 'services/mongodb-atlas/rules/shop.customers.json')).toEqual({
      id: stableId('legacy-shop', 'rule', 'mongodb-atlas/shop.customers'),
      database: 'shop',
      collection: 'customers',
      schema: legacy('customers/schema.json'),
    });
    expect(jsonOf(out, 'services/mongodb-atlas/config.json')).toEqual(jsonOf(source, 'data_sources/mongodb-atlas/config.json'));
    expect(jsonOf(out, 'services/mongodb-atlas/default_rule.json')).toEqual(jsonOf(source, 'data_sources/mongodb-atlas/default_rule.json'));
    expect(jsonOf(out, 'services/lake/config.json')).toEqual(jsonOf(source, 'data_sources/lake/config.json'));
    expect(jsonOf(out, 'config.json')).toEqual({ ...(jsonOf(source, 'config.json') as object), config_version: 20210101 });
    expect(text(out, 'functions/hello/source.js')).toBe(text(source, 'functions/hello/source.js'));
  });

  it('reads its own conversion as the current layout and writes it back byte-identically', () => {
    const converted = writeAppFiles(readAppFiles(legacyFiles()).app);
    const again = loadApp(converted);
    expect(again.layout).toBe('current');
    expect(again.violations).toEqual([]);
    const rewritten = writeAppFiles(again.app);
    expect([...rewritten.keys()]).toEqual([...converted.keys()]);
    for (const [path, bytes] of converted) expect(Buffer.compare(rewritten.get(path)!, bytes), path).toBe(0);
  });

  it('names the legacy file a violation is in: schema.json, rules.json or relationships.json', () => {
    const files = legacyFiles();
    const dir = 'data_sources/mongodb-atlas/shop/orders';
    editJson(files, `${dir}/schema.json`, (d) => (d.properties.total.bsonType = 'money'));
    editJson(files, `${dir}/rules.json`, (d) => (d.roles[0].name = ''));
    editJson(files, `${dir}/relationships.json`, (d) => (d.customer_id.ref = 'customers'));
    editJson(files, 'data_sources/lake/config.json', (d) => (d.config.readPreference = 'nearest'));
    expect(issues(files)).toEqual([
      'data_sources/lake/config.json|config.readPreference|datasource.federated.read_preference',
      `${dir}/relationships.json|customer_id.ref|relationship.ref.format`,
      `${dir}/rules.json|roles[0].name|role.name.required`,
      `${dir}/schema.json|properties.total.bsonType|schema.bsonType.unknown`,
    ]);
  });
});

describe('an App Services export (config_version 20210101)', () => {
  it('reads with zero violations', () => {
    const { layout, violations } = loadApp(exportFiles());
    expect(layout).toBe('export-20210101');
    expect(violations).toEqual([]);
  });

  it('maps realm_config.json and auth/custom_user_data.json to the app settings', () => {
    const { app } = readAppFiles(exportFiles());
    const atlas = app.services.find((s) => s.config.name === 'mongodb-atlas');
    expect(app.settings).toEqual({
      app_id: 'shop-xyzzy',
      name: 'shop',
      location: 'US-VA',
      deployment_model: 'GLOBAL',
      environment: 'production',
      security: { allowed_request_origins: ['https://shop.example.com'] },
      custom_user_data_config: {
        enabled: true,
        mongo_service_id: atlas?.config.id,
        database_name: 'shop',
        collection_name: 'customers',
        user_id_field: 'user_id',
        on_user_creation_function_name: 'onUserCreated',
      },
    });
    expect(atlas?.config.id).toBe(stableId('shop', 'service', 'mongodb-atlas'));
  });

  it('imports providers, functions with their sources, rules with schemas, triggers and services', () => {
    const files = exportFiles();
    const { app } = readAppFiles(files);
    expect(app.authProviders.map((p) => p.name)).toEqual(['anon-user', 'custom-token', 'local-userpass']);
    expect(app.authProviders[1].secret_config).toEqual({ signingKeys: ['jwtSigningKey'] });
    expect(app.functions.map((f) => [f.config.name, f.source === text(files, `functions/${f.config.name}.js`)])).toEqual([
      ['checkout', true],
      ['onUserCreated', true],
      ['utils/format', true],
    ]);
    const atlas = app.services.find((s) => s.config.name === 'mongodb-atlas')!;
    expect(atlas.collectionRules.map((r) => [r.database, r.collection, r.roles?.[0].name, r.schema?.title])).toEqual([
      ['shop', 'customers', 'self', 'Customer'],
      ['shop', 'orders', 'owner', 'Order'],
    ]);
    expect(atlas.config.config?.sync?.partition?.key).toBe('store_id');
    expect(app.services.map((s) => s.config.name)).toEqual(['mongodb-atlas', 'slack']);
    expect(app.services[1].webhooks[0].config.options?.validationMethod).toBe('VERIFY_PAYLOAD');
    expect(app.triggers.map((t) => t.name)).toEqual(['nightlyReport', 'onNewOrder']);
    expect(app.graphql?.customResolvers[0]).toMatchObject({ on_type: 'Query', field_name: 'totalSales' });
    expect(app.sync).toEqual({ development_mode_enabled: false });
  });

  it('gives hosted files without a Content-Type one from their extension', () => {
    const out = writeAppFiles(readAppFiles(exportFiles()).app);
    expect(contentTypeFor('/app.js')).toMatch(/javascript/);
    expect(jsonOf(out, 'hosting/metadata.json')).toEqual([
      { path: '/app.js', attrs: [{ name: 'Content-Type', value: contentTypeFor('/app.js') }] },
      { path: '/css/site.css', attrs: [{ name: 'Content-Type', value: 'text/css' }] },
      {
        path: '/index.html',
        attrs: [
          { name: 'Content-Type', value: 'text/html' },
          { name: 'Cache-Control', value: 'no-cache' },
        ],
      },
    ]);
    expect(text(out, 'hosting/files/css/site.css')).toBe('body { margin: 0; }\n');
  });

  it('loses nothing: every key and every value of every file reappears in the current layout', () => {
    const source = exportFiles();
    const out = writeAppFiles(readAppFiles(source).app);
    // Files it does not model are kept byte for byte.
    for (const path of ['functions/package.json', 'http_endpoints/config.json', 'http_endpoints/data_api_config.json', 'environments/production.json', 'log_forwarders/toSplunk.json']) {
      expect(Buffer.compare(out.get(path)!, source.get(path)!), path).toBe(0);
    }
    const collect = (files: AppFiles) => {
      const keys = new Set<string>();
      const values = new Set<string>();
      const walk = (v: unknown): void => {
        if (Array.isArray(v)) v.forEach(walk);
        else if (v && typeof v === 'object') {
          for (const [k, x] of Object.entries(v)) {
            keys.add(k);
            walk(x);
          }
        }
        else values.add(JSON.stringify(v));
      };
      for (const [path, bytes] of files) {
        if (path.endsWith('.json')) walk(JSON.parse(Buffer.from(bytes).toString('utf8')));
        else values.add(Buffer.from(bytes).toString('utf8'));
      }
      return { keys, values };
    };
    const before = collect(source);
    const after = collect(out);
    // Renamed on purpose: the export names the custom-user-data service, the current layout holds its id;
    // the top-level allowed_request_origins moves under security; the keys of auth/providers.json become
    // file names.
    const providerKeys = Object.keys(jsonOf(source, 'auth/providers.json') as object);
    for (const key of providerKeys) expect(out.has(`auth_providers/${key}.json`), key).toBe(true);
    const renamed = new Set(['mongo_service_name', 'allowed_request_origins', ...providerKeys]);
    expect([...before.keys].filter((k) => !after.keys.has(k) && !renamed.has(k))).toEqual([]);
    expect([...before.values].filter((v) => !after.values.has(v))).toEqual([]);
    expect(after.keys.has('allowed_request_origins')).toBe(true);
  });

  it('writes a current layout that reads back with zero violations and rewrites byte-identically', () => {
    const converted = writeAppFiles(readAppFiles(exportFiles()).app);
    const again = loadApp(converted);
    expect(again.layout).toBe('current');
    expect(again.violations).toEqual([]);
    const rewritten = writeAppFiles(again.app);
    for (const [path, bytes] of converted) expect(Buffer.compare(rewritten.get(path)!, bytes), path).toBe(0);
    expect(rewritten.size).toBe(converted.size);
  });

  it('names the export file a violation is in', () => {
    const files = exportFiles();
    editJson(files, 'auth/providers.json', (d) => (d['custom-token'].secret_config.signingKeys = ['nope']));
    editJson(files, 'functions/config.json', (d) => (d[1].private = 'no'));
    files.delete('functions/onUserCreated.js');
    editJson(files, 'realm_config.json', (d) => (d.allowed_request_origins = ['shop']));
    editJson(files, 'auth/custom_user_data.json', (d) => (d.mongo_service_name = 'other'));
    editJson(files, 'data_sources/mongodb-atlas/shop/orders/schema.json', (d) => (d.properties.store_id.bsonType = 'int'));
    expect(issues(files)).toEqual([
      'auth/custom_user_data.json|mongo_service_name|app.custom_user_data.service',
      'auth/providers.json|custom-token.secret_config.signingKeys|secret_config.secret.missing',
      'data_sources/mongodb-atlas/shop/orders/schema.json|properties.store_id.bsonType|sync.partition.key.type',
      'functions/config.json|[1].private|field.type',
      'functions/onUserCreated.js||function.source.missing',
      'realm_config.json|allowed_request_origins[0]|app.allowed_request_origins.url',
    ]);
  });

  it('finds the app inside a zip-style top-level directory', () => {
    const wrapped: AppFiles = new Map([...exportFiles()].map(([p, b]) => [`shop/${p}`, b]));
    put(wrapped, 'shop/README.md', '# shop\n');
    const { layout, violations, app } = loadApp(wrapped);
    expect([layout, violations, app.settings.name]).toEqual(['export-20210101', [], 'shop']);
  });
});

describe('hosting settings in hosting/config.json', () => {
  const current = (): AppFiles => {
    const files: AppFiles = new Map();
    put(files, 'config.json', { config_version: 20210101, name: 'site', location: 'US-VA', deployment_model: 'GLOBAL' });
    put(files, 'hosting/config.json', { enabled: true, default_error_path: '/404.html', default_response_code: 404 });
    put(files, 'hosting/files/index.html', '<h1>site</h1>\n');
    return files;
  };

  it('are read in the current layout as in an export (an export moved into config.json apps), and written back into config.json', () => {
    const loaded = loadApp(current());
    expect(loaded.layout).toBe('current');
    expect(loaded.violations).toEqual([]);
    expect(loaded.app.settings.hosting).toEqual({ enabled: true, default_error_path: '/404.html', default_response_code: 404 });
    const written = writeAppFiles(loaded.app);
    expect(written.has('hosting/config.json')).toBe(false);
    expect(jsonOf(written, 'config.json')).toMatchObject({ hosting: { enabled: true } });
  });

  it('are refused when config.json holds hosting settings too', () => {
    const files = current();
    editJson(files, 'config.json', (d) => (d.hosting = { enabled: false }));
    expect(issues(files)).toEqual(['hosting/config.json||hosting.duplicate']);
  });
});

describe("an export's files in an app of the config.json layout", () => {
  it('are named in warnings, with where this layout reads the same settings', () => {
    const files: AppFiles = new Map();
    put(files, 'config.json', { config_version: 20210101, name: 'mixed', location: 'US-VA', deployment_model: 'GLOBAL' });
    put(files, 'auth/providers.json', { 'anon-user': { name: 'anon-user', type: 'anon-user', disabled: false } });
    put(files, 'functions/config.json', [{ name: 'hello', private: false }]);
    const loaded = loadApp(files);
    expect(loaded.layout).toBe('current');
    expect(loaded.warnings.map(({ file, rule, message }) => `${file}|${rule}|${/reads (.*) instead/.exec(message)?.[1] ?? ''}`)).toEqual([
      'auth/providers.json|app.layout.export_file|auth_providers/<name>.json',
      'functions/config.json|app.layout.export_file|functions/<name>/config.json',
    ]);
  });
});
