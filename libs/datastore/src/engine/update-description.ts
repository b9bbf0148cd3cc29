/**
 * A change event's `updateDescription`, as MongoDB writes it from its oplog's delta (`$v: 2`) entries.
 * An operator update's delta names the paths its operators touched (an array element by its index, a
 * `$push` that only appended by the appended indices, a new subtree at its first new field); a pipeline
 * update's delta is a diff of the two versions that descends into embedded documents and arrays and
 * records a shortened array as truncated, and when that diff would be larger than the new document MongoDB
 * logs the update as a replacement, which its change streams report as a `replace` event.
 * Pure functions of the two versions and the update's shape: nothing here reads a store.
 */
import { BSON } from 'bson';
import { type Document, identicalValues, isPlainObject } from '../bson/values';

/** What an operator update touched, kept with its logged operation so the feed can describe it. */
export interface UpdatePaths {
  /** Every path an operator named, `$`, `$[]` and `$[id]` included (they stand for any index). */
  paths: string[];
  /** The `$push` paths without `$sort`: one that only appended is described by its new elements. */
  appended?: string[];
}

export interface UpdateDescription {
  updatedFields: Document;
  removedFields: string[];
  truncatedArrays: { field: string; newSize: number }[];
  disambiguatedPaths: Document;
}

/** A path's components: a field name, or an array index (a number). */
type Part = string | number;

/** What the shape of the update document is, for an operator update; undefined for a pipeline. */
export function updatePathsOf(update: Document | Document[]): UpdatePaths | undefined {
  if (Array.isArray(update)) return undefined;
  const paths: string[] = [];
  const appended: string[] = [];
  for (const [op, args] of Object.entries(update)) {
    if (!isPlainObject(args) || op === '$setOnInsert') continue;
    for (const [path, value] of Object.entries(args)) {
      paths.push(path);
      if (op === '$rename' && typeof value === 'string') paths.push(value);
      if (op === '$push' && !(isPlainObject(value) && '$each' in value && '$sort' in value)) appended.push(path);
    }
  }
  return appended.length > 0 ? { paths, appended } : { paths };
}

/** Collects the description's entries, with MongoDB's rule for which paths need disambiguating. */
class DescriptionBuilder {
  readonly description: UpdateDescription = { updatedFields: {}, removedFields: [], truncatedArrays: [], disambiguatedPaths: {} };

  updated(parts: Part[], value: unknown): void {
    const path = parts.join('.');
    this.description.updatedFields[path] = value;
    this.disambiguate(path, parts);
  }

  removed(parts: Part[]): void {
    const path = parts.join('.');
    if (!this.description.removedFields.includes(path)) this.description.removedFields.push(path);
    this.disambiguate(path, parts);
  }

  truncated(parts: Part[], newSize: number): void {
    const path = parts.join('.');
    this.description.truncatedArrays.push({ field: path, newSize });
    this.disambiguate(path, parts);
  }

  /**
   * A path is ambiguous from its first field name (not its first component) that is a number or from any
   * field name holding a dot; an array index alone is not ambiguous. Indices are given as integers.
   */
  private disambiguate(path: string, parts: Part[]): void {
    const ambiguous = parts.some((part, i) => typeof part === 'string' && ((i > 0 && /^(0|[1-9]\d*)$/.test(part)) || part.includes('.')));
    if (ambiguous) this.description.disambiguatedPaths[path] = [...parts];
  }
}

// ---- operator updates: the paths the operators touched ----

const POSITIONAL = /^\$(\[[^\]]*\])?$/;

function childOf(container: unknown, part: string): { found: boolean; value?: unknown; index?: number } {
  if (Array.isArray(container) && /^\d+$/.test(part)) {
    const index = Number(part);
    return index < container.length ? { found: true, value: container[index], index } : { found: false, index };
  }
  if (isPlainObject(container) && Object.prototype.hasOwnProperty.call(container, part)) return { found: true, value: container[part] };
  return { found: false };
}

function describeOperatorPath(out: DescriptionBuilder, before: unknown, after: unknown, parts: string[], taken: Part[], appended: boolean): void {
  if (parts.length === 0) {
    if (appended && Array.isArray(before) && Array.isArray(after) && before.length > 0 && after.length > before.length && before.every((v, i) => identicalValues(v, after[i]))) {
      for (let i = before.length; i < after.length; i++) out.updated([...taken, i], after[i]);
    } else if (!identicalValues(before, after)) {
      out.updated(taken, after);
    }
    return;
  }
  const [part, ...rest] = parts;
  if (POSITIONAL.test(part)) {
    // `$`, `$[]`, `$[id]`: whichever elements changed are the ones the operator reached.
    const length = Math.max(Array.isArray(before) ? before.length : 0, Array.isArray(after) ? after.length : 0);
    for (let i = 0; i < length; i++) describeOperatorStep(out, before, after, String(i), rest, taken, appended);
    return;
  }
  describeOperatorStep(out, before, after, part, rest, taken, appended);
}

function describeOperatorStep(out: DescriptionBuilder, before: unknown, after: unknown, part: string, rest: string[], taken: Part[], appended: boolean): void {
  const was = childOf(before, part);
  const is = childOf(after, part);
  const path = [...taken, Array.isArray(after) && is.index !== undefined ? is.index : part];
  if (!is.found) {
    if (was.found) out.removed(path);
    return;
  }
  // A field the update created: MongoDB logs its whole new subtree at the first new component.
  if (!was.found) {
    out.updated(path, is.value);
    return;
  }
  if (rest.length > 0 && (isPlainObject(is.value) || Array.isArray(is.value)) && (isPlainObject(was.value) || Array.isArray(was.value))) {
    describeOperatorPath(out, was.value, is.value, rest, path, appended);
    return;
  }
  if (rest.length === 0) describeOperatorPath(out, was.value, is.value, rest, path, appended);
  else if (!identicalValues(was.value, is.value)) out.updated(path, is.value);
}

// ---- pipeline updates: MongoDB's delta of the two versions ----

/** The size of the `$v: 2, diff` wrapper MongoDB adds to a delta before comparing it with the document. */
const DELTA_METADATA_SIZE = 15;

type Diff = DocumentDiff | ArrayDiff;
interface DocumentDiff {
  kind: 'document';
  updates: [string, unknown][];
  inserts: [string, unknown][];
  deletes: string[];
  children: [string, Diff][];
}
interface ArrayDiff {
  kind: 'array';
  newSize?: number;
  /** An element's new value, or a DiffNode holding its sub-diff. */
  entries: [number, unknown][];
}

/** Marks the diff nodes among array entries (which may otherwise hold any value). */
class DiffNode {
  constructor(readonly diff: Diff) {}
}

function sizeOf(value: Document): number {
  return BSON.calculateObjectSize(value, { ignoreUndefined: true });
}

/** The diff as MongoDB serializes it, only to weigh it: sections `u`, `i`, `d`, `s<field>`; `a`, `l`, `u<i>`, `s<i>`. */
function serialized(diff: Diff): Document {
  const out: Document = {};
  if (diff.kind === 'array') {
    out.a = true;
    if (diff.newSize !== undefined) out.l = diff.newSize;
    for (const [index, entry] of diff.entries) {
      if (entry instanceof DiffNode) out[`s${index}`] = serialized(entry.diff);
      else out[`u${index}`] = entry;
    }
    return out;
  }
  if (diff.deletes.length > 0) out.d = Object.fromEntries(diff.deletes.map((field) => [field, false]));
  if (diff.updates.length > 0) out.u = Object.fromEntries(diff.updates);
  if (diff.inserts.length > 0) out.i = Object.fromEntries(diff.inserts);
  for (const [field, child] of diff.children) out[`s${field}`] = serialized(child);
  return out;
}

/** A sub-diff, or undefined when it would be larger than the new value (MongoDB then logs the value). */
function subDiff(before: Document | unknown[], after: Document | unknown[]): Diff | undefined {
  const diff = Array.isArray(before) && Array.isArray(after) ? arrayDiff(before, after) : documentDiff(before as Document, after as Document);
  return sizeOf(serialized(diff)) < sizeOf(after as Document) ? diff : undefined;
}

function bothContainers(a: unknown, b: unknown): a is Document | unknown[] {
  return (Array.isArray(a) && Array.isArray(b)) || (isPlainObject(a) && isPlainObject(b));
}

function arrayDiff(before: unknown[], after: unknown[]): ArrayDiff {
  const diff: ArrayDiff = { kind: 'array', entries: [] };
  const common = Math.min(before.length, after.length);
  for (let i = 0; i < common; i++) {
    if (identicalValues(before[i], after[i])) continue;
    const child = bothContainers(before[i], after[i]) ? subDiff(before[i] as Document, after[i] as Document) : undefined;
    diff.entries.push([i, child ? new DiffNode(child) : after[i]]);
  }
  for (let i = common; i < after.length; i++) diff.entries.push([i, after[i]]);
  if (before.length > after.length) diff.newSize = after.length;
  return diff;
}

/**
 * MongoDB's document diff: fields in the same order are compared (and descended into when both are
 * documents or both arrays); a field out of order is deleted and inserted again at the end.
 */
function documentDiff(before: Document, after: Document): DocumentDiff {
  const diff: DocumentDiff = { kind: 'document', updates: [], inserts: [], deletes: [], children: [] };
  const pre = Object.keys(before);
  const post = Object.keys(after);
  const deletes = new Set<string>();
  let i = 0;
  let j = 0;
  while (i < pre.length && j < post.length) {
    const key = pre[i];
    if (key === post[j]) {
      if (!identicalValues(before[key], after[key])) {
        const child = bothContainers(before[key], after[key]) ? subDiff(before[key], after[key] as Document) : undefined;
        if (child) diff.children.push([key, child]);
        else diff.updates.push([key, after[key]]);
      }
      j++;
    } else {
      deletes.add(key);
    }
    i++;
  }
  for (; i < pre.length; i++) diff.deletes.push(pre[i]);
  for (; j < post.length; j++) {
    diff.inserts.push([post[j], after[post[j]]]);
    deletes.delete(post[j]);
  }
  diff.deletes.push(...[...deletes].sort());
  return diff;
}

function describeDiff(out: DescriptionBuilder, diff: Diff, taken: Part[]): void {
  if (diff.kind === 'array') {
    if (diff.newSize !== undefined) out.truncated(taken, diff.newSize);
    for (const [index, entry] of diff.entries) {
      if (entry instanceof DiffNode) describeDiff(out, entry.diff, [...taken, index]);
      else out.updated([...taken, index], entry);
    }
    return;
  }
  for (const [field, value] of [...diff.updates, ...diff.inserts]) out.updated([...taken, field], value);
  for (const field of diff.deletes) out.removed([...taken, field]);
  for (const [field, child] of diff.children) describeDiff(out, child, [...taken, field]);
}

/**
 * The update description of a pipeline update, or undefined when MongoDB would log the update as a
 * replacement (its delta, with the wrapper, is not smaller than the new document).
 */
export function describePipelineUpdate(before: Document, after: Document): UpdateDescription | undefined {
  const diff = documentDiff(before, after);
  if (sizeOf(serialized(diff)) + DELTA_METADATA_SIZE >= sizeOf(after)) return undefined;
  const out = new DescriptionBuilder();
  describeDiff(out, diff, []);
  return out.description;
}

/** The update description of an operator update that touched `paths`. */
export function describeOperatorUpdate(before: Document, after: Document, paths: UpdatePaths): UpdateDescription {
  const out = new DescriptionBuilder();
  const appended = new Set(paths.appended ?? []);
  for (const path of paths.paths) describeOperatorPath(out, before, after, path.split('.'), [], appended.has(path));
  return out.description;
}
