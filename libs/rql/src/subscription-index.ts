/**
 * Which sessions a changed document concerns, without evaluating every session's queries per write. Each
 * registered query is filed under one equality it requires (`owner_id == "u1"`, `status IN {...}`, `ANY tags
 * == "x"`), keyed by the value; a write looks up the values its before and after images hold on the indexed
 * fields and evaluates only the queries filed there, plus the few that constrain no field by equality.
 * The index narrows; the query's own matcher decides, so an index key may be shared by unequal values
 * (1 and 1.0 share one, as they must) but never split equal ones.
 */
import { type DocumentMatcher, type Plan, valuesAt } from './plan';
import { type TranslatedQuery } from './translate';
import { equalityKey } from './values';

type Document = Record<string, unknown>;

export type ViewChange = 'enter' | 'change' | 'leave';

export interface SessionMatch {
  sessionId: string;
  /** The document enters the session's view, changes inside it, or leaves it. */
  change: ViewChange;
}

interface Entry {
  sessionId: string;
  queryId: string;
  table: string;
  matches: DocumentMatcher;
  /** Where the entry is filed: a field and its keys, or the scan list. */
  constraint?: Constraint;
}

interface Constraint {
  path: string;
  keys: string[];
}

/** One equality the plan requires of every matching document, if it has one. */
export function equalityConstraint(plan: Plan): Constraint | undefined {
  switch (plan.op) {
    case 'field':
    case 'elements':
      if (plan.op === 'elements' && plan.quantifier !== 'any') return undefined;
      if (plan.test.op === '$eq') return { path: plan.path, keys: [equalityKey(plan.test.value)] };
      if (plan.test.op === '$in') return { path: plan.path, keys: [...new Set(plan.test.values.map(equalityKey))] };
      return undefined;
    case 'and': {
      let best: Constraint | undefined;
      for (const part of plan.of) {
        const candidate = equalityConstraint(part);
        if (candidate && (!best || candidate.keys.length < best.keys.length)) best = candidate;
      }
      return best;
    }
    case 'or': {
      const parts = plan.of.map(equalityConstraint);
      const [first] = parts;
      if (!first || parts.some((part) => !part || part.path !== first.path)) return undefined;
      return { path: first.path, keys: [...new Set(parts.flatMap((part) => part!.keys))] };
    }
    case 'const':
    case 'not':
    case 'size':
    case 'hasKey':
    case 'dictionaryValue':
      return undefined;
  }
}

/** The keys under which a document can satisfy an equality on `path` (its value, or each element of it). */
function documentKeys(doc: Document, path: string, into: Set<string>): void {
  for (const value of valuesAt(doc, path)) {
    if (Array.isArray(value)) for (const item of value) into.add(equalityKey(item));
    else into.add(equalityKey(value));
  }
}

interface TableIndex {
  byPath: Map<string, Map<string, Set<Entry>>>;
  scan: Set<Entry>;
}

function sessionChanges(entries: Iterable<Entry>, before: Document | undefined, after: Document | undefined): SessionMatch[] {
  const sessions = new Map<string, { before: boolean; after: boolean }>();
  for (const entry of entries) {
    let state = sessions.get(entry.sessionId);
    if (!state) sessions.set(entry.sessionId, (state = { before: false, after: false }));
    if (!state.before && before) state.before = entry.matches(before);
    if (!state.after && after) state.after = entry.matches(after);
  }
  const result: SessionMatch[] = [];
  for (const [sessionId, state] of sessions) {
    if (state.before && state.after) result.push({ sessionId, change: 'change' });
    else if (state.after) result.push({ sessionId, change: 'enter' });
    else if (state.before) result.push({ sessionId, change: 'leave' });
  }
  return result;
}

export class SubscriptionIndex {
  private readonly tables = new Map<string, TableIndex>();
  private readonly sessions = new Map<string, Map<string, Entry>>();

  /** Files a session's query (replacing the one it had under `queryId`). */
  add(sessionId: string, queryId: string, query: TranslatedQuery): void {
    this.remove(sessionId, queryId);
    const entry: Entry = { sessionId, queryId, table: query.table, matches: query.matches, constraint: equalityConstraint(query.plan) };
    let table = this.tables.get(query.table);
    if (!table) this.tables.set(query.table, (table = { byPath: new Map(), scan: new Set() }));
    if (entry.constraint) {
      let byKey = table.byPath.get(entry.constraint.path);
      if (!byKey) table.byPath.set(entry.constraint.path, (byKey = new Map()));
      for (const key of entry.constraint.keys) {
        let bucket = byKey.get(key);
        if (!bucket) byKey.set(key, (bucket = new Set()));
        bucket.add(entry);
      }
    } else {
      table.scan.add(entry);
    }
    let queries = this.sessions.get(sessionId);
    if (!queries) this.sessions.set(sessionId, (queries = new Map()));
    queries.set(queryId, entry);
  }

  remove(sessionId: string, queryId: string): void {
    const queries = this.sessions.get(sessionId);
    const entry = queries?.get(queryId);
    if (!queries || !entry) return;
    queries.delete(queryId);
    if (queries.size === 0) this.sessions.delete(sessionId);
    const table = this.tables.get(entry.table)!;
    if (!entry.constraint) {
      table.scan.delete(entry);
    } else {
      const byKey = table.byPath.get(entry.constraint.path)!;
      for (const key of entry.constraint.keys) {
        const bucket = byKey.get(key)!;
        bucket.delete(entry);
        if (bucket.size === 0) byKey.delete(key);
      }
      if (byKey.size === 0) table.byPath.delete(entry.constraint.path);
    }
    if (table.scan.size === 0 && table.byPath.size === 0) this.tables.delete(entry.table);
  }

  removeSession(sessionId: string): void {
    for (const queryId of [...(this.sessions.get(sessionId)?.keys() ?? [])]) this.remove(sessionId, queryId);
  }

  /** Queries filed for a table on the scan list (they constrain no field by equality). */
  scanCount(table: string): number {
    return this.tables.get(table)?.scan.size ?? 0;
  }

  /**
   * The sessions whose view a write to `table` concerns: `before` is the document before the write (absent
   * for an insert), `after` the document after it (absent for a delete).
   */
  match(table: string, before: Document | undefined, after: Document | undefined): SessionMatch[] {
    const index = this.tables.get(table);
    if (!index) return [];
    const candidates = new Set<Entry>(index.scan);
    const keys = new Set<string>();
    for (const [path, byKey] of index.byPath) {
      keys.clear();
      if (before) documentKeys(before, path, keys);
      if (after) documentKeys(after, path, keys);
      for (const key of keys) {
        const bucket = byKey.get(key);
        if (bucket) for (const entry of bucket) candidates.add(entry);
      }
    }
    return sessionChanges(candidates, before, after);
  }
}

/** The reference answer: every query of every session evaluated (for tests and the benchmark's baseline). */
export function matchByScan(
  queries: Iterable<{ sessionId: string; query: TranslatedQuery }>,
  table: string,
  before: Document | undefined,
  after: Document | undefined,
): SessionMatch[] {
  const entries: Entry[] = [];
  for (const { sessionId, query } of queries) if (query.table === table) entries.push({ sessionId, queryId: '', table, matches: query.matches });
  return sessionChanges(entries, before, after);
}
