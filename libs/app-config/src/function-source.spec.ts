import { runInNewContext } from 'node:vm';
import { functionSyntaxError, importsAsRequires, loadApp } from './index';
import { filesOf } from './__fixtures__/app-files';

/** Runs a source as the function runtime does (a body of exports, module, require, ...) and returns what it exported. */
function exported(source: string, modules: Record<string, unknown>): unknown {
  const required: string[] = [];
  const require = (name: string): unknown => {
    required.push(name);
    if (!(name in modules)) throw new Error(`Cannot find module '${name}'`);
    return modules[name];
  };
  const factory = runInNewContext(`(function (exports, module, require, context, console) {${importsAsRequires(source)}\n;return exports;})`) as (...args: unknown[]) => unknown;
  return factory({}, { exports: {} }, require, {}, console);
}

describe('ES import declarations opening a function source (App Services compiled sources with Babel)', () => {
  const modules = {
    lodash: { flatten: (a: unknown[][]) => a.flat(), chunk: () => 'chunk' },
    'async/eachSeries': { __esModule: true, default: () => 'eachSeries' },
    plain: Object.assign(() => 'plain default', { named: 'plain named' }),
  };

  it('turns named, default, namespace and side-effect imports into require calls with Babel interop', () => {
    const source = [
      '// Moves documents between databases',
      'import { flatten, chunk as split } from "lodash";',
      "import eachSeries from 'async/eachSeries';",
      'import plain, { named } from "plain";',
      'import * as ns from "plain";',
      'import "lodash";',
      '',
      'exports = function () {',
      '  return [flatten([[1], [2]]), split(), eachSeries(), plain(), named, ns.default(), ns.named];',
      '};',
    ].join('\n');
    const fn = exported(source, modules) as () => unknown[];
    expect(fn()).toEqual([[1, 2], 'chunk', 'eachSeries', 'plain default', 'plain named', 'plain default', 'plain named']);
  });

  it('keeps every line where it was, so errors name the line the user wrote', () => {
    const source = 'import {\n  flatten,\n} from "lodash";\n/* two\nlines */ import x from "plain";\nexports = () => 1;\n';
    const out = importsAsRequires(source);
    expect(out.split('\n')).toHaveLength(source.split('\n').length);
    expect(out.split('\n')[5]).toBe('exports = () => 1;');
  });

  it('leaves a source without leading imports as it is, down to the byte', () => {
    for (const source of ['exports = () => require("lodash");', '// import x from "y";\nexports = 1;', 'const importer = 1; exports = importer;', 'exports = () => import("x");', '']) {
      expect(importsAsRequires(source)).toBe(source);
    }
  });

  it('stops at the first statement that is not an import, leaving later ones to the compiler', () => {
    const source = 'import a from "plain";\nconst b = 1;\nimport c from "plain";\nexports = a;';
    expect(importsAsRequires(source).split('\n').slice(1)).toEqual(['const b = 1;', 'import c from "plain";', 'exports = a;']);
  });

  it('compiles a source that opens with imports, and still refuses a broken one', () => {
    expect(functionSyntaxError('import { flatten } from "lodash";\nexports = (a) => flatten(a);')).toBeUndefined();
    expect(functionSyntaxError('import { flatten } from "lodash";\nexports = (a) => flatten(a;')).toMatch(/line 2/);
    expect(functionSyntaxError('exports = 1;\nimport x from "y";')).toMatch(/import statement outside a module/);
  });

  it('accepts such a function in an app export', () => {
    const files = filesOf({
      'root_config.json': { name: 'movers' },
      'functions/config.json': [{ name: 'move', private: false }],
      'functions/move.js': 'import { flatten } from "lodash";\nimport eachSeries from "async/eachSeries";\n\nexports = async function (arg = {}) {\n  return flatten([arg]);\n};\n',
    });
    expect(loadApp(files).violations).toEqual([]);
  });
});
