import { compileDocumentFilter } from '@tessera/datastore';
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
});
