import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

// Libraries that tie code to a framework, a broker or a store. Pure libraries (type:util, type:domain)
// must not import them; only data-access libraries and apps may.
const infrastructure = ['@nestjs/*', 'nats', 'mongodb', 'fastify', 'graphql-yoga', 'isolated-vm', 'pino', 'nestjs-pino'];


/**
 * Dependency constraints between projects. Specs may also import the shared test helpers (type:testing);
 * production code may not.
 */
const serviceApps = ['@tessera/admin-api', '@tessera/graphql-gateway', '@tessera/function-runtime', '@tessera/sync-service'];

// Import paths no file may use: a workspace package is reached by its alias, not by a path into libs/ or apps/.
const aliasesOnly = { group: ['../../libs/*', '../../../libs/*', '../../apps/*'], message: 'Import a workspace package by its @tessera/... alias.' };
// Test doubles (a project's `testing/` folder, its `@tessera/<name>/testing` entry, `@tessera/testing`) are
// for specs, end-to-end tests and benches; production code may not import them.
const testDoubles = { regex: '(^|/)testing(/|$)', message: 'Test doubles are for specs: production code may not import a testing/ module.' };

function boundaries(forSpecs, allow = []) {
  const testing = forSpecs ? ['type:testing'] : [];
  // The process host (type:host) runs the four service apps (type:service) in one process (standalone) or
  // one of them (distributed): it is the one place that imports them (docs/decisions/0002-process-host.md).
  // No service app imports another, and no library imports an app. End-to-end specs and benches (type:app)
  // may start services or the whole host in-process.
  // Nx refuses every import of an application project unless `allow` names it, and an allowed import skips
  // the tag checks; so only the host's own files and the specs get the list (see the overrides below).
  const services = forSpecs ? ['type:service', 'type:host'] : [];
  return {
    enforceBuildableLibDependency: false,
    allow,
    allowCircularSelfDependency: false,
    depConstraints: [
      { sourceTag: 'type:host', onlyDependOnLibsWithTags: ['type:service', 'type:feature', 'type:data-access', 'type:domain', 'type:contracts', 'type:util', ...testing] },
      { sourceTag: 'type:service', onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:domain', 'type:contracts', 'type:util', ...testing] },
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:domain', 'type:contracts', 'type:util', ...services, ...testing] },
      { sourceTag: 'type:feature', onlyDependOnLibsWithTags: ['type:feature', 'type:data-access', 'type:domain', 'type:contracts', 'type:util', ...testing] },
      { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: ['type:data-access', 'type:domain', 'type:contracts', 'type:util', ...testing] },
      { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:contracts', 'type:domain', 'type:util', ...testing], bannedExternalImports: forSpecs ? [] : infrastructure },
      { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain', 'type:util', ...testing], bannedExternalImports: forSpecs ? [] : infrastructure },
      // A pure library may use the domain's plain types and errors (TesseraError): see docs/decisions/0011.
      { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:domain', ...testing], bannedExternalImports: forSpecs ? [] : infrastructure },
      { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:testing', 'type:data-access', 'type:domain', 'type:contracts', 'type:util'] },
      { sourceTag: 'scope:host', onlyDependOnLibsWithTags: ['scope:host', 'scope:shared', 'scope:admin', 'scope:gateway', 'scope:runtime', 'scope:sync'] },
      { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
      { sourceTag: 'scope:admin', onlyDependOnLibsWithTags: ['scope:admin', 'scope:shared'] },
      { sourceTag: 'scope:gateway', onlyDependOnLibsWithTags: ['scope:gateway', 'scope:shared'] },
      { sourceTag: 'scope:runtime', onlyDependOnLibsWithTags: ['scope:runtime', 'scope:shared'] },
      { sourceTag: 'scope:sync', onlyDependOnLibsWithTags: ['scope:sync', 'scope:shared'] },
      { sourceTag: 'scope:cli', onlyDependOnLibsWithTags: ['scope:cli', 'scope:shared'] },
    ],
  };
}

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.tessera/**', '**/*.js', '**/*.cjs', '**/*.mjs', 'examples/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json'], tsconfigRootDir: import.meta.dirname, emitDecoratorMetadata: true, experimentalDecorators: true },
    },
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/only-throw-error': 'off',
      'no-restricted-imports': ['error', { patterns: [aliasesOnly, testDoubles] }],
      '@nx/enforce-module-boundaries': ['error', boundaries(false)],
    },
  },
  {
    // The admin console is browser code with its own compiler settings (DOM, Preact's JSX).
    files: ['apps/console/src/**/*.ts', 'apps/console/src/**/*.tsx'],
    // It reaches the server only through the admin API, as any client would: it imports Preact and its own
    // modules, no workspace package and nothing of Node.
    languageOptions: { parserOptions: { project: ['./apps/console/tsconfig.json'], tsconfigRootDir: import.meta.dirname } },
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!preact(/hooks)?$|\\./|\\.\\./)', message: 'The console uses only the admin API over HTTP: import Preact or a module of apps/console, nothing else.' }] }],
    },
  },
  {
    files: ['apps/server/src/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': ['error', boundaries(false, serviceApps)] },
  },
  {
    // Code that runs inside the sandbox isolate coerces the values functions pass it with String(), as Node's
    // own APIs do: '[object Object]' for a plain object is the intended result there, not a slip.
    // It has no Node and no host: it imports only its own modules (and bson's types) and uses no Node global.
    files: ['apps/function-runtime/src/sandbox/isolate/**/*.ts'],
    rules: {
      '@typescript-eslint/no-base-to-string': 'off',
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!\\./)', allowTypeImports: true, message: 'Code inside the isolate imports only ./ modules of isolate/ (types excepted).' }] },
      ],
      'no-restricted-globals': ['error', 'process', 'require', 'module', '__dirname', '__filename', 'global', 'setImmediate'],
    },
  },
  {
    // The test doubles themselves, and the shared test helpers.
    files: ['apps/*/src/testing/**/*.ts', 'libs/*/src/testing/**/*.ts', 'libs/testing/src/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [aliasesOnly] }] },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [aliasesOnly] }],
      '@nx/enforce-module-boundaries': ['error', boundaries(true, [...serviceApps, '@tessera/server'])],
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
