import { join } from 'node:path';
import { appEnvironment, fromAppData, loadApp, readAppFiles, stableId, writeAppFiles, type AppFiles } from '../index';
import { editJson, jsonOf, put, readDirSync, text } from '../__fixtures__/app-files';

// An app as the App Services CLI (`appservices pull`) and the last export wrote it: root_config.json,
// environments/, functions/config.json with sources in subdirectories, https_endpoints/, data_sources/.
const FIXTURE = join(__dirname, '..', '__fixtures__', 'appservices');
const appservicesFiles = () => readDirSync(FIXTURE);
const summary = (list: { file: string; path: string; rule: string }[]) => list.map(({ file, path, rule }) => `${file}|${path}|${rule}`);

describe('the App Services CLI layout (root_config.json)', () => {
  it('reads with zero violations, telling about the one function the manifest does not list', () => {
    const { layout, violations, warnings } = loadApp(appservicesFiles());
    expect(layout).toBe('appservices');
    expect(violations).toEqual([]);
    expect(summary(warnings)).toEqual(['functions/util/slugify.js||function.config.default']);
  });

  it('maps root_config.json and auth/custom_user_data.json to the app settings, and drops the .mdb/ metadata', () => {
    const { app } = readAppFiles(appservicesFiles());
    const atlas = app.services.find((s) => s.config.name === 'mongodb-atlas');
    expect(app.settings).toEqual({
      name: 'fieldnotes',
      deployment_model: 'LOCAL',
      provider_region: 'aws-eu-west-1',
      environment: 'production',
      security: { allowed_request_origins: ['https://fieldnotes.example.org'] },
      hosting: { enabled: false },
      custom_user_data_config: {
        enabled: true,
        mongo_service_id: stableId('fieldnotes', 'service', 'mongodb-atlas'),
        database_name: 'fieldnotes',
        collection_name: 'profiles',
        user_id_field: 'owner_id',
        on_user_creation_function_name: 'auth/onUserCreated',
      },
    });
    expect(atlas?.config.id).toBe(stableId('fieldnotes', 'service', 'mongodb-atlas'));
    expect([...app.extraFiles.keys()].filter((p) => p.startsWith('.mdb'))).toEqual([]);
  });

  it('reads every function of the manifest from its source file, nested directories included', () => {
    const files = appservicesFiles();
    const { app } = readAppFiles(files);
    expect(app.functions.map((f) => [f.config.name, f.source === text(files, `functions/${f.config.name}.js`)])).toEqual([
      ['auth/onUserCreated', true],
      ['auth/resetPassword', true],
      ['endpoints/listNotes', true],
      ['greet', true],
      ['notes/format/title', true],
      ['notes/summarize', true],
      ['triggers/countNotes', true],
      ['util/slugify', true],
    ]);
    const byName = new Map(app.functions.map((f) => [f.config.name, f.config]));
    expect(byName.get('auth/resetPassword')).toMatchObject({ private: true, run_as_system: true, disable_arg_logs: true });
    expect(byName.get('util/slugify')).toEqual({ name: 'util/slugify', private: false, run_as_system: false, id: stableId('fieldnotes', 'function', 'util/slugify') });
  });

  it('reads data sources with per-collection rules, schemas and relationships, the trigger and the resolver', () => {
    const files = appservicesFiles();
    const { app } = readAppFiles(files);
    const atlas = app.services.find((s) => s.config.name === 'mongodb-atlas')!;
    const dir = 'data_sources/mongodb-atlas/fieldnotes';
    expect(atlas.defaultRule).toEqual(jsonOf(files, 'data_sources/mongodb-atlas/default_rule.json'));
    expect(atlas.collectionRules.map((r) => `${r.database}.${r.collection}`)).toEqual(['fieldnotes.announcements', 'fieldnotes.notes', 'fieldnotes.profiles']);
    expect(atlas.collectionRules[1]).toMatchObject({
      ...(jsonOf(files, `${dir}/notes/rules.json`) as object),
      schema: jsonOf(files, `${dir}/notes/schema.json`),
      relationships: jsonOf(files, `${dir}/notes/relationships.json`),
    });
    expect(atlas.collectionRules[2].schema).toEqual(jsonOf(files, `${dir}/profiles/schema.json`));
    expect(app.triggers.map((t) => [t.name, t.event_processors])).toEqual([['noteInserted', { FUNCTION: { config: { function_name: 'triggers/countNotes' } } }]]);
    expect(app.graphql?.customResolvers[0]).toMatchObject({ on_type: 'Query', field_name: 'noteSummary', function_name: 'notes/summarize' });
    expect(app.sync).toMatchObject({ type: 'flexible', state: 'disabled', queryable_fields_names: ['owner_id'] });
    expect(app.authProviders.map((p) => [p.name, p.disabled])).toEqual([['anon-user', false], ['api-key', true], ['local-userpass', false]]);
  });

  it('resolves %(%%environment.values.x) templates against the environment root_config.json selects', () => {
    const cluster = (files: AppFiles) => readAppFiles(files).app.services[0].config.config?.clusterName;
    const resetUrl = (files: AppFiles) => readAppFiles(files).app.authProviders.find((p) => p.name === 'local-userpass')?.config?.resetPasswordUrl;
    const files = appservicesFiles();
    expect([cluster(files), resetUrl(files)]).toEqual(['fieldnotes-prod', 'https://fieldnotes.example.org/reset']);
    editJson(files, 'root_config.json', (d) => (d.environment = 'development'));
    expect([cluster(files), resetUrl(files)]).toEqual(['fieldnotes-dev', 'http://localhost:3000/reset']);
    // No environment selected: App Services reads environments/no-environment.json.
    editJson(files, 'root_config.json', (d) => delete d.environment);
    expect([cluster(files), resetUrl(files)]).toEqual(['Cluster0', 'http://localhost:3000/reset']);
    // Function sources are code, not templates.
    expect(readAppFiles(files).app.functions.find((f) => f.config.name === 'greet')?.source).toContain('context.environment.values.greeting');
  });

  it('refuses an unknown environment and a template naming a value the environment lacks, naming file and path', () => {
    const files = appservicesFiles();
    editJson(files, 'data_sources/mongodb-atlas/config.json', (d) => (d.config.clusterName = '%(%%environment.values.nope)'));
    expect(summary(loadApp(files).violations)).toEqual(['data_sources/mongodb-atlas/config.json|config.clusterName|environment.value.missing']);
    expect(loadApp(files).violations[0].message).toContain('environments/production.json');
    editJson(files, 'root_config.json', (d) => (d.environment = 'staging'));
    expect(summary(loadApp(files).violations)).toContain('root_config.json|environment|app.environment.unknown');
    editJson(files, 'root_config.json', (d) => (d.environment = 'qa'));
    put(files, 'environments/qa.json', '{ "values": { "clusterName": "x", } }');
    expect(summary(loadApp(files).violations)).toContain('environments/qa.json||json.syntax');
    put(files, 'environments/qa.json', { values: ['x'] });
    expect(summary(loadApp(files).violations)).toContain('environments/qa.json|values|file.shape');
  });

  it('keeps https_endpoints/ where the 20210101 export keeps them, byte for byte, and checks their functions', () => {
    const files = appservicesFiles();
    const { app } = readAppFiles(files);
    for (const name of ['config.json', 'data_api_config.json']) {
      expect(Buffer.compare(app.extraFiles.get(`http_endpoints/${name}`)!, files.get(`https_endpoints/${name}`)!), name).toBe(0);
      expect(app.extraFiles.has(`https_endpoints/${name}`)).toBe(false);
    }
    editJson(files, 'https_endpoints/config.json', (d) => (d[0].function_name = 'endpoints/gone'));
    put(files, 'https_endpoints/data_api_config.json', '[]');
    expect(summary(loadApp(files).violations)).toEqual([
      'https_endpoints/config.json|[0].function_name|endpoint.function.missing',
      'https_endpoints/data_api_config.json||file.shape',
    ]);
    // The same check after the move to the current layout, where pull leaves them.
    const converted = writeAppFiles(readAppFiles(appservicesFiles()).app);
    converted.delete('functions/endpoints/listNotes/config.json');
    converted.delete('functions/endpoints/listNotes/source.js');
    expect(summary(loadApp(converted).violations)).toEqual(['http_endpoints/config.json|[0].function_name|endpoint.function.missing']);
  });

  it('writes the current layout, which reads back with no violation and no warning and rewrites byte-identically', () => {
    const converted = writeAppFiles(readAppFiles(appservicesFiles()).app);
    expect(jsonOf(converted, 'functions/util/slugify/config.json')).toEqual({ id: stableId('fieldnotes', 'function', 'util/slugify'), name: 'util/slugify', private: false, run_as_system: false });
    expect(jsonOf(converted, 'services/mongodb-atlas/config.json')).toMatchObject({ config: { clusterName: 'fieldnotes-prod' } });
    const again = loadApp(converted);
    expect([again.layout, again.violations, again.warnings]).toEqual(['current', [], []]);
    const rewritten = writeAppFiles(again.app);
    expect([...rewritten.keys()]).toEqual([...converted.keys()]);
    for (const [path, bytes] of converted) expect(Buffer.compare(rewritten.get(path)!, bytes), path).toBe(0);
    // Functions see the selected environment's values through context.environment.
    expect(appEnvironment(again.app)).toEqual({
      tag: 'production',
      values: { clusterName: 'fieldnotes-prod', siteUrl: 'https://fieldnotes.example.org', greeting: 'Welcome' },
    });
  });

  it('reads partition-based sync from sync/config.json', () => {
    const files = appservicesFiles();
    put(files, 'sync/config.json', {
      type: 'partition',
      state: 'enabled',
      development_mode_enabled: false,
      service_name: 'mongodb-atlas',
      database_name: 'fieldnotes',
      partition: { key: 'owner_id', type: 'string', permissions: { read: true, write: { '%%user.id': '%%partition' } } },
    });
    const { app, violations } = loadApp(files);
    expect(violations).toEqual([]);
    expect(app.sync).toMatchObject({ type: 'partition', partition: { key: 'owner_id', type: 'string' } });
  });

  it('resolves templates in an AppData import body (what realm-cli and the App Services CLI push) the same way', () => {
    const loaded = fromAppData({
      name: 'fieldnotes',
      environment: 'qa',
      environments: { qa: { values: { clusterName: 'fieldnotes-qa' } }, production: { values: { clusterName: 'fieldnotes-prod' } } },
      data_sources: [{ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: '%(%%environment.values.clusterName)' } } }],
      values: [{ name: 'stage', value: 'running in %(%%environment.tag)' }],
    });
    expect(loaded.violations).toEqual([]);
    expect(loaded.app.services[0].config.config?.clusterName).toBe('fieldnotes-qa');
    expect(loaded.app.values[0].value).toBe('running in qa');
  });

  it('finds the app inside a zip-style top-level directory', () => {
    const wrapped: AppFiles = new Map([...appservicesFiles()].map(([p, b]) => [`fieldnotes/${p}`, b]));
    const { layout, violations, app } = loadApp(wrapped);
    expect([layout, violations, app.settings.name]).toEqual(['appservices', [], 'fieldnotes']);
  });
});

describe('a function source with no configuration (App Services adds it with the default one)', () => {
  const defaulted = (files: AppFiles, name: string) => {
    const { app, violations, warnings } = loadApp(files);
    return { violations, warnings: summary(warnings), config: app.functions.find((f) => f.config.name === name)?.config };
  };

  it('in a 20210101 export (realm_config.json)', () => {
    const files = readDirSync(join(__dirname, '..', '__fixtures__', 'export-20210101'));
    put(files, 'functions/reports/weekly.js', 'exports = () => "weekly";\n');
    expect(defaulted(files, 'reports/weekly')).toMatchObject({
      violations: [],
      warnings: ['functions/reports/weekly.js||function.config.default'],
      config: { name: 'reports/weekly', private: false, run_as_system: false },
    });
  });

  it('when there is no manifest at all, and never for dependencies or dot-files', () => {
    const files = appservicesFiles();
    files.delete('functions/config.json');
    put(files, 'functions/node_modules/left-pad/index.js', 'module.exports = () => "";\n');
    put(files, 'functions/.eslintrc.js', 'module.exports = {};\n');
    const { app, warnings } = loadApp(files);
    expect(app.functions.map((f) => f.config.name)).toEqual([
      'auth/onUserCreated',
      'auth/resetPassword',
      'endpoints/listNotes',
      'greet',
      'notes/format/title',
      'notes/summarize',
      'triggers/countNotes',
      'util/slugify',
    ]);
    expect(app.functions.every((f) => f.config.private === false && f.config.run_as_system === false)).toBe(true);
    expect(warnings).toHaveLength(8);
  });

  it('in the legacy layout (functions/<name>/source.js without config.json)', () => {
    const files = readDirSync(join(__dirname, '..', '__fixtures__', 'legacy-app'));
    put(files, 'functions/jobs/cleanup/source.js', 'exports = () => 0;\n');
    expect(defaulted(files, 'jobs/cleanup')).toMatchObject({
      violations: [],
      warnings: ['functions/jobs/cleanup/source.js||function.config.default'],
      config: { name: 'jobs/cleanup', private: false, run_as_system: false },
    });
  });
});
