/**
 * RQL subscription matching benchmark (`npm run bench:rql`): 1,000 sessions, each subscribed with a different
 * flexible-sync query (most pin an owner, a name list or a tag by equality; a few constrain only ranges), and
 * a stream of writes (before and after images) matched against them. The subscription index is measured
 * beside the baseline, in the same run: evaluating every session's query per write (what the index avoids),
 * with the same per-session bookkeeping. Both answers are compared for every write before timing. The last line gives the speed-up.
 */
import { ObjectId } from 'bson';
import { SubscriptionIndex, SubscriptionScan, parseQuery, translateQuery, type RqlTable, type SessionMatch } from '@tessera/rql';

const SESSIONS = Number(process.env['BENCH_SESSIONS'] ?? 1_000);
const WRITES = 2_000;
const SLICE = 100;
const REPEATS = Number(process.env['BENCH_REPEATS'] ?? 15);

const table: RqlTable = {
  name: 'Item',
  fields: {
    _id: { type: 'objectId' },
    owner: { type: 'objectId' },
    name: { type: 'string' },
    n: { type: 'int' },
    score: { type: 'double' },
    done: { type: 'bool' },
    tags: { type: 'string', collection: 'list' },
  },
};
const queryable = { queryable: ['owner', 'name', 'n', 'score', 'done', 'tags'] };

/** A deterministic pseudo-random sequence, so every run measures the same work. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const owner = (i: number) => (0x100000 + i).toString(16).padStart(24, '0');

function queryText(i: number): string {
  const kind = i % 20;
  if (kind < 14) return `owner == oid(${owner(i % 500)}) && n > ${i % 7}`;
  if (kind < 17) return `name IN {'name${i % 50}', 'name${(i + 1) % 50}'} AND done == false`;
  if (kind < 19) return `ANY tags == 'tag${i % 100}' && score >= ${(i % 10) / 2}`;
  return `n > ${i % 97} && score < 2.5`;
}

function document(random: () => number, id: ObjectId): Record<string, unknown> {
  return {
    _id: id,
    owner: new ObjectId(owner(Math.floor(random() * 500))),
    name: `name${Math.floor(random() * 50)}`,
    n: Math.floor(random() * 100),
    score: Math.floor(random() * 10) / 2,
    done: random() < 0.5,
    tags: [`tag${Math.floor(random() * 100)}`, `tag${Math.floor(random() * 100)}`],
  };
}

const sorted = (matches: SessionMatch[]) => JSON.stringify([...matches].sort((a, b) => a.sessionId.localeCompare(b.sessionId)));

function main(): void {
  const random = prng(17);
  const index = new SubscriptionIndex();
  const scan = new SubscriptionScan();
  const registering = process.hrtime.bigint();
  for (let i = 0; i < SESSIONS; i += 1) {
    const query = translateQuery(parseQuery(queryText(i)), table, queryable);
    index.add(`session-${i}`, 'q', query);
    scan.add(`session-${i}`, 'q', query);
  }
  const registerMs = Number(process.hrtime.bigint() - registering) / 1e6;

  // Writes: an insert, an update that moves the document (new owner, name or n), or a delete.
  const writes: [Record<string, unknown> | undefined, Record<string, unknown> | undefined][] = [];
  for (let i = 0; i < WRITES; i += 1) {
    const id = new ObjectId();
    const before = document(random, id);
    const after = { ...document(random, id), owner: random() < 0.5 ? before['owner'] : new ObjectId(owner(Math.floor(random() * 500))) };
    const roll = random();
    writes.push(roll < 0.2 ? [undefined, after] : roll < 0.3 ? [before, undefined] : [before, after]);
  }

  let affected = 0;
  for (const [before, after] of writes) {
    const indexed = sorted(index.match('Item', before, after));
    const scanned = sorted(scan.match('Item', before, after));
    if (indexed !== scanned) throw new Error(`the index and the scan disagree on a write: ${indexed} vs ${scanned}`);
    affected += (JSON.parse(scanned) as unknown[]).length;
  }

  // Many short trials, because on a loaded machine only short quiet windows show what a path costs: the
  // writes are cut into slices, each slice is matched REPEATS times by each path (alternating, and which goes
  // first), and a path's cost is the sum over slices of its best time on the slice.
  const measure = (match: (before?: Record<string, unknown>, after?: Record<string, unknown>) => SessionMatch[], slice: typeof writes): number => {
    const started = process.hrtime.bigint();
    for (const [before, after] of slice) match(before, after);
    return Number(process.hrtime.bigint() - started) / 1e3;
  };
  const byIndex = (before?: Record<string, unknown>, after?: Record<string, unknown>) => index.match('Item', before, after);
  const byScan = (before?: Record<string, unknown>, after?: Record<string, unknown>) => scan.match('Item', before, after);
  let indexTotal = 0;
  let scanTotal = 0;
  for (let start = 0; start < WRITES; start += SLICE) {
    const slice = writes.slice(start, start + SLICE);
    let indexBest = Infinity;
    let scanBest = Infinity;
    for (let trial = 0; trial < REPEATS; trial += 1) {
      if (trial % 2 === 0) {
        scanBest = Math.min(scanBest, measure(byScan, slice));
        indexBest = Math.min(indexBest, measure(byIndex, slice));
      } else {
        indexBest = Math.min(indexBest, measure(byIndex, slice));
        scanBest = Math.min(scanBest, measure(byScan, slice));
      }
    }
    indexTotal += indexBest;
    scanTotal += scanBest;
  }
  const indexUs = indexTotal / WRITES;
  const scanUs = scanTotal / WRITES;
  console.log(`${SESSIONS} sessions with different queries (${index.scanCount('Item')} on the scan list), registered in ${registerMs.toFixed(1)} ms`);
  console.log(`${WRITES} writes, ${(affected / WRITES).toFixed(2)} sessions concerned per write on average; both answers identical for every write`);
  console.log(`  scan of every session (baseline): ${scanUs.toFixed(1)} us per write`);
  console.log(`  subscription index:               ${indexUs.toFixed(1)} us per write`);
  console.log(`index speed-up over the scan: ${(scanUs / indexUs).toFixed(1)}x (per slice of ${SLICE} writes, best of ${REPEATS} alternating trials)`);
}

main();
