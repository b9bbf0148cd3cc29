/**
 * Relationship fields batched per field and level: every parent of one list asks in the same turn of the
 * event loop, and one `$in` read on the foreign collection answers them all (never one read per parent).
 * Batches are keyed by the response path without list indices, so `items.list_id` and
 * `lists.items.list_id` are separate batches even on the same relationship.
 *
 * A root field that already holds its documents reads their selected relationships ahead (`prefetch`),
 * the same one `$in` read per relationship: their resolvers then answer synchronously, without a promise
 * per parent and without waiting a turn of the event loop for the batch.
 */
import type { FieldModel } from '@tessera/graphql-schema';
import { ObjectId } from 'bson';
import type { GraphQLResolveInfo, ResponsePath } from 'graphql/index.js';

type Doc = Record<string, unknown>;

/** Reads the foreign documents whose foreign key is one of `keys`, under the caller's rules. */
export type ForeignReader = (field: FieldModel, keys: unknown[]) => Promise<Doc[]>;

/** A prefetched relationship: the foreign documents by key, or the error its read failed with. */
type Prefetched = { ok: true; byKey: Map<string, Doc> } | { ok: false; error: unknown };

interface Batch {
  field: FieldModel;
  keys: Map<string, unknown>;
  waiters: Array<{ source: unknown; done: (value: Doc | Doc[] | null) => void; fail: (error: unknown) => void }>;
}

export class RelationshipBatches {
  private readonly pending = new Map<string, Batch>();
  private readonly prefetched = new WeakMap<object, Map<FieldModel, Prefetched>>();
  private scheduled = false;
  /** How many foreign reads ran (tests assert one per relationship per level). */
  reads = 0;

  constructor(private readonly read: ForeignReader) {}

  /** The relationship's value for `parent`: at once when it was prefetched, else from this level's batch. */
  load(field: FieldModel, parent: Doc, info: GraphQLResolveInfo): Doc | Doc[] | null | Promise<Doc | Doc[] | null> {
    const source = parent[field.key];
    const isList = field.relationship?.isList === true;
    if (source === undefined || source === null) return isList ? [] : null;
    const ready = this.prefetched.get(parent)?.get(field);
    if (ready) {
      if (!ready.ok) throw ready.error;
      return answer(field, source, ready.byKey);
    }
    const values = isList ? (Array.isArray(source) ? source : [source]) : [source];
    const batchKey = `${pathKey(info.path)}`;
    let batch = this.pending.get(batchKey);
    if (!batch) {
      batch = { field, keys: new Map(), waiters: [] };
      this.pending.set(batchKey, batch);
    }
    for (const value of values) batch.keys.set(keyOf(value), value);
    const target = batch;
    const promise = new Promise<Doc | Doc[] | null>((done, fail) => target.waiters.push({ source, done, fail }));
    if (!this.scheduled) {
      this.scheduled = true;
      // setImmediate runs after every pending promise job, so all parents of this level have asked.
      setImmediate(() => void this.flush());
    }
    return promise;
  }

  /** Reads `field` of all `parents` now, in one `$in` read, for `load` to answer from. */
  async prefetch(field: FieldModel, parents: readonly Doc[]): Promise<void> {
    const isList = field.relationship?.isList === true;
    const keys = new Map<string, unknown>();
    for (const parent of parents) {
      const source = parent[field.key];
      if (source === undefined || source === null) continue;
      for (const value of isList && Array.isArray(source) ? source : [source]) keys.set(keyOf(value), value);
    }
    let outcome: Prefetched;
    if (keys.size === 0) {
      outcome = { ok: true, byKey: new Map() };
    } else {
      try {
        this.reads += 1;
        outcome = { ok: true, byKey: this.index(field, await this.read(field, [...keys.values()])) };
      } catch (error) {
        outcome = { ok: false, error };
      }
    }
    for (const parent of parents) {
      let fields = this.prefetched.get(parent);
      if (!fields) {
        fields = new Map();
        this.prefetched.set(parent, fields);
      }
      fields.set(field, outcome);
    }
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batches = [...this.pending.values()];
    this.pending.clear();
    await Promise.all(batches.map((batch) => this.run(batch)));
  }

  private async run(batch: Batch): Promise<void> {
    let documents: Doc[];
    try {
      this.reads += 1;
      documents = await this.read(batch.field, [...batch.keys.values()]);
    } catch (error) {
      for (const waiter of batch.waiters) waiter.fail(error);
      return;
    }
    const byKey = this.index(batch.field, documents);
    for (const waiter of batch.waiters) waiter.done(answer(batch.field, waiter.source, byKey));
  }

  /** Foreign documents by the key they are found by (the first one wins). */
  private index(field: FieldModel, documents: readonly Doc[]): Map<string, Doc> {
    const foreignKey = (field.relationship as NonNullable<FieldModel['relationship']>).foreignKey;
    const byKey = new Map<string, Doc>();
    for (const document of documents) {
      const key = keyOf(document[foreignKey]);
      if (!byKey.has(key)) byKey.set(key, document);
    }
    return byKey;
  }
}

/** The relationship's value for a parent's source value. */
function answer(field: FieldModel, source: unknown, byKey: Map<string, Doc>): Doc | Doc[] | null {
  if (field.relationship?.isList) {
    const values = Array.isArray(source) ? source : [source];
    // Missing foreign documents are left out (reference A.5).
    return values.map((value) => byKey.get(keyOf(value))).filter((d): d is Doc => d !== undefined);
  }
  return byKey.get(keyOf(source)) ?? null;
}

function pathKey(path: ResponsePath): string {
  const parts: string[] = [];
  for (let p: ResponsePath | undefined = path; p; p = p.prev) if (typeof p.key === 'string') parts.push(p.key);
  return parts.reverse().join('.');
}

/** A comparable key of a BSON value: ObjectIds by hex, everything else by type and text. */
export function keyOf(value: unknown): string {
  if (value instanceof ObjectId) return `o:${value.toHexString()}`;
  if (value instanceof Date) return `d:${value.getTime()}`;
  if (value !== null && typeof value === 'object' && 'valueOf' in value) {
    const primitive = (value as { valueOf(): unknown }).valueOf();
    if (typeof primitive === 'number' || typeof primitive === 'bigint' || typeof primitive === 'string' || typeof primitive === 'boolean') return `n:${String(primitive)}`;
  }
  if (typeof value === 'number' || typeof value === 'bigint') return `n:${String(value)}`;
  return `${typeof value}:${typeof value === 'string' ? value : JSON.stringify(value)}`;
}
