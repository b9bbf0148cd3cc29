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

describe('raw reads of the embedded engine', () => {
  it('hands a raw find the stored documents and every other find copies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-raw-'));
    const client = openEmbeddedClient(dir);
    try {
      const items = client.db('raw').collection('items');
      await items.insertOne({ _id: 1, tags: ['a'] });
      const [first] = await items.find({}, undefined, { raw: true }).toArray();
      const [second] = await items.find({}, undefined, { raw: true }).toArray();
      expect(second).toBe(first);
      const [copy] = await items.find({}).toArray();
      expect(copy).not.toBe(first);
      expect(copy['tags']).not.toBe(first['tags']);
      expect(copy).toEqual(first);
    } finally {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
