import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type SessionMatch, SubscriptionIndex, SubscriptionScan, equalityConstraint } from './subscription-index';
import { indexableItemQuery, itemDocument, servedItemQuery } from './testing';
import { type TranslatedQuery } from './translate';

const translate = servedItemQuery;

function served(text: string): TranslatedQuery {
  const query = translate(text);
  if (!query) throw new Error(`refused: ${text}`);
  return query;
}

const sorted = (matches: SessionMatch[]) => [...matches].sort((a, b) => a.sessionId.localeCompare(b.sessionId));

describe('SubscriptionIndex', () => {
  it('files a query under an equality it requires, or on the scan list', () => {
    expect(equalityConstraint(served("name == 'a' && n > 1").plan)).toEqual({ path: 'name', keys: ['s:a'] });
    expect(equalityConstraint(served("n > 1 AND name IN {'a', 'b'}").plan)).toEqual({ path: 'name', keys: ['s:a', 's:b'] });
    expect(equalityConstraint(served("name == 'a' || name == 'b'").plan)).toEqual({ path: 'name', keys: ['s:a', 's:b'] });
    expect(equalityConstraint(served("ANY tags == 'x'").plan)).toEqual({ path: 'tags', keys: ['s:x'] });
    expect(equalityConstraint(served('n == 1.0').plan)).toEqual({ path: 'n', keys: ['n:1'] });
    expect(equalityConstraint(served("name == 'a' || n == 1").plan)).toBeUndefined();
    expect(equalityConstraint(served("name != 'a'").plan)).toBeUndefined();
    expect(equalityConstraint(served("ALL tags == 'x'").plan)).toBeUndefined();
    const index = new SubscriptionIndex();
    index.add('s1', 'q1', served("name == 'a'"));
    index.add('s2', 'q1', served('n > 1'));
    expect(index.scanCount('Item')).toBe(1);
  });

  it('tells each session whether a write enters, changes in, or leaves its view', () => {
    const index = new SubscriptionIndex();
    index.add('alice', 'mine', served("name == 'alice'"));
    index.add('bob', 'mine', served("name == 'bob'"));
    index.add('carol', 'big', served('n > 2'));
    const before = { _id: 1, name: 'alice', n: 5 };
    const after = { _id: 1, name: 'bob', n: 1 };
    expect(sorted(index.match('Item', before, after))).toEqual([
      { sessionId: 'alice', change: 'leave' },
      { sessionId: 'bob', change: 'enter' },
      { sessionId: 'carol', change: 'leave' },
    ]);
    expect(index.match('Item', undefined, { _id: 2, name: 'alice', n: 0 })).toEqual([{ sessionId: 'alice', change: 'enter' }]);
    expect(index.match('Item', { _id: 2, name: 'alice', n: 0 }, { _id: 2, name: 'alice', n: 1 })).toEqual([{ sessionId: 'alice', change: 'change' }]);
    expect(index.match('Other', before, after)).toEqual([]);
  });

  it('forgets removed queries and sessions', () => {
    const index = new SubscriptionIndex();
    index.add('s1', 'a', served("name == 'x'"));
    index.add('s1', 'b', served('n > 0'));
    index.add('s2', 'a', served("name == 'x'"));
    index.remove('s1', 'a');
    expect(sorted(index.match('Item', undefined, { name: 'x', n: 0 }))).toEqual([{ sessionId: 's2', change: 'enter' }]);
    index.add('s2', 'a', served("name == 'y'")); // replaces s2's query a
    expect(index.match('Item', undefined, { name: 'x', n: 0 })).toEqual([]);
    index.removeSession('s1');
    index.removeSession('s2');
    expect(index.match('Item', undefined, { name: 'y', n: 1 })).toEqual([]);
    expect(index.scanCount('Item')).toBe(0);
  });

  it('gives the brute-force answer for random sessions, queries and writes', () => {
    let affected = 0;
    let writes = 0;
    fc.assert(
      fc.property(
        fc.array(fc.array(indexableItemQuery, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.tuple(fc.option(itemDocument), fc.option(itemDocument)), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        (sessions, changes, removals) => {
          const index = new SubscriptionIndex();
          const scan = new SubscriptionScan();
          const live = new Map<string, string[]>();
          sessions.forEach((texts, s) => {
            texts.forEach((text, q) => {
              const query = translate(text);
              if (!query) return;
              index.add(`s${s}`, `q${q}`, query);
              scan.add(`s${s}`, `q${q}`, query);
              live.set(`s${s}`, [...(live.get(`s${s}`) ?? []), `q${q}`]);
            });
          });
          for (const removal of removals) {
            const sessionId = `s${removal % sessions.length}`;
            const queryId = live.get(sessionId)?.shift();
            if (!queryId) continue;
            index.remove(sessionId, queryId);
            scan.remove(sessionId, queryId);
          }
          for (const [before, after] of changes) {
            const expected = sorted(scan.match('Item', before ?? undefined, after ?? undefined));
            expect(sorted(index.match('Item', before ?? undefined, after ?? undefined))).toEqual(expected);
            writes += 1;
            affected += expected.length;
          }
        },
      ),
      { numRuns: 500 },
    );
    // Writes must concern some sessions often, or agreeing on empty answers proves little.
    expect(affected).toBeGreaterThan(writes);
  });
});
