import { join } from 'node:path';
import { fromAppData, readAppFiles, toAppData, writeAppFiles } from './index';
import { exampleTodo, readDirSync, type Doc } from './__fixtures__/app-files';

const exportFixture = () => readDirSync(join(__dirname, '__fixtures__', 'export-20210101'));

describe('AppData JSON (realm-cli import body)', () => {
  it('lays an app out as realm-cli does: providers by name, sources by file, rules with schemas', () => {
    const data: Doc = toAppData(readAppFiles(exportFixture()).app);
    expect(data.config_version).toBe(20210101);
    expect(data.name).toBe('shop');
    expect(data.allowed_request_origins).toEqual(['https://shop.example.com']);
    expect(Object.keys(data.auth.providers)).toEqual(['anon-user', 'custom-token', 'local-userpass']);
    expect(data.auth.custom_user_data.mongo_service_name).toBe('mongodb-atlas');
    expect(Object.keys(data.functions.sources)).toEqual(['checkout.js', 'onUserCreated.js', 'utils/format.js']);
    expect(data.data_sources[0].rules.map((r: Doc) => [r.collection, r.schema.title])).toEqual([
      ['customers', 'Customer'],
      ['orders', 'Order'],
    ]);
    expect(data.services[0].incoming_webhooks[0].config.name).toBe('notify');
    expect(data.endpoints.config[0].route).toBe('/orders');
    expect(data.environments.production).toEqual({ values: { tier: 'gold' } });
    expect(data.sync).toEqual({ config: { development_mode_enabled: false } });
    expect(data).not.toHaveProperty('hosting');
    expect(data).not.toHaveProperty('secrets');
  });

  it('carries hosting settings and realm-cli secrets', () => {
    const app = readAppFiles(exportFixture()).app;
    app.settings.hosting = { enabled: true, custom_domain: 'shop.example.com' };
    app.secrets = { auth_providers: { 'custom-token': { signingKey: 'k' } } };
    const data = toAppData(app);
    expect(data.hosting).toEqual({ enabled: true, custom_domain: 'shop.example.com' });
    expect(data.secrets).toEqual({ auth_providers: { 'custom-token': { signingKey: 'k' } } });
    const back = fromAppData(data).app;
    expect(back.settings.hosting).toEqual(app.settings.hosting);
    expect(back.secrets).toEqual(app.secrets);
  });

  it.each([
    ['examples/todo', exampleTodo],
    ['the export fixture', exportFixture],
  ])('imports its own AppData of %s back to the same current layout', (_name, files) => {
    const app = readAppFiles(files()).app;
    const expected = writeAppFiles(app);
    const loaded = fromAppData(JSON.parse(JSON.stringify(toAppData(app))));
    expect(loaded.violations).toEqual([]);
    const actual = writeAppFiles(loaded.app);
    // AppData carries no hosted files, no function dependencies (realm-cli uploads both separately) and
    // no flat secrets.
    const carried = (p: string) => !p.startsWith('hosting/') && p !== 'functions/package.json' && p !== 'secrets.json';
    expect([...actual.keys()].filter(carried)).toEqual([...expected.keys()].filter(carried));
    for (const [path, bytes] of expected) {
      if (!carried(path)) continue;
      const [got, want] = [Buffer.from(actual.get(path)!).toString(), Buffer.from(bytes).toString()];
      // Files the model keeps verbatim travel as parsed JSON, so only their content must match.
      if (app.extraFiles.has(path)) expect(JSON.parse(got), path).toEqual(JSON.parse(want));
      else expect(got, path).toBe(want);
    }
  });

  it('reports a body of the wrong shape as violations of import.json', () => {
    expect(fromAppData('nope').violations[0]).toMatchObject({ file: 'import.json', path: '', rule: 'file.shape' });
    const { violations } = fromAppData({ name: 'x', values: 3, functions: { config: [], sources: [] }, data_sources: [{ config: 1 }] });
    expect(violations.map((v) => `${v.file}|${v.path}|${v.rule}`)).toEqual([
      'import.json|values|file.shape',
      'import.json|functions.sources|file.shape',
      'import.json|data_sources[0].config|file.shape',
    ]);
  });
});
