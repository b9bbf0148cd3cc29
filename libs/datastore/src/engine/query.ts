/**
 * Query planning and execution over a CollectionState: picks an index for equality, $in and range
 * conditions (a point query by `_id` is a map lookup, never a scan), walks an index in order to satisfy a
 * single-field sort with a limit, and falls back to a collection scan. Candidates are always re-checked
 * with the full filter, so an index only has to return a superset.
 */
import { type SortSpec } from '../api/data-source';
import { MaxKey } from 'bson';
import { type Document, activeStringComparison, compareValues, holdsString, isPlainObject, typeRank } from '../bson/values';
import { type Collation, sameComparison, withCollation } from './collation';
import { isRegexValue } from '../bson/regex';
import { type CollectionState, type IndexEntry, type IndexState, type StoredRecord } from './collection-state';
import { compileFilter } from './mingo';
import { sortDocuments } from './sort';

export { checkSort, sortDocuments } from './sort';

interface Range {
  lo?: unknown;
  loInc: boolean;
  hi?: unknown;
  hiInc: boolean;
  rank: number;
}

type Bounds = { kind: 'points'; values: unknown[] } | { kind: 'range'; range: Range };

interface Candidate {
  index: IndexState;
  bounds: Bounds;
  score: number;
  /**
   * A compound range past an equality prefix yields its records ordered by the index's next field (the
   * prefix fixes the fields before it): a sort on that field alone needs no sorting.
   */
  orders?: string;
}

const RANGE_RANKS = new Set([2, 3, 7, 8, 9, 10]);

function isOperatorObject(value: unknown): value is Document {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys[0].startsWith('$');
}

/**
 * A value an equality can look up in an index. Never a regex: `{f: /x/}` matches strings by pattern (a
 * BSON regex from EJSON or the wire is the same condition as a RegExp literal), and `$eq: /x/` matches only
 * stored regex values, which a scan finds as well.
 */
function isPointValue(value: unknown): boolean {
  return !isRegexValue(value) && !(isPlainObject(value) && (value as { _bsontype?: unknown })._bsontype === undefined && Object.keys(value).some((k) => k.startsWith('$')));
}

/** The $or operands ANDed at the top of a filter (including inside $and). */
function orConditions(filter: Document, out: Document[][] = []): Document[][] {
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(value)) {
      for (const sub of value) if (isPlainObject(sub)) orConditions(sub, out);
    } else if (key === '$or' && Array.isArray(value) && value.length > 0 && value.every(isPlainObject)) out.push(value);
  }
  return out;
}

/** Field conditions ANDed at the top of a filter (including inside $and). */
function fieldConditions(filter: Document, out: [string, unknown][] = []): [string, unknown][] {
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(value)) {
      for (const sub of value) if (isPlainObject(sub)) fieldConditions(sub, out);
    } else if (!key.startsWith('$')) out.push([key, value]);
  }
  return out;
}

function boundsFor(condition: unknown): { bounds: Bounds; score: number } | undefined {
  if (!isOperatorObject(condition)) {
    if (isRegexValue(condition)) return undefined;
    return { bounds: { kind: 'points', values: [condition] }, score: 2 };
  }
  if ('$eq' in condition && isPointValue(condition.$eq)) {
    return { bounds: { kind: 'points', values: [condition.$eq] }, score: 2 };
  }
  if ('$in' in condition && Array.isArray(condition.$in)) {
    const values = condition.$in as unknown[];
    if (values.every(isPointValue)) return { bounds: { kind: 'points', values }, score: 3 };
  }
  const range: Range = { loInc: false, hiInc: false, rank: -1 };
  for (const [op, value] of Object.entries(condition)) {
    const rank = typeRank(value);
    if (!RANGE_RANKS.has(rank) || (range.rank !== -1 && range.rank !== rank)) continue;
    if (op === '$gt' || op === '$gte') {
      if (range.lo === undefined || compareValues(value, range.lo) > 0) {
        range.lo = value;
        range.loInc = op === '$gte';
      }
    } else if (op === '$lt' || op === '$lte') {
      if (range.hi === undefined || compareValues(value, range.hi) < 0) {
        range.hi = value;
        range.hiInc = op === '$lte';
      }
    } else continue;
    range.rank = rank;
  }
  if (range.rank === -1) return undefined;
  return { bounds: { kind: 'range', range }, score: 4 };
}

function isPlainPoint(value: unknown): boolean {
  return value !== undefined && !Array.isArray(value) && !isRegexValue(value) && !isOperatorObject(value) && !isPlainObject(value);
}

/**
 * A compound index whose leading fields all have equality conditions: a point; or a prefix range, narrowed
 * by a range condition on the next field (`{app_id: a, _id: {$lt: x}}` on `{app_id: 1, _id: -1}` reads the
 * keys from `[a]` to `[a, x]`, not every key of `a`). Keys compare as arrays, element by element and a
 * prefix first, and the field directions only order results, so the bounds hold for any direction.
 */
function compoundCandidate(index: IndexState, conditions: Map<string, unknown>): Candidate | undefined {
  if (index.fields.length < 2 || index.multikey) return undefined;
  const prefix: unknown[] = [];
  for (const field of index.fields) {
    const condition = conditions.get(field);
    const value = isOperatorObject(condition) && Object.keys(condition).length === 1 && '$eq' in condition ? condition.$eq : condition;
    if (!isPlainPoint(value)) break;
    prefix.push(value);
  }
  if (prefix.length === 0) return undefined;
  // A sparse index leaves out documents missing the fields, which an equality to null matches.
  if (index.sparse && prefix.includes(null)) return undefined;
  if (prefix.length === index.fields.length) return { index, bounds: { kind: 'points', values: [prefix] }, score: index.unique ? 1 : 2 };
  const next = conditions.get(index.fields[prefix.length]);
  const narrowed = next === undefined ? undefined : boundsFor(next);
  if (narrowed?.bounds.kind === 'range') {
    const { lo, loInc, hi, hiInc } = narrowed.bounds.range;
    // Keys with more fields after this one sort after `[...prefix, hi]`: an inclusive end takes them too.
    const later = prefix.length + 1 < index.fields.length;
    const range: Range = {
      lo: lo === undefined ? prefix : [...prefix, lo],
      loInc: lo === undefined ? true : loInc,
      hi: hi === undefined ? [...prefix, new MaxKey()] : hiInc && later ? [...prefix, hi, new MaxKey()] : [...prefix, hi],
      hiInc: hi === undefined ? true : hiInc,
      rank: 5,
    };
    return { index, bounds: { kind: 'range', range }, score: 3.25, orders: index.fields[prefix.length] };
  }
  return { index, bounds: { kind: 'range', range: { lo: prefix, loInc: true, hi: [...prefix, new MaxKey()], hiInc: true, rank: 5 } }, score: 3.5, orders: index.fields[prefix.length] };
}

/** True when the index orders strings as the operation compares them (both binary, or the same collation). */
function ordersAsQuery(index: IndexState): boolean {
  return sameComparison(index.comparison, activeStringComparison());
}

/**
 * True when an index can answer `bounds` under the operation's comparison: always when it orders strings
 * the same way; otherwise only for bounds holding no string (numbers, dates, ids sort alike in both orders),
 * as MongoDB uses an index of another collation.
 */
function usable(index: IndexState, bounds: Bounds): boolean {
  if (ordersAsQuery(index)) return true;
  return bounds.kind === 'points' ? !bounds.values.some(holdsString) : !holdsString(bounds.range.lo) && !holdsString(bounds.range.hi) && bounds.range.rank !== 3;
}

function chooseIndex(coll: CollectionState, filter: Document): Candidate | undefined {
  let best: Candidate | undefined;
  const conditions = new Map(fieldConditions(filter));
  for (const index of coll.indexes.values()) {
    const found = compoundCandidate(index, conditions);
    if (found && usable(index, found.bounds) && (!best || found.score < best.score)) best = found;
  }
  for (const [field, condition] of fieldConditions(filter)) {
    for (const index of coll.indexes.values()) {
      if (index.single !== field) continue;
      const found = boundsFor(condition);
      if (!found || !usable(index, found.bounds)) continue;
      if (index.sparse && found.bounds.kind === 'points' && found.bounds.values.some((v) => v === null)) continue;
      if (found.bounds.kind === 'range' && index.multikey && found.bounds.range.lo !== undefined) {
        // Different array elements may satisfy each bound: an array index can only use one side.
        found.bounds = { kind: 'range', range: { ...found.bounds.range, hi: undefined, hiInc: false } };
      }
      let score = found.score;
      if (score === 2 && index.name === '_id_') score = 0;
      else if (score === 2 && index.unique) score = 1;
      if (!best || score < best.score) best = { index, bounds: found.bounds, score };
    }
  }
  return best;
}

/**
 * An index plan for each branch of one of the filter's top-level $or operands, when every branch has one:
 * the union of their records is a superset of the filter's matches.
 */
function orUnion(coll: CollectionState, filter: Document): Candidate[] | undefined {
  for (const branches of orConditions(filter)) {
    const found: Candidate[] = [];
    for (const branch of branches) {
      const candidate = chooseIndex(coll, branch);
      if (!candidate) break;
      found.push(candidate);
    }
    if (found.length === branches.length) return found;
  }
  return undefined;
}

function candidateEntries(candidate: Candidate): Iterable<IndexEntry> {
  return candidate.bounds.kind === 'points' ? scanPoints(candidate.index, candidate.bounds.values) : scanRange(candidate.index, candidate.bounds.range, false);
}

/** The records of several index plans, each once, in record (insertion) order. */
function unionRecords(candidates: Candidate[]): StoredRecord[] {
  const byRid = new Map<number, StoredRecord>();
  for (const candidate of candidates) for (const e of candidateEntries(candidate)) byRid.set(e.rec.rid, e.rec);
  return [...byRid.values()].sort((a, b) => a.rid - b.rid);
}

function scanPoints(index: IndexState, values: unknown[]): IndexEntry[] {
  if (values.length === 1) return index.equal(values[0]);
  const sorted = values.slice().sort(compareValues);
  const out: IndexEntry[] = [];
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0 && compareValues(sorted[i - 1], sorted[i]) === 0) continue;
    out.push(...index.equal(sorted[i]));
  }
  return out;
}

function* scanRange(index: IndexState, range: Range | undefined, reverse: boolean): Generator<IndexEntry> {
  const list = index.list;
  if (!range) {
    yield* list.scan(reverse ? list.end() : list.start(), reverse);
    return;
  }
  const { lo, loInc, hi, hiInc, rank } = range;
  const belowLo = (e: IndexEntry) => {
    const r = typeRank(e.key);
    if (r !== rank) return r < rank;
    return lo !== undefined && (loInc ? compareValues(e.key, lo) < 0 : compareValues(e.key, lo) <= 0);
  };
  const aboveHi = (e: IndexEntry) => {
    const r = typeRank(e.key);
    if (r !== rank) return r > rank;
    return hi !== undefined && (hiInc ? compareValues(e.key, hi) > 0 : compareValues(e.key, hi) >= 0);
  };
  if (!reverse) {
    for (const e of list.scan(list.lowerBound(belowLo))) {
      if (aboveHi(e)) return;
      yield e;
    }
  } else {
    for (const e of list.scan(list.lowerBound((e) => !aboveHi(e)), true)) {
      if (belowLo(e)) return;
      yield e;
    }
  }
}

function* uniqueRecords(entries: Iterable<IndexEntry>, multikey: boolean): Generator<StoredRecord> {
  if (!multikey) {
    for (const e of entries) yield e.rec;
    return;
  }
  const seen = new Set<number>();
  for (const e of entries) {
    if (seen.has(e.rec.rid)) continue;
    seen.add(e.rec.rid);
    yield e.rec;
  }
}

const RANGE_OPS = new Set(['$gt', '$gte', '$lt', '$lte']);

/**
 * True when the index bounds select exactly the documents the filter matches, so they need no re-check:
 * the filter is one condition on the indexed field, the index holds no arrays, and the condition is an
 * equality to a plain value or a range within one type.
 */
function isExact(filter: Document, candidate: Candidate): boolean {
  const keys = Object.keys(filter);
  if (keys.length !== 1 || keys[0] !== candidate.index.single || candidate.index.multikey) return false;
  const condition = filter[keys[0]];
  if (candidate.bounds.kind === 'points') {
    const values = candidate.bounds.values;
    const plain = (v: unknown) => v !== null && v !== undefined && !Array.isArray(v) && !isPlainObject(v) && !isRegexValue(v);
    if (!values.every(plain)) return false;
    return !isOperatorObject(condition) || Object.keys(condition).length === 1;
  }
  return isOperatorObject(condition) && Object.keys(condition).every((op) => RANGE_OPS.has(op) && typeRank(condition[op]) === (candidate.bounds as { range: Range }).range.rank);
}

export interface Plan {
  records: Iterable<StoredRecord>;
  /** The records already come in the requested sort order. */
  sorted: boolean;
  /** Every record returned matches the filter (no re-check needed). */
  exact: boolean;
  description: string;
}

function exactIdLookup(filter: Document): unknown {
  const keys = Object.keys(filter);
  if (keys.length !== 1 || keys[0] !== '_id') return undefined;
  const value = filter._id;
  if (value === null || value === undefined || Array.isArray(value) || isRegexValue(value)) return undefined;
  if (isPlainObject(value)) return undefined;
  return value;
}

/**
 * Chooses how to find the records for `filter` (and `sort`, when an index can give its order). Under an
 * operation's collation an index is used for strings only when it has the same collation (see usable).
 */
export function plan(coll: CollectionState, filter: Document, sort?: SortSpec): Plan {
  const id = exactIdLookup(filter);
  // Records are keyed by binary `_id`: a string `_id` under a collation goes through the `_id` index instead.
  if (id !== undefined && (activeStringComparison() === undefined || !holdsString(id))) {
    const rec = coll.get(id);
    return { records: rec ? [rec] : [], sorted: true, exact: true, description: 'IDHACK' };
  }
  const candidate = chooseIndex(coll, filter);
  const sortFields = sort ? Object.keys(sort) : [];
  const sortIndex =
    sortFields.length === 1 ? [...coll.indexes.values()].find((i) => i.single === sortFields[0] && !i.multikey && ordersAsQuery(i)) : undefined;
  const reverse = sortIndex ? sort?.[sortFields[0]] === -1 : false;
  if (candidate?.orders !== undefined && candidate.bounds.kind === 'range' && sortFields.length === 1 && candidate.orders === sortFields[0] && ordersAsQuery(candidate.index)) {
    // `{app_id: a}` sorted by `_id` on `{app_id: 1, _id: -1}`: the keys of `a` in order (descending: backwards).
    return {
      records: uniqueRecords(scanRange(candidate.index, candidate.bounds.range, sort?.[sortFields[0]] === -1), false),
      sorted: true,
      exact: false,
      description: `IXSCAN ${candidate.index.name}`,
    };
  }
  if (candidate && (candidate.bounds.kind === 'points' || !sortIndex || candidate.index !== sortIndex)) {
    if (candidate.bounds.kind === 'points') {
      return {
        records: uniqueRecords(scanPoints(candidate.index, candidate.bounds.values), candidate.index.multikey || candidate.bounds.values.length > 1),
        sorted: sortFields.length === 0,
        exact: isExact(filter, candidate),
        description: `IXSCAN ${candidate.index.name}`,
      };
    }
    if (!sortIndex) {
      return {
        records: uniqueRecords(scanRange(candidate.index, candidate.bounds.range, false), candidate.index.multikey),
        sorted: sortFields.length === 0,
        exact: false,
        description: `IXSCAN ${candidate.index.name}`,
      };
    }
  }
  const union = candidate || sortIndex ? undefined : orUnion(coll, filter);
  if (union) {
    return { records: unionRecords(union), sorted: sortFields.length === 0, exact: false, description: `OR (${union.map((c) => `IXSCAN ${c.index.name}`).join(', ')})` };
  }
  if (sortIndex) {
    const range = candidate?.index === sortIndex && candidate.bounds.kind === 'range' ? candidate.bounds.range : undefined;
    // Documents of other types than the range's still sort around it, so only a range on the sort field itself narrows.
    const exact = range !== undefined && candidate !== undefined && isExact(filter, candidate);
    return { records: uniqueRecords(scanRange(sortIndex, range, reverse), false), sorted: true, exact, description: `IXSCAN ${sortIndex.name} (sort)` };
  }
  return { records: coll.records.values(), sorted: sortFields.length === 0, exact: false, description: 'COLLSCAN' };
}

export interface SelectOptions {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
  /** `let` variables for `$expr` in the filter. */
  variables?: Document;
  /** The operation's collation (strings in the filter and sort compared by it); absent: binary. */
  collation?: Collation;
}

/**
 * What one query did (explain's `executionStats`): the plan it ran, and how many index keys and documents it
 * examined. The records a plan yields are each one document fetched, and one index key unless it scans the collection.
 */
export interface SelectStats {
  plan: string;
  keysExamined: number;
  docsExamined: number;
}

function* counted(records: Iterable<StoredRecord>, stats: SelectStats, keyed: boolean): Generator<StoredRecord> {
  for (const rec of records) {
    stats.docsExamined++;
    if (keyed) stats.keysExamined++;
    yield rec;
  }
}

/** One query the embedded engine ran: where, with what plan, what it examined and how many it returned. */
export interface ObservedSelect extends SelectStats {
  namespace: string;
  returned: number;
}

let selectObserver: ((observed: ObservedSelect) => void) | undefined;

/**
 * Reports every query of the embedded engine in this process to `observer` (one at a time; undefined stops).
 * For tests and diagnostics that must show what a query examined, as explain does for one query; unset, it costs one check.
 */
export function observeSelects(observer: ((observed: ObservedSelect) => void) | undefined): void {
  selectObserver = observer;
}

/** The stored documents matching `filter`, sorted, skipped and limited (not copied: callers copy). */
export function select(coll: CollectionState, filter: Document, options: SelectOptions = {}, stats?: SelectStats): StoredRecord[] {
  const run = (into?: SelectStats): StoredRecord[] =>
    options.collation === undefined ? selectRecords(coll, filter, options, into) : withCollation(options.collation, () => selectRecords(coll, filter, options, into));
  const observer = selectObserver;
  if (!observer) return run(stats);
  const observed: SelectStats = stats ?? { plan: 'EOF', keysExamined: 0, docsExamined: 0 };
  const out = run(observed);
  observer({ namespace: `${coll.dbName}.${coll.name}`, plan: observed.plan, keysExamined: observed.keysExamined, docsExamined: observed.docsExamined, returned: out.length });
  return out;
}

function selectRecords(coll: CollectionState, filter: Document, options: SelectOptions, stats?: SelectStats): StoredRecord[] {
  const sort = options.sort && Object.keys(options.sort).length > 0 ? options.sort : undefined;
  const skip = Math.max(0, options.skip ?? 0);
  const limit = options.limit ? Math.abs(options.limit) : 0;
  const p = plan(coll, filter, sort);
  const matches = p.exact ? undefined : compileFilter(filter, options.variables);
  const out: StoredRecord[] = [];
  let records = p.records;
  if (stats) {
    stats.plan = p.description;
    records = counted(records, stats, p.description !== 'COLLSCAN');
  }
  if (p.sorted) {
    let skipped = 0;
    for (const rec of records) {
      if (matches && !matches(rec.doc)) continue;
      if (skipped < skip) {
        skipped++;
        continue;
      }
      out.push(rec);
      if (limit && out.length >= limit) break;
    }
    return out;
  }
  for (const rec of records) if (!matches || matches(rec.doc)) out.push(rec);
  const byDoc = new Map(out.map((r) => [r.doc, r]));
  const sorted = sortDocuments(out.map((r) => r.doc), sort ?? {});
  const window = sorted.slice(skip, limit ? skip + limit : undefined);
  return window.map((d) => byDoc.get(d) as StoredRecord);
}
