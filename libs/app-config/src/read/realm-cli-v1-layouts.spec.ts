import { join } from 'node:path';
import { loadApp, readAppFiles, writeAppFiles, type AppFiles } from '../index';
import { editJson, jsonOf, readDirSync } from '../__fixtures__/app-files';

// realm-cli v1 wrote two generations of the same tree: config_version 20180301 keeps the app settings in
// stitch.json, 20200603 in config.json. Both name the custom user data service as mongo_service_name.
const FIXTURES = join(__dirname, '..', '__fixtures__');
const stitchFiles = () => readDirSync(join(FIXTURES, 'stitch-20180301'));
const issues = (files: AppFiles) => loadApp(files).violations.map(({ file, path, rule }) => `${file}|${path}|${rule}`);

/** The same app as realm-cli wrote it with config_version 20200603: stitch.json becomes config.json. */
function as20200603(files: AppFiles): AppFiles {
  const out: AppFiles = new Map(files);
  out.set('config.json', files.get('stitch.json') as Uint8Array);
  out.delete('stitch.json');
  editJson(out, 'config.json', (d) => (d.config_version = 20200603));
  return out;
}

describe('a realm-cli v1 app with stitch.json (config_version 20180301)', () => {
  it('reads with zero violations', () => {
    const { app, layout, violations } = loadApp(stitchFiles());
    expect(violations).toEqual([]);
    expect(layout).toBe('current');
    expect(app.settings.name).toBe('lending');
    expect(app.functions.map((f) => f.config.name)).toEqual(['lendBook']);
    expect(app.services[0].collectionRules.map((r) => `${r.database}.${r.collection}`)).toEqual(['lending.books']);
  });

  it('links custom user data to the service mongo_service_name names', () => {
    const { app } = readAppFiles(stitchFiles());
    const atlas = app.services.find((s) => s.config.name === 'mongodb-atlas');
    expect(app.settings.custom_user_data_config).toEqual({
      enabled: true,
      mongo_service_id: atlas?.config.id,
      database_name: 'lending',
      collection_name: 'members',
      user_id_field: 'user_id',
    });
  });

  it('points a violation of the app settings at stitch.json', () => {
    const files = stitchFiles();
    editJson(files, 'stitch.json', (d) => (d.name = 'no spaces allowed'));
    expect(issues(files)).toEqual(['stitch.json|name|app.name.charset']);
  });

  it('reports an unknown custom user data service at mongo_service_name', () => {
    const files = stitchFiles();
    editJson(files, 'stitch.json', (d) => ((d.custom_user_data_config as Record<string, unknown>).mongo_service_name = 'elsewhere'));
    expect(issues(files)).toEqual(['stitch.json|custom_user_data_config.mongo_service_name|app.custom_user_data.service']);
  });

  it('is written in the current layout, config.json holding the service id', () => {
    const { app } = readAppFiles(stitchFiles());
    const out = writeAppFiles(app);
    expect(out.has('stitch.json')).toBe(false);
    const config = jsonOf(out, 'config.json') as { custom_user_data_config: Record<string, unknown> };
    expect(config.custom_user_data_config.mongo_service_id).toBe(app.services[0].config.id);
    expect(config.custom_user_data_config).not.toHaveProperty('mongo_service_name');
    expect(loadApp(out).violations).toEqual([]);
  });
});

describe('a realm-cli v1 app with config.json (config_version 20200603)', () => {
  it('reads mongo_service_name as the custom user data service', () => {
    const { app, violations } = loadApp(as20200603(stitchFiles()));
    expect(violations).toEqual([]);
    expect(app.settings.custom_user_data_config?.mongo_service_id).toBe(app.services[0].config.id);
  });

  it('keeps a mongo_service_id it was given (the current layout)', () => {
    const files = as20200603(stitchFiles());
    editJson(files, 'config.json', (d) => {
      const cud = d.custom_user_data_config as Record<string, unknown>;
      delete cud.mongo_service_name;
      cud.mongo_service_id = 'mongodb-atlas';
    });
    const { app, violations } = loadApp(files);
    expect(violations).toEqual([]);
    expect(app.settings.custom_user_data_config?.mongo_service_id).toBe('mongodb-atlas');
  });

  it('reports an unknown custom user data service at mongo_service_name', () => {
    const files = as20200603(stitchFiles());
    editJson(files, 'config.json', (d) => ((d.custom_user_data_config as Record<string, unknown>).mongo_service_name = 'elsewhere'));
    expect(issues(files)).toEqual(['config.json|custom_user_data_config.mongo_service_name|app.custom_user_data.service']);
  });
});
