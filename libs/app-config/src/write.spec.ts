import fc from 'fast-check';
import { emptyApp, loadApp, readAppFiles, writeAppFiles, type AppConfig } from './index';
import { exampleTodo, put } from './__fixtures__/app-files';

const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,20}$/);
const json = fc.jsonValue({ maxDepth: 3 });

const arbitraryApp: fc.Arbitrary<AppConfig> = fc
  .record({
    appName: name,
    functions: fc.uniqueArray(fc.record({ name, extra: fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), json, { maxKeys: 3 }), source: fc.string() }), { selector: (f) => f.name, maxLength: 4 }),
    values: fc.uniqueArray(fc.record({ name, value: json }), { selector: (v) => v.name, maxLength: 4 }),
    triggers: fc.uniqueArray(fc.record({ name, type: fc.constantFrom('DATABASE', 'SCHEDULED', 'AUTHENTICATION'), config: fc.dictionary(fc.string({ minLength: 1 }), json, { maxKeys: 3 }) }), { selector: (t) => t.name, maxLength: 3 }),
  })
  .map(({ appName, functions, values, triggers }) => {
    const app = emptyApp(appName);
    app.functions = functions.map((f) => ({ config: { ...f.extra, name: f.name }, source: f.source }));
    app.values = values.map((v) => ({ name: v.name, value: v.value }));
    app.triggers = triggers.map((t) => ({ name: t.name, type: t.type, config: t.config, function_name: functions[0]?.name }));
    return app;
  });

describe('writeAppFiles', () => {
  it('is deterministic: writing what it wrote, after reading it, gives the same bytes', () => {
    fc.assert(
      fc.property(arbitraryApp, (app) => {
        const first = writeAppFiles(app);
        const second = writeAppFiles(readAppFiles(first).app);
        expect([...second.keys()]).toEqual([...first.keys()]);
        for (const [path, bytes] of first) expect(Buffer.compare(second.get(path)!, bytes), path).toBe(0);
        expect(writeAppFiles(app)).toEqual(first);
      }),
      { numRuns: 60 },
    );
  });

  it('does not change the model it is given', () => {
    const app = emptyApp('todo');
    app.functions.push({ config: { name: 'f' }, source: 'exports = () => 1;' });
    const before = structuredClone(app);
    writeAppFiles(app);
    expect(app).toEqual(before);
  });

  it('writes files in path order with config_version 20210101', () => {
    const files = writeAppFiles(readAppFiles(exampleTodo()).app);
    const keys = [...files.keys()];
    expect(keys).toEqual([...keys].sort());
    expect(JSON.parse(Buffer.from(files.get('config.json')!).toString()).config_version).toBe(20210101);
  });

  it('ignores functions/node_modules when reading', () => {
    const files = exampleTodo();
    put(files, 'functions/node_modules/left-pad/config.json', { name: 'left-pad' });
    put(files, 'functions/node_modules/left-pad/source.js', 'module.exports = 1;');
    const { app, violations } = loadApp(files);
    expect(violations).toEqual([]);
    expect(app.functions.map((f) => f.config.name)).not.toContain('left-pad');
    expect(app.extraFiles.has('functions/node_modules/left-pad/config.json')).toBe(true);
  });

  it('accepts secrets that exist outside secrets.json when told their names', () => {
    const files = exampleTodo();
    put(files, 'values/apiKey.json', { name: 'apiKey', from_secret: true, value: 'apiKeySecret' });
    expect(loadApp(files).violations.map((v) => v.rule)).toEqual(['value.secret.missing']);
    expect(loadApp(files, { secretNames: ['apiKeySecret'] }).violations).toEqual([]);
  });
});
