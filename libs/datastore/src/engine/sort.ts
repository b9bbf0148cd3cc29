/**
 * MongoDB's sort order for documents: fields compared in BSON order, missing as null, an array by its
 * smallest element ascending or largest descending. Shared by find and the aggregation $sort stage.
 */
import { type SortSpec } from '../api/data-source';
import { DatastoreError } from '../api/datastore.error';
import { type Document, collectPathValues, compareValues, isPlainObject } from '../bson/values';

/** Key a document sorts by for one field: arrays sort by their smallest (ascending) or largest element. */
function sortKey(doc: Document, parts: string[], direction: number): unknown {
  const values = collectPathValues(doc, parts);
  if (values.length === 0) return null;
  if (values.length === 1 && !Array.isArray(values[0])) return values[0];
  let best: unknown;
  let found = false;
  for (const v of values) {
    const items = Array.isArray(v) ? v : [v];
    for (const item of items) {
      if (!found || compareValues(item, best) * direction < 0) {
        best = item;
        found = true;
      }
    }
  }
  return found ? best : undefined;
}

export function checkSort(sort: unknown): SortSpec | undefined {
  if (sort === undefined || sort === null) return undefined;
  if (!isPlainObject(sort)) throw new DatastoreError('BadValue', 'sort must be an object');
  for (const [field, dir] of Object.entries(sort)) {
    if (dir !== 1 && dir !== -1) throw new DatastoreError('BadValue', `$sort key ordering must be 1 (for ascending) or -1 (for descending): ${field}`);
  }
  return sort as SortSpec;
}

/** The keys `doc` sorts by under `sort`, one a field (documents tie when every key compares equal). */
export function sortKeys(doc: Document, sort: SortSpec): unknown[] {
  return Object.entries(sort).map(([field, dir]) => sortKey(doc, field.split('.'), dir));
}

export function sortDocuments(docs: Document[], sort: SortSpec): Document[] {
  const fields = Object.entries(sort).map(([f, d]) => ({ parts: f.split('.'), dir: d }));
  const keyed = docs.map((doc) => ({ doc, keys: fields.map((f) => sortKey(doc, f.parts, f.dir)) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < fields.length; i++) {
      const c = compareValues(a.keys[i], b.keys[i]);
      if (c !== 0) return c * fields[i].dir;
    }
    return 0;
  });
  return keyed.map((k) => k.doc);
}

