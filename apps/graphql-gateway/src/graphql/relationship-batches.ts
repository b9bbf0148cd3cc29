/**
 * Relationship fields batched per field and level: every parent of one list asks in the same turn of the
 * event loop, and one `$in` read on the foreign collection answers them all (never one read per parent).
 * Batches are keyed by the response path without list indices, so `items.list_id` and
 * `lists.items.list_id` are separate batches even on the same relationship.
 */
import type { FieldModel } from '@tessera/graphql-schema';
import { ObjectId } from 'bson';
import type { GraphQLResolveInfo, ResponsePath } from 'graphql/index.js';

type Doc = Record<string, unknown>;

/** Reads the foreign documents whose foreign key is one of `keys`, under the caller's rules. */
export type ForeignReader = (field: FieldModel, keys: unknown[]) => Promise<Doc[]>;

interface Batch {
  field: FieldModel;
  keys: Map<string, unknown>;
  waiters: Array<{ source: unknown; done: (value: Doc | Doc[] | null) => void; fail: (error: unknown) => void }>;
}

export class RelationshipBatches {
  private readonly pending = new Map<string, Batch>();
  private scheduled = false;
  /** How many foreign reads ran (tests assert one per relationship per level). */
  reads = 0;

  constructor(private readonly read: ForeignReader) {}

  load(field: FieldModel, parent: Doc, info: GraphQLResolveInfo): Promise<Doc | Doc[] | null> {
    const source = parent[field.key];
    const isList = field.relationship?.isList === true;
    if (source === undefined || source === null) return Promise.resolve(isList ? [] : null);
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

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batches = [...this.pending.values()];
    this.pending.clear();
    await Promise.all(batches.map((batch) => this.run(batch)));
  }

  private async run(batch: Batch): Promise<void> {
    const relationship = batch.field.relationship as NonNullable<FieldModel['relationship']>;
    let documents: Doc[];
    try {
      this.reads += 1;
      documents = await this.read(batch.field, [...batch.keys.values()]);
    } catch (error) {
      for (const waiter of batch.waiters) waiter.fail(error);
      return;
    }
    const byKey = new Map<string, Doc>();
    for (const document of documents) {
      const key = keyOf(document[relationship.foreignKey]);
      if (!byKey.has(key)) byKey.set(key, document);
    }
    for (const waiter of batch.waiters) {
      if (relationship.isList) {
        const values = Array.isArray(waiter.source) ? waiter.source : [waiter.source];
        // Missing foreign documents are left out (reference A.5).
        waiter.done(values.map((value) => byKey.get(keyOf(value))).filter((d): d is Doc => d !== undefined));
      } else {
        waiter.done(byKey.get(keyOf(waiter.source)) ?? null);
      }
    }
  }
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
