import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileDocumentFilter, openEmbeddedClient } from '@tessera/datastore';
import { itemDocument, itemQuery, servedItemQuery } from '@tessera/rql/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/**
 * The in-process matcher a write is matched with and the filter the datastore runs for a bootstrap must
 * select the same documents: random served queries against random documents, through the datastore's own
 * query engine (the embedded engine's matcher, which follows MongoDB's query semantics).
 */
describe('RQL translation agrees with the datastore', () => {
  it('matches a document exactly when the translated filter selects it', () => {
    let served = 0;
    let refused = 0;
    let matched = 0;
    let checked = 0;
    fc.assert(
      fc.property(itemQuery, fc.array(itemDocument, { minLength: 1, maxLength: 8 }), (text, documents) => {
        const query = servedItemQuery(text);
        if (!query) {
          refused += 1;
          return;
        }
        served += 1;
        const datastore = compileDocumentFilter(query.filter);
        for (const doc of documents) {
          const expected = datastore(doc);
          expect(query.matches(doc), `${text}\n${JSON.stringify(query.filter)}\n${JSON.stringify(doc)}`).toBe(expected);
          checked += 1;
          if (expected) matched += 1;
        }
      }),
      { numRuns: 3000 },
    );
    // The generators must exercise both outcomes and mostly served queries, or the property proves little.
    expect(served).toBeGreaterThan(refused * 3);
    expect(matched).toBeGreaterThan(checked / 10);
    expect(matched).toBeLessThan(checked * 0.9);
  });

  it('selects through the embedded datastore, indexes and all, the documents the matcher accepts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-rql-'));
    const client = openEmbeddedClient(dir);
    try {
      const items = client.db('app').collection('Item');
      await items.createIndex({ owner: 1 });
      await items.createIndex({ name: 1 });
      await items.createIndex({ tags: 1 });
      await items.createIndex({ n: 1, score: -1 });
      const documents = fc.sample(itemDocument, { numRuns: 300, seed: 7 }).map((doc, i) => ({ ...doc, _id: i }));
      await items.insertMany(documents);
      let served = 0;
      for (const text of fc.sample(itemQuery, { numRuns: 400, seed: 11 })) {
        const query = servedItemQuery(text);
        if (!query) continue;
        served += 1;
        const found = (await items.find(query.filter).toArray()).map((doc) => doc['_id'] as number).sort((a, b) => a - b);
        expect(found, `${text}\n${JSON.stringify(query.filter)}`).toEqual(documents.filter((doc) => query.matches(doc)).map((doc) => doc._id));
      }
      expect(served).toBeGreaterThan(200);
    } finally {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
