import { loadApp, readAppFiles, writeAppFiles, type AppFiles } from '../index';
import { editJson, filesOf, jsonOf, put } from '../__fixtures__/app-files';

// What App Services wrote into its own exports and pulls, though its documentation describes it otherwise:
// an export must push back unedited, so each is read as App Services read it.
function exported(): AppFiles {
  return filesOf({
    'realm_config.json': { app_id: 'orchard-abcde', config_version: 20210101, name: 'orchard', location: 'US-VA', deployment_model: 'GLOBAL' },
    'data_sources/mongodb-atlas/config.json': { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0', readPreference: 'primary', wireProtocolEnabled: false }, version: 1 },
    'data_sources/mongodb-atlas/orchard/trees/rules.json': { database: 'orchard', collection: 'trees', roles: [{ name: 'reader', apply_when: {}, read: true, write: false }] },
    'data_sources/mongodb-atlas/orchard/trees/schema.json': { title: 'Tree', bsonType: 'object', properties: { _id: { bsonType: 'objectId' }, variety: { bsonType: 'string' } } },
  });
}
const violations = (files: AppFiles) => loadApp(files).violations.map(({ file, path, rule }) => `${file}|${path}|${rule}`);

describe('a sync configuration App Services exported with "state": ""', () => {
  // Sync never enabled, or terminated: App Services wrote the type it was last set to and empty settings.
  it('reads a partition-based one with an empty key and type as sync that is off', () => {
    const files = exported();
    put(files, 'sync/config.json', { type: 'partition', state: '', development_mode_enabled: false, service_name: 'mongodb-atlas', partition: { key: '', type: '', permissions: {} } });
    expect(violations(files)).toEqual([]);
    const { app } = readAppFiles(files);
    expect(app.sync).toMatchObject({ type: 'partition', state: '' });
    expect(jsonOf(writeAppFiles(app), 'sync/config.json')).toMatchObject({ state: '', partition: { key: '', type: '' } });
  });

  it('reads a flexible one, with its queryable fields, as sync that is off', () => {
    const files = exported();
    put(files, 'sync/config.json', {
      type: 'flexible',
      state: '',
      development_mode_enabled: false,
      service_name: 'mongodb-atlas',
      client_max_offline_days: 30,
      is_recovery_mode_disabled: false,
      permissions: { rules: {}, defaultRoles: [] },
      collection_queryable_fields_names: { trees: ['variety'] },
    });
    expect(violations(files)).toEqual([]);
  });

  it('still checks a partition key that is set, and refuses any other state', () => {
    const files = exported();
    put(files, 'sync/config.json', { type: 'partition', state: '', service_name: 'mongodb-atlas', partition: { key: 'orchard_id', type: 'string', permissions: {} } });
    expect(violations(files)).toEqual(['data_sources/mongodb-atlas/orchard/trees/schema.json|properties|sync.partition.key.missing']);
    editJson(files, 'sync/config.json', (d) => (d.state = 'paused'));
    expect(violations(files)).toContain('sync/config.json|state|sync.state.value');
  });

  it('requires the key and type once the state is enabled or disabled', () => {
    const files = exported();
    put(files, 'sync/config.json', { type: 'partition', state: 'disabled', service_name: 'mongodb-atlas', partition: { key: '', type: '', permissions: {} } });
    expect(violations(files)).toEqual(['sync/config.json|partition.key|sync.partition.key.required', 'sync/config.json|partition.type|sync.partition.type.value']);
  });
});

describe('hosting settings of a Stitch template export', () => {
  // App Services set app_default_domain itself ("you cannot change it"): a template's placeholder was ignored.
  it('accepts an app_default_domain that is not a domain name, with a warning, and still refuses such a custom_domain', () => {
    const files = exported();
    editJson(files, 'realm_config.json', (d) => (d.hosting = { enabled: true, app_default_domain: 'my-unique-domain' }));
    const loaded = loadApp(files);
    expect(loaded.violations).toEqual([]);
    expect(loaded.warnings.map(({ file, path, rule }) => `${file}|${path}|${rule}`)).toEqual(['realm_config.json|hosting.app_default_domain|app.hosting.default_domain']);
    editJson(files, 'realm_config.json', (d) => (d.hosting = { enabled: true, custom_domain: 'my-unique-domain' }));
    expect(violations(files)).toEqual(['realm_config.json|hosting.custom_domain|app.hosting.domain']);
  });
});

describe('hosting metadata as App Services exported it', () => {
  const withSite = (metadata: unknown): AppFiles => {
    const files = exported();
    put(files, 'hosting/config.json', { enabled: true });
    put(files, 'hosting/files/index.html', '<h1>orchard</h1>\n');
    put(files, 'hosting/files/.well-known/apple-app-site-association', '{"applinks":{}}\n');
    put(files, 'hosting/metadata.json', metadata);
    return files;
  };

  it('takes "attrs": null as a file without attributes', () => {
    const files = withSite([{ path: '/index.html', attrs: null }]);
    expect(violations(files)).toEqual([]);
  });

  it('serves files under a dot directory such as /.well-known', () => {
    const files = withSite([{ path: '/.well-known/apple-app-site-association', attrs: [{ name: 'Content-Type', value: 'application/json' }] }]);
    expect(violations(files)).toEqual([]);
    expect([...(readAppFiles(files).app.hosting?.files.keys() ?? [])].sort()).toEqual(['/.well-known/apple-app-site-association', '/index.html']);
  });

  it('keeps the entry of a macOS .DS_Store, a file never deployed (the reader drops it), with a warning', () => {
    const files = withSite([
      { path: '/.DS_Store', attrs: null },
      { path: '/index.html', attrs: [{ name: 'Content-Type', value: 'text/html' }] },
    ]);
    files.set('hosting/files/.DS_Store', new Uint8Array([0, 0, 0, 1]));
    const loaded = loadApp(files);
    expect(loaded.violations).toEqual([]);
    expect(loaded.warnings.map(({ file, path, rule }) => `${file}|${path}|${rule}`)).toEqual(['hosting/metadata.json|[0].path|hosting.file.ignored']);
    expect([...(loaded.app.hosting?.files.keys() ?? [])].sort()).toEqual(['/.well-known/apple-app-site-association', '/index.html']);
    expect(loaded.app.hosting?.metadata.map((m) => m.path)).toContain('/.DS_Store');
  });

  it('still refuses an entry for a file that is not there', () => {
    const files = withSite([{ path: '/missing.html', attrs: [] }]);
    expect(violations(files)).toEqual(['hosting/metadata.json|[0].path|hosting.file.missing']);
  });
});
