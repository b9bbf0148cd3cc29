import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import nx from '@nx/eslint-plugin';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The module-boundary rule (and the import restrictions) as eslint.config.mjs configures them for each file,
 * applied to probe sources placed in the projects: only the process host may import the service apps; no
 * library, and no service app, may; test doubles stay out of production code; isolate code imports no host module.
 */
const root = resolve(__dirname, '../..');
const boundaryRule = '@nx/enforce-module-boundaries';
let repoLinter: ESLint;

async function boundaryErrors(file: string, source: string, rule = boundaryRule): Promise<string[]> {
  const filePath = resolve(root, file);
  const config = (await repoLinter.calculateConfigForFile(filePath)) as Linter.Config;
  const setting = config.rules?.[rule];
  expect(setting, `${file} has no ${rule} setting`).toBeDefined();
  // Only the one rule, with the options the repository gives this file, and no type information (the probe
  // is not part of the TypeScript program).
  const probe = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { '@nx': nx as never }, rules: { [rule]: setting as Linter.RuleEntry } },
  });
  const [result] = await probe.lintText(source, { filePath });
  return (result?.messages ?? []).filter((message) => message.ruleId === rule).map((message) => message.message);
}

describe('module boundaries', () => {
  beforeAll(() => {
    // The rule reads the project graph Nx caches; `npm run lint` makes it the same way.
    execFileSync(process.execPath, [resolve(root, 'node_modules/nx/bin/nx.js'), 'show', 'projects'], { cwd: root, stdio: 'ignore' });
    repoLinter = new ESLint({ cwd: root });
  }, 120_000);

  it('refuses a library that imports a service app', async () => {
    expect(await boundaryErrors('libs/domain/src/boundary-probe.ts', "import { AdminApiModule } from '@tessera/admin-api';\nexport const probe = AdminApiModule;\n")).not.toEqual([]);
    expect(await boundaryErrors('libs/data-access/src/boundary-probe.ts', "import { SyncServiceModule } from '@tessera/sync-service';\nexport const probe = SyncServiceModule;\n")).not.toEqual([]);
  });

  it('refuses a service app that imports another service app', async () => {
    expect(await boundaryErrors('apps/graphql-gateway/src/boundary-probe.ts', "import { FunctionRuntimeModule } from '@tessera/function-runtime';\nexport const probe = FunctionRuntimeModule;\n")).not.toEqual([]);
    expect(await boundaryErrors('apps/admin-api/src/boundary-probe.ts', "import { GraphqlGatewayModule } from '@tessera/graphql-gateway';\nexport const probe = GraphqlGatewayModule;\n")).not.toEqual([]);
  });

  it('refuses the CLI that imports a service app or the host', async () => {
    expect(await boundaryErrors('apps/cli/src/boundary-probe.ts', "import { AdminApiModule } from '@tessera/admin-api';\nexport const probe = AdminApiModule;\n")).not.toEqual([]);
  });

  it('lets the process host import every service app', async () => {
    const source = [
      "import { AdminApiModule } from '@tessera/admin-api';",
      "import { FunctionRuntimeModule } from '@tessera/function-runtime';",
      "import { GraphqlGatewayModule } from '@tessera/graphql-gateway';",
      "import { SyncServiceModule } from '@tessera/sync-service';",
      'export const probe = [AdminApiModule, FunctionRuntimeModule, GraphqlGatewayModule, SyncServiceModule];',
      '',
    ].join('\n');
    expect(await boundaryErrors('apps/server/src/boundary-probe.ts', source)).toEqual([]);
  });

  it('keeps test doubles out of production code', async () => {
    const doubles = "import { InMemoryValues } from './testing/in-memory-ports';\nexport const probe = InMemoryValues;\n";
    expect(await boundaryErrors('apps/function-runtime/src/boundary-probe.ts', doubles, 'no-restricted-imports')).not.toEqual([]);
    expect(await boundaryErrors('apps/function-runtime/src/boundary-probe.spec.ts', doubles, 'no-restricted-imports')).toEqual([]);
    const entry = "import { InMemoryValues } from '@tessera/function-runtime/testing';\nexport const probe = InMemoryValues;\n";
    expect(await boundaryErrors('apps/server/src/boundary-probe.ts', entry, 'no-restricted-imports')).not.toEqual([]);
    expect(await boundaryErrors('test/distributed/boundary-probe.ts', entry, 'no-restricted-imports')).toEqual([]);
  });

  it('keeps Node and host modules out of the code that runs inside the sandbox isolate', async () => {
    const probe = "import { Sandbox } from '../sandbox';\nexport const probe = Sandbox;\n";
    expect(await boundaryErrors('apps/function-runtime/src/sandbox/isolate/boundary-probe.ts', probe, 'no-restricted-imports')).not.toEqual([]);
    expect(await boundaryErrors('apps/function-runtime/src/sandbox/isolate/boundary-probe.ts', "import { bson } from './bridge';\nexport const probe = bson;\n", 'no-restricted-imports')).toEqual([]);
  });

  it('keeps the RQL library pure: the domain, but no store and no framework', async () => {
    expect(await boundaryErrors('libs/rql/src/boundary-probe.ts', "import { compileDocumentFilter } from '@tessera/datastore';\nexport const probe = compileDocumentFilter;\n")).not.toEqual([]);
    expect(await boundaryErrors('libs/rql/src/boundary-probe.ts', "import { Injectable } from '@nestjs/common';\nexport const probe = Injectable;\n")).not.toEqual([]);
    expect(await boundaryErrors('libs/rql/src/boundary-probe.ts', "import { TesseraError } from '@tessera/domain';\nexport const probe = TesseraError;\n")).toEqual([]);
  });

  it('keeps the admin console on the admin API: Preact and its own modules, no workspace package, nothing of Node', async () => {
    const file = 'apps/console/src/boundary-probe.ts';
    expect(await boundaryErrors(file, "import { AppRegistry } from '@tessera/platform';\nexport const probe = AppRegistry;\n", 'no-restricted-imports')).not.toEqual([]);
    expect(await boundaryErrors(file, "import { readFileSync } from 'node:fs';\nexport const probe = readFileSync;\n", 'no-restricted-imports')).not.toEqual([]);
    expect(await boundaryErrors(file, "import { render } from 'preact';\nimport { useState } from 'preact/hooks';\nimport { AdminApi } from './api';\nexport const probe = [render, useState, AdminApi];\n", 'no-restricted-imports')).toEqual([]);
  });

  it('still refuses a pure library that imports a framework', async () => {
    expect(await boundaryErrors('libs/rules/src/boundary-probe.ts', "import { Injectable } from '@nestjs/common';\nexport const probe = Injectable;\n")).not.toEqual([]);
  });
});
