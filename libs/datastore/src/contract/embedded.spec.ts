import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedClient } from '../embedded/embedded-client';
import { dataSourceContract } from './data-source-contract.test';

describe('the embedded engine meets the data-source contract', () => {
  const dirs: string[] = [];
  let n = 0;
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  dataSourceContract({
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'tessera-contract-'));
      dirs.push(dir);
      return openEmbeddedClient(dir);
    },
    dbName: () => `contract${++n}`,
    supportsTransactions: true,
  });
});
