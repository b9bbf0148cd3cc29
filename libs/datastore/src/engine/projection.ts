/**
 * Find projections with MongoDB's rules: inclusion or exclusion (never both, `_id` aside), `$slice`,
 * `$elemMatch` and the positional `field.$`, fields in document order with `_id` first. Aggregation
 * expressions in a projection go to mingo.
 */
import { DatastoreError } from '../api/datastore.error';
import { doubleOf, numericKind } from '../bson/numeric';
import { type Document, isPlainObject, normalizeSpec } from '../bson/values';
import { compileFilter, compileProjection, mingoQuery } from './mingo';

type Tree = { [field: string]: true | Tree };

export type Projector = (doc: Document) => Document;

/** A number of any BSON type, or a boolean: an inclusion (true, nonzero) or an exclusion, not a computed value. */
function isFlag(value: unknown): boolean {
  return typeof value === 'boolean' || numericKind(value) !== undefined;
}

function flagOn(value: unknown): boolean {
  return typeof value === 'boolean' ? value : doubleOf(value) !== 0;
}

type ArrayStep = (doc: Document, out: Document) => void;

function sliceOf(values: unknown[], spec: unknown): unknown[] {
  if (typeof spec === 'number') return spec >= 0 ? values.slice(0, spec) : values.slice(Math.max(0, values.length + spec));
  if (Array.isArray(spec) && spec.length === 2 && typeof spec[0] === 'number' && typeof spec[1] === 'number') {
    const [skip, limit] = spec as [number, number];
    if (limit <= 0) throw new DatastoreError('BadValue', '$slice limit must be positive');
    const start = skip >= 0 ? skip : Math.max(0, values.length + skip);
    return values.slice(start, start + limit);
  }
  throw new DatastoreError('BadValue', '$slice only supports numbers and [skip, limit] arrays');
}

/** The index of the first element of `path` the filter's condition on it matches (positional projection). */
function matchedIndex(doc: Document, field: string, filter: Document | undefined): number {
  const values = doc[field];
  if (!Array.isArray(values) || !filter) return -1;
  const conditions = Object.entries(filter).filter(([k]) => k === field || k.startsWith(`${field}.`));
  if (conditions.length === 0) return -1;
  const matcher = compileFilter(Object.fromEntries(conditions));
  return values.findIndex((item) => matcher({ ...doc, [field]: [item] }));
}

export function buildProjector(given: Document | undefined, filter?: Document): Projector | undefined {
  if (!given || Object.keys(given).length === 0) return undefined;
  // Numbers as JS numbers for the rules below and for mingo, a computed field's literals keeping their types.
  const projection = normalizeSpec(given) as Document;
  let inclusion: boolean | undefined;
  let idFlag: boolean | undefined;
  let expressions = false;
  const steps: ArrayStep[] = [];
  const tree: Tree = {};
  const mark = (on: boolean, field: string) => {
    if (inclusion === undefined) inclusion = on;
    else if (inclusion !== on) {
      throw on
        ? new DatastoreError('InvalidProjectionInclusion', `Cannot do inclusion on field ${field} in exclusion projection`)
        : new DatastoreError('InvalidProjection', `Cannot do exclusion on field ${field} in inclusion projection`);
    }
  };
  const addToTree = (field: string) => {
    const parts = field.split('.');
    let node = tree;
    for (let i = 0; i < parts.length - 1; i++) {
      const next = node[parts[i]];
      if (next === true) return;
      node = next ?? (node[parts[i]] = {});
    }
    node[parts[parts.length - 1]] = true;
  };
  for (const [field, value] of Object.entries(projection)) {
    if (field.endsWith('.$')) {
      const base = field.slice(0, -2);
      if (base.includes('.') || base.includes('$')) throw new DatastoreError('BadValue', `positional projection on nested arrays is not supported: ${field}`);
      mark(true, field);
      addToTree(base);
      steps.push((doc, out) => {
        const index = matchedIndex(doc, base, filter);
        if (index < 0) throw new DatastoreError('BadValue', 'Executor error during find command :: caused by :: positional operator did not find the match needed from the query.');
        out[base] = [(doc[base] as unknown[])[index]];
      });
      continue;
    }
    if (isPlainObject(value) && !field.includes('.') && ('$slice' in value || '$elemMatch' in value) && Object.keys(value).length === 1) {
      if ('$slice' in value) {
        // $slice alone keeps every other field; with inclusions it keeps just the included ones.
        addToTree(field);
        steps.push((doc, out) => {
          const values = doc[field];
          if (Array.isArray(values)) out[field] = sliceOf(values, value.$slice);
          else if (values !== undefined) out[field] = values;
        });
      } else {
        mark(true, field);
        addToTree(field);
        const query = mingoQuery(value.$elemMatch as Document);
        steps.push((doc, out) => {
          const values = doc[field];
          const found: unknown = Array.isArray(values) ? (values as unknown[]).find((item) => isPlainObject(item) && query.test(item)) : undefined;
          if (found === undefined) delete out[field];
          else out[field] = [found];
        });
      }
      continue;
    }
    if (!isFlag(value)) {
      expressions = true;
      continue;
    }
    if (field.includes('$')) throw new DatastoreError('BadValue', `invalid projection field ${field}`);
    const on = flagOn(value);
    if (field === '_id') {
      idFlag = on;
      continue;
    }
    mark(on, field);
    addToTree(field);
  }
  if (expressions) {
    if (inclusion === false) throw new DatastoreError('InvalidProjection', 'Cannot use an expression in an exclusion projection');
    return compileProjection(projection);
  }
  const keepId = idFlag ?? true;
  const include = inclusion ?? (steps.length === 0 && idFlag === true);
  // Fields that only carry $slice are kept whole (then sliced) in either mode.
  const sliced = new Set(Object.entries(projection).filter(([, v]) => isPlainObject(v) && '$slice' in v).map(([f]) => f));
  return (doc) => {
    let out: Document;
    if (include) {
      out = {};
      if (keepId && '_id' in doc) out._id = doc._id;
      includeInto(doc, tree, out);
    } else {
      out = exclude(doc, tree, sliced);
      if (!keepId) delete out._id;
    }
    for (const step of steps) step(doc, out);
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

function exclude(doc: Document, tree: Tree, keep: Set<string> = new Set()): Document {
  const out: Document = {};
  for (const key of Object.keys(doc)) {
    const spec = keep.has(key) ? undefined : tree[key];
    const value = doc[key];
    if (spec === true) continue;
    if (spec === undefined) out[key] = value;
    else if (isPlainObject(value)) out[key] = exclude(value, spec);
    else if (Array.isArray(value)) out[key] = (value as unknown[]).map((v) => (isPlainObject(v) ? exclude(v, spec) : v));
    else out[key] = value;
  }
  return out;
}
