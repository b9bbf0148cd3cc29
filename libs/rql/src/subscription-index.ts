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

interface SessionState {
  sessionId: string;
  queries: Map<string, Entry>;
  /** The match call that last touched the session, and what it found so far. */
  epoch: number;
  before: boolean;
  after: boolean;
}

interface Entry {
  session: SessionState;
  queryId: string;
  table: string;
  matches: DocumentMatcher;
  /** Where the entry is filed: a field and its keys, or the scan list. */
  constraint?: Constraint;
  /** The match call that last took the entry as a candidate. */
  epoch: number;
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

/**
 * Sessions and their queries, and the evaluation of candidate queries into per-session view changes. The
 * per-session state is stamped with the call's epoch instead of collected in a fresh map per write.
 */
abstract class SessionQueries {
  protected readonly sessions = new Map<string, SessionState>();
  private epoch = 0;

  /** Files a session's query (replacing the one it had under `queryId`). */
  add(sessionId: string, queryId: string, query: TranslatedQuery): void {
    this.remove(sessionId, queryId);
    let session = this.sessions.get(sessionId);
    if (!session) this.sessions.set(sessionId, (session = { sessionId, queries: new Map(), epoch: 0, before: false, after: false }));
    const entry: Entry = { session, queryId, table: query.table, matches: query.matches, constraint: equalityConstraint(query.plan), epoch: 0 };
    session.queries.set(queryId, entry);
    this.file(entry);
  }

  remove(sessionId: string, queryId: string): void {
    const session = this.sessions.get(sessionId);
    const entry = session?.queries.get(queryId);
    if (!session || !entry) return;
    session.queries.delete(queryId);
    if (session.queries.size === 0) this.sessions.delete(sessionId);
    this.unfile(entry);
  }

  removeSession(sessionId: string): void {
    for (const queryId of [...(this.sessions.get(sessionId)?.queries.keys() ?? [])]) this.remove(sessionId, queryId);
  }

  /**
   * The sessions whose view a write to `table` concerns: `before` is the document before the write (absent
   * for an insert), `after` the document after it (absent for a delete).
   */
  match(table: string, before: Document | undefined, after: Document | undefined): SessionMatch[] {
    const epoch = ++this.epoch;
    const touched: SessionState[] = [];
    this.forEachCandidate(table, before, after, (entry) => {
      if (entry.epoch === epoch) return;
      entry.epoch = epoch;
      const session = entry.session;
      if (session.epoch !== epoch) {
        session.epoch = epoch;
        session.before = false;
        session.after = false;
        touched.push(session);
      }
      if (!session.before && before) session.before = entry.matches(before);
      if (!session.after && after) session.after = entry.matches(after);
    });
    const result: SessionMatch[] = [];
    for (const session of touched) {
      if (session.before && session.after) result.push({ sessionId: session.sessionId, change: 'change' });
      else if (session.after) result.push({ sessionId: session.sessionId, change: 'enter' });
      else if (session.before) result.push({ sessionId: session.sessionId, change: 'leave' });
    }
    return result;
  }

  protected abstract file(entry: Entry): void;
  protected abstract unfile(entry: Entry): void;
  protected abstract forEachCandidate(table: string, before: Document | undefined, after: Document | undefined, visit: (entry: Entry) => void): void;
}

export class SubscriptionIndex extends SessionQueries {
  private readonly tables = new Map<string, TableIndex>();

  /** Queries filed for a table on the scan list (they constrain no field by equality). */
  scanCount(table: string): number {
    return this.tables.get(table)?.scan.size ?? 0;
  }

  protected file(entry: Entry): void {
    let table = this.tables.get(entry.table);
    if (!table) this.tables.set(entry.table, (table = { byPath: new Map(), scan: new Set() }));
    if (!entry.constraint) {
      table.scan.add(entry);
      return;
    }
    let byKey = table.byPath.get(entry.constraint.path);
    if (!byKey) table.byPath.set(entry.constraint.path, (byKey = new Map<string, Set<Entry>>()));
    for (const key of entry.constraint.keys) {
      let bucket = byKey.get(key);
      if (!bucket) byKey.set(key, (bucket = new Set()));
      bucket.add(entry);
    }
  }

  protected unfile(entry: Entry): void {
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

  protected forEachCandidate(table: string, before: Document | undefined, after: Document | undefined, visit: (entry: Entry) => void): void {
    const index = this.tables.get(table);
    if (!index) return;
    for (const entry of index.scan) visit(entry);
    const keys = new Set<string>();
    for (const [path, byKey] of index.byPath) {
      keys.clear();
      if (before) documentKeys(before, path, keys);
      if (after) documentKeys(after, path, keys);
      for (const key of keys) {
        const bucket = byKey.get(key);
        if (bucket) for (const entry of bucket) visit(entry);
      }
    }
  }
}

/**
 * The reference answer, with the same bookkeeping as the index: every query of every session evaluated per
 * write (for the property tests and the benchmark's baseline).
 */
export class SubscriptionScan extends SessionQueries {
  private readonly tables = new Map<string, Set<Entry>>();

  protected file(entry: Entry): void {
    let entries = this.tables.get(entry.table);
    if (!entries) this.tables.set(entry.table, (entries = new Set()));
    entries.add(entry);
  }

  protected unfile(entry: Entry): void {
    this.tables.get(entry.table)?.delete(entry);
  }

  protected forEachCandidate(table: string, _before: Document | undefined, _after: Document | undefined, visit: (entry: Entry) => void): void {
    for (const entry of this.tables.get(table) ?? []) visit(entry);
  }
}
