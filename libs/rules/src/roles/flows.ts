/**
 * Per-document decisions of App Services rules v2: role assignment (first matching apply_when, no
 * fallback), the read flow (search, document_filters, read/write, field level) and the write flow
 * (document_filters.write, write, field-level writes, insert, delete). The choices where the sources
 * disagree are recorded in docs/decisions/0010-rules-semantics.md. Pure: inputs are never mutated.
 */
import { type EvaluationContext, withDocument } from '../expressions/context';
import { deepEqual, isPlainObject, type RuleDocument } from '../expressions/values';
import { type DecisionTrace } from '../explain/trace';
import { type CompiledFieldRule, type CompiledRole, type StaticFieldPlan } from './compiled-role';
import { type Evaluator } from './steps';

/** Per-request memory of document-independent apply_when values, indexed by role. */
export type ApplyWhenCache = (boolean | undefined)[];

export function selectRole(
  ev: Evaluator,
  roles: readonly CompiledRole[],
  ctx: EvaluationContext,
  cache: ApplyWhenCache | undefined,
  trace: DecisionTrace | undefined,
): CompiledRole | undefined {
  for (const role of roles) {
    let applies: boolean;
    const cached = role.applyWhenIsDocumentIndependent && cache ? cache[role.index] : undefined;
    if (cached !== undefined) {
      applies = cached;
      if (trace) trace.evaluations.push({ at: role.labels.applyWhen, expression: role.applyWhen.source, value: cached, cached: true });
    } else {
      applies = ev.bool(role.applyWhen, ctx, trace, role.labels.applyWhen);
      if (role.applyWhenIsDocumentIndependent && cache) cache[role.index] = applies;
    }
    if (applies) {
      if (trace) trace.role = role.name;
      return role;
    }
  }
  return undefined;
}

export interface ReadOutcome {
  role: CompiledRole | undefined;
  /** The visible document, or undefined when the document is hidden. */
  document: RuleDocument | undefined;
}

function settle(trace: DecisionTrace | undefined, decidedBy: string, reason: string): void {
  if (trace) {
    trace.decidedBy = decidedBy;
    trace.reason = reason;
  }
}

/** Whether the role's document filters let it see the document (write implies read). */
export function documentFiltersAllowRead(ev: Evaluator, role: CompiledRole, ctx: EvaluationContext, trace: DecisionTrace | undefined): boolean {
  const filters = role.documentFilters;
  if (!filters || (!filters.read && !filters.write)) return true;
  // An undefined read filter means true without Sync (decision 0010, conflict 1).
  if (!filters.read) return true;
  if (ev.bool(filters.read, ctx, trace, role.labels.documentFiltersRead)) return true;
  if (filters.write && ev.bool(filters.write, ctx, trace, role.labels.documentFiltersWrite)) return true;
  settle(trace, role.labels.documentFiltersRead, 'hidden: the document does not pass the role document filters');
  return false;
}

/**
 * The read flow for one document. `ctx.root` and `ctx.prevRoot` are the stored document (during a read
 * `%%prevRoot` resolves to the stored document, so insert-only roles do not grant reads).
 */
export function readDocument(
  ev: Evaluator,
  roles: readonly CompiledRole[],
  doc: RuleDocument,
  ctx: EvaluationContext,
  cache: ApplyWhenCache | undefined,
  search: boolean,
  trace: DecisionTrace | undefined,
): ReadOutcome {
  const role = selectRole(ev, roles, ctx, cache, trace);
  if (!role) {
    settle(trace, 'apply_when', 'hidden: no role applies');
    return { role, document: undefined };
  }
  return { role, document: readAs(ev, role, doc, ctx, search, trace) };
}

/** The read flow once `role` applies: the visible document, or undefined when it is hidden. */
export function readAs(
  ev: Evaluator,
  role: CompiledRole,
  doc: RuleDocument,
  ctx: EvaluationContext,
  search: boolean,
  trace: DecisionTrace | undefined,
): RuleDocument | undefined {
  if (search) {
    // `search` defaults to true (decision 0010, conflict 2).
    const allowed = ev.optional(role.search, ctx, trace, role.labels.search) ?? true;
    if (!allowed) {
      settle(trace, role.labels.search, 'hidden: the role may not search');
      return undefined;
    }
  }
  if (!documentFiltersAllowRead(ev, role, ctx, trace)) return undefined;

  const read = ev.optional(role.read, ctx, trace, role.labels.read);
  if (read === true) {
    settle(trace, role.labels.read, 'visible: the role reads the whole document');
    return doc;
  }
  const write = ev.optional(role.write, ctx, trace, role.labels.write);
  if (write === true) {
    settle(trace, role.labels.write, 'visible: write implies read');
    return doc;
  }
  if (read === false) {
    settle(trace, role.labels.read, 'hidden: read is false and write is not true');
    return undefined;
  }
  if (!role.hasFieldRules) {
    settle(trace, role.labels.read, 'hidden: neither read nor write is true and the role has no field rules');
    return undefined;
  }
  const visible =
    role.staticFields && !trace ? staticVisibleFields(doc, role.staticFields) : visibleFields(ev, doc, role.fields, role.additionalFields, ctx, trace, true, '');
  settle(trace, role.labels.fields, 'visible: field-level read permissions');
  return visible;
}

/** Sets a key on a fresh object; `__proto__` (possible in parsed documents) stays an own key. */
function setField(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** True while no enumerable property has been added to Object.prototype (checked, not assumed). */
function objectPrototypeIsClean(): boolean {
  for (const key in Object.prototype) if (key !== undefined) return false;
  return true;
}

/**
 * `visibleFields` when every field permission is a constant: a table lookup per field. With `copy`, the
 * object values kept are copied (see RequestOptions.copy).
 */
export function staticVisibleFields(doc: RuleDocument, plan: StaticFieldPlan, copy?: (value: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const exceptions = plan.exceptions;
  const proto: unknown = Object.getPrototypeOf(doc);
  if (exceptions !== undefined && (proto === null || (proto === Object.prototype && objectPrototypeIsClean()))) {
    // `for...in` walks the own keys without allocating a key array; with no enumerable inherited
    // property it sees exactly Object.keys(doc), in the same order.
    const others = plan.others;
    const count = exceptions.length;
    for (const key in doc) {
      let readable = others;
      for (let i = 0; i < count; i++) {
        if (exceptions[i] === key) {
          readable = !others;
          break;
        }
      }
      if (!readable && key !== '_id') continue;
      const value = doc[key];
      setField(out, key, copy !== undefined && typeof value === 'object' && value !== null ? copy(value) : value);
    }
    return out;
  }
  const fields = plan.fields;
  for (const key of Object.keys(doc)) {
    if (key !== '_id' && !(fields[key] ?? plan.others)) continue;
    const value = doc[key];
    setField(out, key, copy !== undefined && typeof value === 'object' && value !== null ? copy(value) : value);
  }
  return out;
}

/**
 * The visible document made to share no object with `doc`: `visible` is `doc` itself or a fresh copy
 * of its top level (whose values may still be `doc`'s), as the read flow returns them.
 */
export function ownedCopy(doc: RuleDocument, visible: RuleDocument, copy: (value: unknown) => unknown): RuleDocument {
  if (visible === doc) return copy(doc) as RuleDocument;
  for (const key of Object.keys(visible)) {
    const value = visible[key];
    if (typeof value === 'object' && value !== null) setField(visible, key, copy(value));
  }
  return visible;
}

/**
 * The fields of `value` the rules let the user read. At the top level `_id` is kept (decision 0010).
 * `prefix` is the dotted path of `value`, tracked only for the trace's withheld list.
 */
function visibleFields(
  ev: Evaluator,
  value: Record<string, unknown>,
  rules: ReadonlyMap<string, CompiledFieldRule> | undefined,
  additional: CompiledFieldRule | undefined,
  ctx: EvaluationContext,
  trace: DecisionTrace | undefined,
  top: boolean,
  prefix: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const fieldValue = value[key];
    if (top && key === '_id') {
      out._id = fieldValue;
      continue;
    }
    const rule = rules?.get(key) ?? additional;
    if (!rule) {
      if (trace) trace.withheldFields.push(top ? key : `${prefix}.${key}`);
      continue;
    }
    if (rule.explicit) {
      if (!trace && rule.constantRead !== undefined) {
        if (rule.constantRead) setField(out, key, fieldValue);
        continue;
      }
      const fieldCtx = rule.usesFieldValue ? withDocument(ctx, ctx.root, ctx.prevRoot, fieldValue, fieldValue) : ctx;
      if (rule.read && ev.bool(rule.read, fieldCtx, trace, rule.labels.read)) setField(out, key, fieldValue);
      else if (rule.write && ev.bool(rule.write, fieldCtx, trace, rule.labels.write)) setField(out, key, fieldValue);
      else if (trace) trace.withheldFields.push(top ? key : `${prefix}.${key}`);
      continue;
    }
    if (rule.fields) {
      const path = trace ? (top ? key : `${prefix}.${key}`) : '';
      const inner = visibleEmbedded(ev, fieldValue, rule.fields, ctx, trace, path);
      if (inner !== undefined) setField(out, key, inner);
      else if (trace) trace.withheldFields.push(path);
      continue;
    }
    // The field rule defines nothing: read and write default to false.
    if (trace) trace.withheldFields.push(top ? key : `${prefix}.${key}`);
  }
  return out;
}

/** An embedded document (or an array of them) under embedded field rules; undefined when nothing is left. */
function visibleEmbedded(
  ev: Evaluator,
  value: unknown,
  rules: ReadonlyMap<string, CompiledFieldRule>,
  ctx: EvaluationContext,
  trace: DecisionTrace | undefined,
  path: string,
): unknown {
  if (isPlainObject(value)) {
    const inner = visibleFields(ev, value, rules, undefined, ctx, trace, false, path);
    return Object.keys(inner).length > 0 ? inner : undefined;
  }
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) {
      if (!isPlainObject(item)) continue;
      items.push(visibleFields(ev, item, rules, undefined, ctx, trace, false, path));
    }
    return items.length > 0 ? items : undefined;
  }
  return undefined;
}

// ---- writes ------------------------------------------------------------------------------------------

export type WriteOperation = 'insert' | 'update' | 'delete';

export interface WriteOutcome {
  role: CompiledRole | undefined;
  allowed: boolean;
  /** Why the write was refused (for logs and explain; not shown to clients). */
  reason?: string;
}

function refuse(role: CompiledRole | undefined, trace: DecisionTrace | undefined, decidedBy: string, reason: string): WriteOutcome {
  settle(trace, decidedBy, `refused: ${reason}`);
  return { role, allowed: false, reason };
}

/** Checks the role's document_filters.write against each given image (pre and post for updates). */
function documentFiltersAllowWrite(
  ev: Evaluator,
  role: CompiledRole,
  images: readonly EvaluationContext[],
  trace: DecisionTrace | undefined,
): boolean {
  const filter = role.documentFilters?.write;
  if (!filter) return true;
  for (const ctx of images) {
    if (!ev.bool(filter, ctx, trace, role.labels.documentFiltersWrite)) return false;
  }
  return true;
}

/**
 * Field-level write check: every changed field path must be writable. `before`/`after` are the field
 * values before and after the write (`undefined` for absent).
 */
function fieldsWritable(
  ev: Evaluator,
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
  rules: ReadonlyMap<string, CompiledFieldRule> | undefined,
  additional: CompiledFieldRule | undefined,
  ctx: EvaluationContext,
  trace: DecisionTrace | undefined,
  prefix: string,
  refused: string[],
): void {
  const keys = new Set<string>([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const key of keys) {
    if (prefix === '' && key === '_id') continue;
    const previous = before?.[key];
    const next = after?.[key];
    if (before && after && deepEqual(previous, next)) continue;
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const rule = rules?.get(key) ?? additional;
    if (!rule) {
      refused.push(path);
      if (trace) trace.withheldFields.push(path);
      continue;
    }
    if (rule.explicit) {
      const fieldCtx = rule.usesFieldValue ? withDocument(ctx, ctx.root, ctx.prevRoot, next, previous) : ctx;
      const ok = rule.write ? ev.bool(rule.write, fieldCtx, trace, rule.labels.write) : false;
      if (!ok) {
        refused.push(path);
        if (trace) trace.withheldFields.push(path);
      }
      continue;
    }
    if (rule.fields && (previous === undefined || isPlainObject(previous)) && (next === undefined || isPlainObject(next))) {
      fieldsWritable(ev, previous, next, rule.fields, undefined, ctx, trace, path, refused);
      continue;
    }
    refused.push(path);
    if (trace) trace.withheldFields.push(path);
  }
}

/**
 * The write flow. For inserts `pre` is undefined; for deletes `post` is undefined. The role is chosen on
 * the stored document for updates and deletes and on the new document for inserts (decision 0010).
 */
export function writeDocument(
  ev: Evaluator,
  roles: readonly CompiledRole[],
  operation: WriteOperation,
  pre: RuleDocument | undefined,
  post: RuleDocument | undefined,
  base: EvaluationContext,
  cache: ApplyWhenCache | undefined,
  trace: DecisionTrace | undefined,
): WriteOutcome {
  const stored = pre ?? post;
  const selectionCtx = withDocument(base, stored, pre);
  const role = selectRole(ev, roles, selectionCtx, cache, trace);
  if (!role) return refuse(role, trace, 'apply_when', 'no role applies to the document');

  // `%%root` is the document after the operation (the stored one for a delete), `%%prevRoot` the one before.
  const ctx = withDocument(base, post ?? pre, pre);
  const images = operation === 'update' ? [withDocument(base, pre, pre), ctx] : [ctx];
  if (!documentFiltersAllowWrite(ev, role, images, trace)) {
    return refuse(role, trace, role.labels.documentFiltersWrite, `role "${role.name}" document filters do not allow writing the document`);
  }

  const write = ev.optional(role.write, ctx, trace, role.labels.write);
  if (write === false) return refuse(role, trace, role.labels.write, `role "${role.name}" does not have write permission`);
  if (write === undefined) {
    if (!role.hasFieldRules) {
      return refuse(role, trace, role.labels.write, `role "${role.name}" does not have write permission`);
    }
    const refused: string[] = [];
    // Inserts write every field of the new document and deletes remove every field of the stored one.
    const before = operation === 'insert' ? undefined : pre;
    const after = operation === 'delete' ? undefined : post;
    fieldsWritable(ev, before, after, role.fields, role.additionalFields, ctx, trace, '', refused);
    if (refused.length > 0) {
      return refuse(role, trace, role.labels.fields, `role "${role.name}" does not have write permission for field(s) ${refused.join(', ')}`);
    }
  }

  switch (operation) {
    case 'insert': {
      // insert and delete default to true (decision 0010, conflict 2).
      const insert = ev.optional(role.insert, ctx, trace, role.labels.insert) ?? true;
      if (!insert) return refuse(role, trace, role.labels.insert, `role "${role.name}" does not have insert permission`);
      settle(trace, role.labels.insert, 'allowed');
      return { role, allowed: true };
    }
    case 'delete': {
      const remove = ev.optional(role.delete, ctx, trace, role.labels.delete) ?? true;
      if (!remove) return refuse(role, trace, role.labels.delete, `role "${role.name}" does not have delete permission`);
      settle(trace, role.labels.delete, 'allowed');
      return { role, allowed: true };
    }
    case 'update':
      settle(trace, write === true ? role.labels.write : role.labels.fields, 'allowed');
      return { role, allowed: true };
  }
}
