/**
 * The two scripts every sandbox context evaluates, bundled from the TypeScript modules under `isolate/` (which
 * are linted and type-checked with the rest of the workspace): `polyfills` before the bson bundle, `prelude`
 * after it. The prelude's completion value is its `{ run, resolve }` entry points, which the host keeps
 * references to; a wrapper function keeps the bundle's own bindings out of the global object.
 *
 * Where the bundles come from:
 * - compiled (`dist/`, what `npm start` and the image run): `npm run build` writes them to
 *   `dist/isolate/*.js` by running this module (`node dist/sandbox/isolate-scripts.js`) after `tsc -b`; the
 *   runtime reads them from there, and a missing bundle is an error that says to build.
 * - from source (vitest runs the `.ts` files): they are bundled in memory on first use, from the sources as
 *   they are now, so a test never runs a stale bundle.
 * esbuild is a devDependency, loaded only in those two cases: the production image needs none.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as esbuild from 'esbuild';

export interface IsolateScripts {
  polyfills: string;
  prelude: string;
}

const NAMES = ['polyfills', 'prelude'] as const;
type ScriptName = (typeof NAMES)[number];

/** This file runs from source (vitest) or compiled (dist/sandbox/isolate-scripts.js). */
const fromSource = __filename.endsWith('.ts');
const appRoot = join(__dirname, '../..');
const sourceDir = join(appRoot, 'src/sandbox/isolate');
const bundleDir = join(appRoot, 'dist/isolate');

function buildOptions(name: ScriptName): esbuild.BuildOptions {
  const wrapped = name === 'prelude';
  return {
    entryPoints: [join(sourceDir, `${name}.ts`)],
    bundle: true,
    write: false,
    platform: 'neutral',
    format: 'iife',
    target: 'es2022',
    // Names stay as written (Buffer, URL, ...: functions can see them), though the bundle shares one scope.
    keepNames: true,
    legalComments: 'none',
    // The prelude's exports become a local of the wrapper, returned as the script's completion value.
    ...(wrapped ? { globalName: 'tesseraPrelude', banner: { js: "(function () {\n'use strict';" }, footer: { js: 'return tesseraPrelude.entryPoints;\n})();' } } : { banner: { js: "'use strict';" } }),
  };
}

function bundle(name: ScriptName): string {
  // A devDependency: required here only, so that reading a built bundle needs no esbuild.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildSync } = require('esbuild') as typeof esbuild;
  const result = buildSync(buildOptions(name));
  const [output] = result.outputFiles ?? [];
  if (!output) throw new Error(`bundling the sandbox's ${name} script produced no output`);
  return output.text;
}

let scripts: IsolateScripts | undefined;

/** The isolate scripts: bundled from source when running from source, else read from the build's output. */
export function isolateScripts(): IsolateScripts {
  scripts ??= fromSource ? { polyfills: bundle('polyfills'), prelude: bundle('prelude') } : { polyfills: readBundle('polyfills'), prelude: readBundle('prelude') };
  return scripts;
}

function readBundle(name: ScriptName): string {
  const file = join(bundleDir, `${name}.js`);
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`the sandbox's ${name} script is missing (${file}): run \`npm run build\``, { cause: error });
  }
}

/** The build's bundling step (package.json `build`): writes dist/isolate/{polyfills,prelude}.js. */
export function writeIsolateBundles(): void {
  mkdirSync(bundleDir, { recursive: true });
  for (const name of NAMES) writeFileSync(join(bundleDir, `${name}.js`), bundle(name));
}

if (require.main === module) writeIsolateBundles();
