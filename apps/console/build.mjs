// Builds the admin console into apps/console/dist: one script and one style sheet named after a hash of
// their content (so the admin API may let browsers keep them for a year) and the page that loads them.
// Run by `npm run build`; the admin API serves the result at /console.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(fileURLToPath(import.meta.url));
const out = join(root, 'dist');

const result = await build({
  entryPoints: [join(root, 'src', 'main.tsx')],
  bundle: true,
  write: false,
  minify: true,
  format: 'esm',
  target: ['chrome111', 'firefox115', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: out,
  entryNames: 'console',
  legalComments: 'none',
  logLevel: 'warning',
});

await rm(out, { recursive: true, force: true });
await mkdir(join(out, 'assets'), { recursive: true });
const names = {};
for (const file of result.outputFiles) {
  const extension = file.path.endsWith('.css') ? 'css' : 'js';
  const hash = createHash('sha256').update(file.contents).digest('hex').slice(0, 12);
  names[extension] = `assets/console-${hash}.${extension}`;
  await writeFile(join(out, names[extension]), file.contents);
}
const page = (await readFile(join(root, 'src', 'index.html'), 'utf8'))
  .replace('%SCRIPT%', `/console/${names.js}`)
  .replace('%STYLE%', `/console/${names.css}`);
await writeFile(join(out, 'index.html'), page);
