import { AppConfigError, loadApp, loadValidApp, readAppFiles } from '../index';
import { editJson, exampleTodo, put } from '../__fixtures__/app-files';

const summary = (files: Map<string, Uint8Array>) => loadApp(files).violations.map(({ file, path, rule }) => `${file}|${path}|${rule}`);

describe('reading a broken app directory', () => {
  it('reports malformed JSON with its file, line and column instead of throwing', () => {
    const files = exampleTodo();
    put(files, 'functions/sum/config.json', '{\n  "name": "sum",\n  "private": false,\n}\n');
    const { violations } = loadApp(files);
    expect(violations).toEqual([
      {
        file: 'functions/sum/config.json',
        path: '',
        rule: 'json.syntax',
        message: "invalid JSON at line 4, column 1: expected a property name in double quotes but found '}'",
      },
    ]);
  });

  it('locates an unterminated document at its end', () => {
    const files = exampleTodo();
    put(files, 'config.json', '{ "name": "todo"');
    const [v] = loadApp(files).violations.filter((x) => x.rule === 'json.syntax');
    expect(v).toMatchObject({ file: 'config.json', message: "invalid JSON at line 1, column 17: expected ',' or '}' but found end of input" });
  });

  it('reports an unknown field type as a violation with the type named', () => {
    const files = exampleTodo();
    editJson(files, 'services/mongodb-atlas/rules/todo.lists.json', (d) => (d.schema.properties.name.bsonType = 'varchar'));
    expect(loadApp(files).violations).toEqual([
      {
        file: 'services/mongodb-atlas/rules/todo.lists.json',
        path: 'schema.properties.name.bsonType',
        rule: 'schema.bsonType.unknown',
        message: 'unknown field type "varchar"',
      },
    ]);
  });

  it('reports a missing source.js naming the function', () => {
    const files = exampleTodo();
    files.delete('functions/greet/source.js');
    expect(loadApp(files).violations).toEqual([
      { file: 'functions/greet/source.js', path: '', rule: 'function.source.missing', message: 'function "greet" has no source' },
    ]);
  });

  it('gives a source.js without config.json the default function config, with a warning, as App Services does', () => {
    const files = exampleTodo();
    put(files, 'functions/tools/orphan/source.js', 'exports = () => 0;\n');
    const { violations, warnings, app } = loadApp(files);
    expect(violations).toEqual([]);
    expect(warnings.map(({ file, rule }) => `${file}|${rule}`)).toEqual(['functions/tools/orphan/source.js|function.config.default']);
    expect(warnings[0].message).toContain('functions/tools/orphan/config.json');
    const orphan = app.functions.find((f) => f.config.name === 'tools/orphan');
    expect(orphan).toMatchObject({ config: { name: 'tools/orphan', private: false, run_as_system: false }, source: 'exports = () => 0;\n' });
  });

  it('reports a file of the wrong shape', () => {
    const files = exampleTodo();
    put(files, 'values/list.json', ['a', 'b']);
    put(files, 'hosting/metadata.json', { path: '/index.html' });
    expect(summary(files)).toEqual(['hosting/metadata.json||file.shape', 'values/list.json||file.shape']);
  });

  it('reports a service directory without config.json and an app without config.json', () => {
    const files = exampleTodo();
    files.delete('config.json');
    put(files, 'services/empty/rules/a.b.json', { database: 'a', collection: 'b' });
    expect(summary(files)).toEqual([
      'config.json||app.config.missing',
      'config.json|name|app.name.required',
      'services/empty/config.json||service.config.missing',
    ]);
  });

  it('reads the settings of a stitch.json app (config_version 20180301) from stitch.json', () => {
    const files = new Map([['stitch.json', new TextEncoder().encode('{"config_version": 20180301}')]]);
    expect(summary(files)).toEqual(['stitch.json|name|app.name.required']);
  });

  it('throws one AppConfigError listing every violation, with an App Services error body', () => {
    const files = exampleTodo();
    put(files, 'config.json', '{ "name": ');
    files.delete('functions/sum/source.js');
    let error: unknown;
    try {
      loadValidApp(files);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppConfigError);
    const e = error as AppConfigError;
    expect(e.httpStatus).toBe(400);
    expect(e.violations.map((v) => v.rule)).toEqual(['json.syntax', 'app.name.required', 'function.source.missing']);
    expect(e.message).toBe(
      [
        'invalid app configuration: 3 violations',
        "  - config.json: invalid JSON at line 1, column 11: unexpected end of input (json.syntax)",
        '  - config.json at name: app name is required (app.name.required)',
        '  - functions/sum/source.js: function "sum" has no source (function.source.missing)',
      ].join('\n'),
    );
    expect(e.toBody()).toEqual({ error: e.message, error_code: 'InvalidConfiguration' });
    expect(e.message).not.toMatch(/\bat .*\.ts:\d+/);
  });

  it('returns a valid app from loadValidApp', () => {
    expect(loadValidApp(exampleTodo()).app.settings.name).toBe('todo');
  });

  it('keeps files it does not model and unknown fields', () => {
    const files = exampleTodo();
    put(files, 'README.md', '# todo\n');
    put(files, 'environments/production.json', { values: {} });
    editJson(files, 'functions/sum/config.json', (d) => (d.x_team = 'core'));
    const { app } = readAppFiles(files);
    expect([...app.extraFiles.keys()]).toEqual(['README.md', 'environments/production.json']);
    expect(app.functions.find((f) => f.config.name === 'sum')?.config.x_team).toBe('core');
  });
});
