import { readdirSync, existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// Tests import workspace packages from source, so no build is needed to run them. SWC (not esbuild)
// compiles them because NestJS dependency injection needs emitted decorator metadata.
const root = import.meta.dirname;
// A project's test doubles are a second entry point, `@tessera/<name>/testing` (src/testing/index.ts), kept
// out of its public index; its alias comes first, since an alias also matches the imports under its name.
const alias: Record<string, string> = {};
for (const group of ['libs', 'apps']) {
  for (const name of readdirSync(resolve(root, group))) {
    const testing = resolve(root, group, name, 'src/testing/index.ts');
    if (existsSync(testing)) alias[`@tessera/${name}/testing`] = testing;
  }
}
for (const group of ['libs', 'apps']) {
  for (const name of readdirSync(resolve(root, group))) {
    const entry = resolve(root, group, name, 'src/index.ts');
    if (existsSync(entry)) alias[`@tessera/${name}`] = entry;
  }
}

// One copy of bson: the driver require()s its CommonJS build, so tests import that one too, or values the
// driver makes (an inserted ObjectId) would be instances of a second, ESM copy's classes.
alias['bson'] = resolve(root, 'node_modules/bson/lib/bson.cjs');

export default defineConfig({
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: { alias },
  test: {
    include: ['{apps,libs}/*/src/**/*.spec.ts', 'test/**/*.spec.ts', 'bench/**/*.spec.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the machine's cores: one on CI's two. Most files wait on
    // servers, subprocesses and sockets rather than compute, so two workers on two cores halve the wall time.
    maxWorkers: Math.max(2, availableParallelism()),
    // isolated-vm on Node 20+ needs the startup snapshot off (see its README).
    poolOptions: { forks: { execArgv: ['--no-node-snapshot'] } },
    globals: true,
    setupFiles: [resolve(root, 'libs/testing/src/quiet-logs.setup.ts'), resolve(root, 'libs/testing/src/property-seed.setup.ts')],
    reporters: ['default'],
  },
});
