/**
 * Find projections: validation with MongoDB's errors (no mixing of inclusion and exclusion except for
 * `_id`) and a fast path for plain field lists; operator projections ($slice, $elemMatch, positional)
 * go to mingo.
 */
import { DatastoreError } from '../api/datastore.error';
import { type Document, isPlainObject } from '../bson/values';
import { compileProjection } from './mingo';

type Tree = { [field: string]: true | Tree };

export type Projector = (doc: Document) => Document;

function isFlag(value: unknown): value is number | boolean {
  return typeof value === 'number' || typeof value === 'boolean';
}

export function buildProjector(projection: Document | undefined, filter?: Document): Projector | undefined {
  if (!projection || Object.keys(projection).length === 0) return undefined;
  let inclusion: boolean | undefined;
  let simple = true;
  let idFlag: boolean | undefined;
  for (const [field, value] of Object.entries(projection)) {
    if (!isFlag(value)) {
      simple = false;
      // $slice / $elemMatch / $meta don't decide the mode; expressions count as inclusion.
      if (isPlainObject(value) && ['$slice', '$elemMatch', '$meta'].some((op) => op in value)) continue;
      if (inclusion === false) throw new DatastoreError('InvalidProjectionInclusion', `Cannot do inclusion on field ${field} in exclusion projection`);
      inclusion = true;
      continue;
    }
    if (field.includes('$')) simple = false;
    const on = Boolean(value);
    if (field === '_id') {
      idFlag = on;
      continue;
    }
    if (inclusion === undefined) inclusion = on;
    else if (inclusion !== on) {
      throw on
        ? new DatastoreError('InvalidProjectionInclusion', `Cannot do inclusion on field ${field} in exclusion projection`)
        : new DatastoreError('InvalidProjection', `Cannot do exclusion on field ${field} in inclusion projection`);
    }
  }
  if (!simple) return compileProjection(projection, filter);
  const tree: Tree = {};
  for (const [field, value] of Object.entries(projection)) {
    if (field === '_id') continue;
    if (!isFlag(value)) continue;
    const parts = field.split('.');
    let node = tree;
    for (let i = 0; i < parts.length - 1; i++) {
      const next = node[parts[i]];
      if (next === true) break;
      node = next ?? (node[parts[i]] = {});
    }
    node[parts[parts.length - 1]] = true;
  }
  if (inclusion === undefined) inclusion = idFlag === true;
  const keepId = idFlag ?? true;
  if (inclusion) {
    return (doc) => {
      const out: Document = {};
      if (keepId && '_id' in doc) out._id = doc._id;
      includeInto(doc, tree, out);
      return out;
    };
  }
  return (doc) => {
    const out = exclude(doc, tree);
    if (!keepId) delete out._id;
    return out;
  };
}

function includeInto(doc: Document, tree: Tree, out: Document): void {
  for (const key of Object.keys(doc)) {
    const spec = tree[key];
    if (spec === undefined || key === '_id') continue;
    const value = doc[key];
    if (spec === true) out[key] = value;
    else if (isPlainObject(value)) out[key] = includeSub(value, spec);
    else if (Array.isArray(value)) out[key] = includeArray(value, spec);
  }
}

function includeSub(doc: Document, tree: Tree): Document {
  const out: Document = {};
  includeInto(doc, tree, out);
  return out;
}

function includeArray(values: unknown[], tree: Tree): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (isPlainObject(v)) out.push(includeSub(v, tree));
    else if (Array.isArray(v)) out.push(includeArray(v, tree));
  }
  return out;
}

function exclude(doc: Document, tree: Tree): Document {
  const out: Document = {};
  for (const key of Object.keys(doc)) {
    const spec = tree[key];
    const value = doc[key];
    if (spec === true) continue;
    if (spec === undefined) out[key] = value;
    else if (isPlainObject(value)) out[key] = exclude(value, spec);
    else if (Array.isArray(value)) out[key] = (value as unknown[]).map((v) => (isPlainObject(v) ? exclude(v, spec) : v));
    else out[key] = value;
  }
  return out;
}
