/**
 * MongoDB update semantics for the embedded engine: operator updates ($set ... $bit, positional `$`,
 * `$[]`, `$[id]` with arrayFilters), replacements and pipeline updates (through mingo's aggregation).
 * Works on a copy: the stored document is never mutated, so the caller can keep it as the pre-image.
 */
import { Long, Timestamp } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import {
  type Document,
  cloneValue,
  compareValues,
  formatValue,
  isPlainObject,
  normalize,
  normalizeStored,
  typeName,
  typeRank,
  valuesEqual,
  valuesIdentical,
} from '../bson/values';
import { add, multiply, numericKind } from '../bson/numeric';
import { type Collation, withCollation } from './collation';
import { compileFilter, mingoQuery, runPipeline } from './mingo';

const OPERATORS = new Set([
  '$set',
  '$unset',
  '$inc',
  '$mul',
  '$min',
  '$max',
  '$rename',
  '$push',
  '$addToSet',
  '$pop',
  '$pull',
  '$pullAll',
  '$currentDate',
  '$setOnInsert',
  '$bit',
]);

const PIPELINE_STAGES = new Set(['$addFields', '$set', '$project', '$unset', '$replaceRoot', '$replaceWith']);

export type UpdateKind = 'operators' | 'pipeline';

/** Validates an update argument (not a replacement) and says which kind it is. */
export function checkUpdate(update: unknown): UpdateKind {
  if (Array.isArray(update)) {
    for (const stage of update) {
      const name = isPlainObject(stage) ? Object.keys(stage)[0] : undefined;
      if (!name || !PIPELINE_STAGES.has(name)) {
        throw new DatastoreError('InvalidOptions', `${name ?? 'stage'} is not allowed to be used within an update`);
      }
    }
    return 'pipeline';
  }
  if (!isPlainObject(update)) throw new DatastoreError('FailedToParse', 'Update argument must be either an object or an array', { clientError: true });
  const keys = Object.keys(update);
  if (keys.length === 0 || !keys[0].startsWith('$')) {
    throw new DatastoreError('FailedToParse', 'Update document requires atomic operators', { clientError: true });
  }
  for (const key of keys) {
    if (!key.startsWith('$')) throw new DatastoreError('FailedToParse', 'Update document requires atomic operators', { clientError: true });
    if (!OPERATORS.has(key)) {
      throw new DatastoreError('FailedToParse', `Unknown modifier: ${key}. Expected a valid update modifier or pipeline-style update specified as an array`);
    }
    const args = update[key];
    if (!isPlainObject(args)) throw new DatastoreError('FailedToParse', `Modifiers operate on fields but we found type ${typeof args} instead.`);
  }
  return 'operators';
}

/** Validates a replacement document: it may hold no update operators. */
export function checkReplacement(replacement: unknown): void {
  if (!isPlainObject(replacement) || Array.isArray(replacement)) {
    throw new DatastoreError('FailedToParse', 'Replacement document must be an object', { clientError: true });
  }
  const first = Object.keys(replacement)[0];
  if (first !== undefined && first.startsWith('$')) {
    throw new DatastoreError('FailedToParse', 'Replacement document must not contain atomic operators', { clientError: true });
  }
}

export interface UpdateContext {
  /** The query filter, for the positional `$` operator. */
  filter?: Document;
  arrayFilters?: Document[];
  /** True when the update builds an upserted document ($setOnInsert applies). */
  inserting?: boolean;
  /** `let` variables for a pipeline update. */
  variables?: Document;
  /**
   * The operation's collation: strings compare by it in $addToSet, $pull, $pullAll, $min, $max, $push's
   * $sort, array filters, the positional `$` and pipeline updates, as in MongoDB. `_id` stays binary.
   */
  collation?: Collation;
}

/** Applies an update (operators or pipeline) to a copy of `doc` and returns the new document. */
export function applyUpdate(doc: Document, update: Document | Document[], context: UpdateContext = {}): Document {
  if (context.collation === undefined) return updated(doc, update, context);
  return withCollation(context.collation, () => updated(doc, update, context));
}

function updated(doc: Document, update: Document | Document[], context: UpdateContext): Document {
  if (Array.isArray(update)) {
    const [out] = runPipeline([cloneValue(doc)], update, undefined, context.variables);
    if (!out) throw new DatastoreError('BadValue', 'pipeline update produced no document');
    const result = normalizeStored(out) as Document;
    if (doc._id === undefined) return result;
    // A pipeline whose output leaves _id out ($project, $replaceRoot, $unset of _id) keeps the stored one,
    // as MongoDB does; one that sets a different _id is refused.
    if (result._id === undefined) return { _id: doc._id, ...result };
    if (!valuesIdentical(result._id, doc._id)) {
      throw new DatastoreError('ImmutableField', "After applying the update, the (immutable) field '_id' was found to have been altered to _id: " + formatValue(result._id));
    }
    return result;
  }
  const target = cloneValue(doc);
  const filters = compileArrayFilters(context.arrayFilters);
  const seen: string[] = [];
  for (const op of Object.keys(update)) {
    const args = update[op] as Document;
    if (op === '$setOnInsert' && !context.inserting) {
      for (const path of Object.keys(args)) claim(seen, path);
      continue;
    }
    const entries = Object.keys(args).sort(comparePaths);
    for (const path of entries) {
      const value = operandOf(op, args[path]);
      if (op === '$rename') {
        if (typeof value !== 'string') throw new DatastoreError('BadValue', `The 'to' field for $rename must be a string: ${path}: ${formatValue(value)}`);
        claim(seen, path);
        claim(seen, value);
        rename(target, path, value);
        continue;
      }
      claim(seen, path);
      if (isIdPath(path) && doc._id !== undefined) checkIdUntouched(op, path, value, doc);
      const parts = path.split('.');
      const create = op !== '$unset' && op !== '$pop' && op !== '$pull' && op !== '$pullAll';
      const positional = parts.includes('$') ? positionalIndex(doc, parts, context.filter) : undefined;
      const targets = resolveTargets(target, parts, filters, positional, create);
      for (const { parent, key } of targets) applyOperator(op, parent, key, value, path, target);
    }
  }
  return target;
}

function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isIdPath(path: string): boolean {
  return path === '_id' || path.startsWith('_id.');
}

function checkIdUntouched(op: string, path: string, value: unknown, doc: Document): void {
  if (op === '$set' || op === '$setOnInsert') {
    const current = path === '_id' ? doc._id : undefined;
    if (path === '_id' && valuesIdentical(current, value)) return;
  }
  throw new DatastoreError('ImmutableField', `Performing an update on the path '${path}' would modify the immutable field '_id'`);
}

function claim(seen: string[], path: string): void {
  const normal = path.replace(/\.\$(\[[^\]]*\])?/g, '');
  for (const other of seen) {
    if (other === normal || other.startsWith(`${normal}.`) || normal.startsWith(`${other}.`)) {
      throw new DatastoreError('ConflictingUpdateOperators', `Updating the path '${path}' would create a conflict at '${other.length < normal.length ? other : normal}'`);
    }
  }
  seen.push(normal);
}

type ArrayFilterMap = Map<string, (value: unknown) => boolean>;

function compileArrayFilters(arrayFilters: Document[] | undefined): ArrayFilterMap {
  const out: ArrayFilterMap = new Map();
  for (const filter of arrayFilters ?? []) {
    const keys = Object.keys(filter);
    const ident = keys[0]?.split('.')[0];
    if (!ident) throw new DatastoreError('FailedToParse', 'Cannot use an expression without a top-level field name in arrayFilters');
    const query = mingoQuery(normalize(filter) as Document);
    out.set(ident, (value) => query.test({ [ident]: value }));
  }
  return out;
}

/** Index of the array element the query matched, for the positional `$` operator. */
function positionalIndex(doc: Document, parts: string[], filter: Document | undefined): number {
  const at = parts.indexOf('$');
  const arrayPath = parts.slice(0, at);
  let container: unknown = doc;
  for (const p of arrayPath) container = isPlainObject(container) ? container[p] : Array.isArray(container) ? container[Number(p)] : undefined;
  const fail = new DatastoreError('BadValue', 'The positional operator did not find the match needed from the query.');
  if (!Array.isArray(container) || !filter) throw fail;
  const prefix = arrayPath.join('.');
  const mentions = (f: Document): boolean =>
    Object.entries(f).some(([k, v]) =>
      k === '$and' || k === '$or' ? Array.isArray(v) && v.some((sub) => isPlainObject(sub) && mentions(sub)) : k === prefix || k.startsWith(`${prefix}.`),
    );
  if (!mentions(filter)) throw fail;
  const matcher = compileFilter(filter);
  for (let i = 0; i < container.length; i++) {
    const probe = withPath(doc, arrayPath, [container[i]]);
    if (matcher(probe)) return i;
  }
  throw fail;
}

function withPath(doc: Document, path: string[], value: unknown): Document {
  const out: Document = { ...doc };
  let node = out;
  for (let i = 0; i < path.length - 1; i++) {
    const next = node[path[i]];
    const copy: Document = isPlainObject(next) ? { ...next } : {};
    node[path[i]] = copy;
    node = copy;
  }
  node[path[path.length - 1]] = value;
  return out;
}

interface Target {
  parent: Document | unknown[];
  key: string;
}

function resolveTargets(root: Document, parts: string[], filters: ArrayFilterMap, positional: number | undefined, create: boolean): Target[] {
  let current: (Document | unknown[])[] = [root];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const last = i === parts.length - 1;
    const targets: Target[] = [];
    for (const container of current) {
      if (part === '$' || part.startsWith('$[')) {
        if (!Array.isArray(container)) {
          throw new DatastoreError('BadValue', `The path '${parts.slice(0, i).join('.')}' must exist in the document in order to apply array updates.`);
        }
        if (part === '$') targets.push({ parent: container, key: String(positional ?? 0) });
        else if (part === '$[]') container.forEach((_, idx) => targets.push({ parent: container, key: String(idx) }));
        else {
          const ident = part.slice(2, -1);
          const test = filters.get(ident);
          if (!test) throw new DatastoreError('BadValue', `No array filter found for identifier '${ident}' in path '${parts.join('.')}'`);
          container.forEach((item, idx) => {
            if (test(item)) targets.push({ parent: container, key: String(idx) });
          });
        }
      } else {
        targets.push({ parent: container, key: part });
      }
    }
    if (last) return targets;
    const next: (Document | unknown[])[] = [];
    for (const { parent, key } of targets) {
      let child = getChild(parent, key);
      if (child === undefined || child === null) {
        if (!create) continue;
        if (child === null) {
          throw new DatastoreError('PathNotViable', `Cannot create field '${parts[i + 1]}' in element {${key}: null}`);
        }
        child = {};
        setChild(parent, key, child);
      }
      if (typeof child !== 'object' || !(Array.isArray(child) || isPlainObject(child))) {
        if (!create) continue;
        throw new DatastoreError('PathNotViable', `Cannot create field '${parts[i + 1]}' in element {${key}: ${formatValue(child)}}`);
      }
      next.push(child as Document | unknown[]);
    }
    current = next;
  }
  return [];
}

function getChild(parent: Document | unknown[], key: string): unknown {
  if (Array.isArray(parent)) {
    const idx = Number(key);
    return Number.isInteger(idx) ? parent[idx] : undefined;
  }
  return parent[key];
}

function setChild(parent: Document | unknown[], key: string, value: unknown): void {
  if (Array.isArray(parent)) {
    const idx = Number(key);
    if (!Number.isInteger(idx) || idx < 0) throw new DatastoreError('PathNotViable', `Cannot create field '${key}' in an array`);
    while (parent.length < idx) parent.push(null);
    parent[idx] = value;
  } else {
    parent[key] = value;
  }
}

function removeChild(parent: Document | unknown[], key: string): void {
  if (Array.isArray(parent)) {
    const idx = Number(key);
    if (Number.isInteger(idx) && idx < parent.length) parent[idx] = null;
  } else {
    delete parent[key];
  }
}

function isNumeric(value: unknown): boolean {
  return typeRank(value) === 2;
}

/** The operators whose argument is stored as given, so its numbers keep their BSON type. */
const STORING_OPERATORS = new Set(['$set', '$setOnInsert', '$inc', '$mul', '$min', '$max', '$addToSet', '$bit']);

/** An update operator's argument: a value to store keeps its number types, a specification is read as numbers. */
function operandOf(op: string, argument: unknown): unknown {
  if (STORING_OPERATORS.has(op)) return normalizeStored(argument);
  if (op !== '$push') return normalize(argument);
  if (!isPlainObject(argument) || !('$each' in argument)) return normalizeStored(argument);
  // $push's modifiers ($position, $slice, $sort) are a specification; only $each is stored.
  const spec = normalize({ ...argument, $each: undefined }) as Document;
  return { ...spec, $each: normalizeStored(argument.$each) };
}

function asLong(value: unknown): Long {
  return value instanceof Long ? value : Long.fromNumber(numberOf(value));
}

function numberOf(value: unknown): number {
  if (typeof value === 'number') return value;
  if (value instanceof Long) return value.toNumber();
  return Number.parseFloat(String(value));
}

/**
 * $inc and $mul with MongoDB's result types (bson/numeric.ts): a decimal makes a decimal, else a double a
 * double, else a long a long, else two ints make an int, or a long when the result leaves int32's range.
 * Unlike aggregation's arithmetic, a long that overflows is refused rather than made a double.
 */
function arith(a: unknown, b: unknown, op: 'add' | 'mul', path: string): unknown {
  const result = op === 'add' ? add([a, b]) : multiply([a, b]);
  if (numericKind(result) === 'double' && isIntegral(a) && isIntegral(b)) {
    throw new DatastoreError('BadValue', `Failed to apply $${op === 'add' ? 'inc' : 'mul'} operations to current value (${asLong(a).toString()}) for document {${path}}: overflow`);
  }
  return result;
}

function isIntegral(value: unknown): boolean {
  const kind = numericKind(value);
  return kind === 'int' || kind === 'long';
}

function applyOperator(op: string, parent: Document | unknown[], key: string, value: unknown, path: string, root: Document): void {
  const current = getChild(parent, key);
  switch (op) {
    case '$set':
    case '$setOnInsert':
      setChild(parent, key, cloneValue(value));
      return;
    case '$unset':
      if (current !== undefined) removeChild(parent, key);
      return;
    case '$inc':
    case '$mul': {
      const name = op === '$inc' ? 'increment' : 'multiply';
      if (!isNumeric(value)) throw new DatastoreError('TypeMismatch', `Cannot ${name} with non-numeric argument: {${path}: ${formatValue(value)}}`);
      if (current === undefined) {
        setChild(parent, key, op === '$inc' ? value : arith(value, 0, 'mul', path));
        return;
      }
      if (!isNumeric(current)) {
        throw new DatastoreError(
          'TypeMismatch',
          `Cannot apply ${op} to a value of non-numeric type. {_id: ${formatValue(root._id)}} has the field '${key}' of non-numeric type ${typeName(current)}`,
        );
      }
      setChild(parent, key, arith(current, value, op === '$inc' ? 'add' : 'mul', path));
      return;
    }
    case '$min':
    case '$max': {
      if (current === undefined) setChild(parent, key, cloneValue(value));
      else {
        const c = compareValues(value, current);
        if ((op === '$min' && c < 0) || (op === '$max' && c > 0)) setChild(parent, key, cloneValue(value));
      }
      return;
    }
    case '$currentDate': {
      const wantsTimestamp = isPlainObject(value) && value.$type === 'timestamp';
      setChild(parent, key, wantsTimestamp ? Timestamp.fromNumber(Math.floor(Date.now() / 1000) * 2 ** 32) : new Date());
      return;
    }
    case '$push':
    case '$addToSet': {
      const array = arrayAt(current, path, root);
      const spec = isPlainObject(value) && '$each' in value ? value : undefined;
      const items = spec ? (spec.$each as unknown[]) : [value];
      if (!Array.isArray(items)) throw new DatastoreError('BadValue', `The argument to $each in ${op} must be an array but it was of type: ${typeName(items)}`);
      let result = array.slice();
      if (op === '$addToSet') {
        for (const item of items) if (!result.some((e) => valuesEqual(e, item))) result.push(cloneValue(item));
      } else {
        const position = spec && typeof spec.$position === 'number' ? spec.$position : undefined;
        const copies = items.map((i) => cloneValue(i));
        if (position === undefined) result.push(...copies);
        else {
          const at = position < 0 ? Math.max(0, result.length + position) : Math.min(position, result.length);
          result.splice(at, 0, ...copies);
        }
        if (spec && spec.$sort !== undefined) result = sortArray(result, spec.$sort);
        if (spec && typeof spec.$slice === 'number') {
          const n = spec.$slice;
          result = n >= 0 ? result.slice(0, n) : result.slice(Math.max(0, result.length + n));
        }
      }
      setChild(parent, key, result);
      return;
    }
    case '$pop': {
      if (current === undefined) return;
      const array = arrayAt(current, path, root);
      setChild(parent, key, Number(value) < 0 ? array.slice(1) : array.slice(0, -1));
      return;
    }
    case '$pull':
    case '$pullAll': {
      if (current === undefined) return;
      const array = arrayAt(current, path, root);
      if (op === '$pullAll') {
        if (!Array.isArray(value)) throw new DatastoreError('BadValue', `$pullAll requires an array argument but was given a ${typeName(value)}`);
        setChild(parent, key, array.filter((e) => !value.some((v) => valuesEqual(e, v))));
        return;
      }
      const matches = pullMatcher(value);
      setChild(parent, key, array.filter((e) => !matches(e)));
      return;
    }
    case '$bit': {
      if (!isPlainObject(value)) throw new DatastoreError('BadValue', `The $bit modifier is not compatible with a ${typeName(value)}.`);
      // A long on either side makes a long (64 bits), as MongoDB does; ints stay ints.
      let result: number | Long = current === undefined ? 0 : current instanceof Long ? current : numberOf(current);
      for (const [bitOp, operand] of Object.entries(value)) {
        if (bitOp !== 'and' && bitOp !== 'or' && bitOp !== 'xor') {
          throw new DatastoreError('BadValue', `The $bit modifier only supports 'and', 'or', and 'xor', not '${bitOp}'`);
        }
        if (result instanceof Long || operand instanceof Long) result = asLong(result)[bitOp](asLong(operand));
        else {
          const n = numberOf(operand);
          result = bitOp === 'and' ? result & n : bitOp === 'or' ? result | n : result ^ n;
        }
      }
      setChild(parent, key, result);
      return;
    }
    default:
      throw new DatastoreError('FailedToParse', `Unknown modifier: ${op}`);
  }
}

function arrayAt(current: unknown, path: string, root: Document): unknown[] {
  if (current === undefined) return [];
  if (!Array.isArray(current)) {
    throw new DatastoreError('BadValue', `The field '${path}' must be an array but is of type ${typeName(current)} in document {_id: ${formatValue(root._id)}}`);
  }
  return current;
}

function sortArray(values: unknown[], spec: unknown): unknown[] {
  if (typeof spec === 'number') return values.slice().sort((a, b) => compareValues(a, b) * spec);
  if (!isPlainObject(spec)) return values;
  const fields = Object.entries(spec) as [string, number][];
  return values.slice().sort((a, b) => {
    for (const [field, dir] of fields) {
      const c = compareValues(isPlainObject(a) ? a[field] : undefined, isPlainObject(b) ? b[field] : undefined);
      if (c !== 0) return c * dir;
    }
    return 0;
  });
}

function pullMatcher(condition: unknown): (value: unknown) => boolean {
  if (!isPlainObject(condition)) return (v) => valuesEqual(v, condition);
  const keys = Object.keys(condition);
  if (keys.length > 0 && keys.every((k) => k.startsWith('$'))) {
    const query = mingoQuery({ v: condition });
    return (v) => query.test({ v });
  }
  const query = mingoQuery(condition);
  return (v) => isPlainObject(v) && query.test(v);
}

/** The document an upsert starts from: the equality conditions of the filter. */
export function upsertBase(filter: Document | undefined): Document {
  const base: Document = {};
  const visit = (f: Document) => {
    for (const [key, cond] of Object.entries(f)) {
      if (key === '$and' && Array.isArray(cond)) {
        for (const c of cond) if (isPlainObject(c)) visit(c);
        continue;
      }
      if (key.startsWith('$')) continue;
      let value: unknown = cond;
      if (isPlainObject(cond) && Object.keys(cond).some((k) => k.startsWith('$'))) {
        if (!('$eq' in cond)) continue;
        value = cond.$eq;
      }
      setPath(base, key, normalizeStored(value));
    }
  };
  if (filter) visit(filter);
  return base;
}

function setPath(doc: Document, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = doc;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = node[parts[i]];
    if (!isPlainObject(next)) node[parts[i]] = {};
    node = node[parts[i]] as Document;
  }
  node[parts[parts.length - 1]] = value;
}

function rename(doc: Document, from: string, to: string): void {
  const fromParts = from.split('.');
  let parent: unknown = doc;
  for (let i = 0; i < fromParts.length - 1; i++) parent = isPlainObject(parent) ? parent[fromParts[i]] : undefined;
  if (!isPlainObject(parent)) return;
  const key = fromParts[fromParts.length - 1];
  if (!(key in parent)) return;
  const value = parent[key];
  delete parent[key];
  const targets = resolveTargets(doc, to.split('.'), new Map(), undefined, true);
  for (const t of targets) setChild(t.parent, t.key, value);
}
