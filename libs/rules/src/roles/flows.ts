/**
 * Per-document decisions of App Services rules v2: role assignment (first matching apply_when, no
 * fallback), the read flow (search, document_filters, read/write, field level) and the write flow
 * (document_filters.write, write, field-level writes, insert, delete). The choices where the sources
 * disagree are recorded in docs/decisions/0010-rules-semantics.md. Pure: inputs are never mutated.
 */
import { type EvaluationContext } from '../expressions/context';
import { deepEqual, isPlainObject, type RuleDocument } from '../expressions/values';
import { type DecisionTrace } from '../explain/trace';
import { type CompiledFieldRule, type CompiledRole } from './compiled-role';
import { evaluate, evaluateOptional, type Step } from './steps';

/** Per-request memory of document-independent apply_when values, indexed by role. */
export type ApplyWhenCache = (boolean | undefined)[];

export function* selectRole(
  roles: readonly CompiledRole[],
  ctx: EvaluationContext,
  cache: ApplyWhenCache | undefined,
  trace: DecisionTrace | undefined,
): Step<CompiledRole | undefined> {
  for (const role of roles) {
    let applies: boolean;
    const cached = role.applyWhenIsDocumentIndependent && cache ? cache[role.index] : undefined;
    if (cached !== undefined) {
      applies = cached;
      if (trace) trace.evaluations.push({ at: `${role.label}.apply_when`, expression: role.applyWhen.source, value: cached, cached: true });
    } else {
      applies = yield* evaluate(role.applyWhen, ctx, trace, `${role.label}.apply_when`);
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
function* documentFiltersAllowRead(role: CompiledRole, ctx: EvaluationContext, trace: DecisionTrace | undefined): Step<boolean> {
  const filters = role.documentFilters;
  if (!filters || (!filters.read && !filters.write)) return true;
  // An undefined read filter means true without Sync (decision 0010, conflict 1).
  if (!filters.read) return true;
  if (yield* evaluate(filters.read, ctx, trace, `${role.label}.document_filters.read`)) return true;
  if (filters.write && (yield* evaluate(filters.write, ctx, trace, `${role.label}.document_filters.write`))) return true;
  settle(trace, `${role.label}.document_filters.read`, 'hidden: the document does not pass the role document filters');
  return false;
}

/**
 * The read flow for one document. `ctx.root` and `ctx.prevRoot` are the stored document (during a read
 * `%%prevRoot` resolves to the stored document, so insert-only roles do not grant reads).
 */
export function* readDocument(
  roles: readonly CompiledRole[],
  doc: RuleDocument,
  ctx: EvaluationContext,
  cache: ApplyWhenCache | undefined,
  search: boolean,
  trace: DecisionTrace | undefined,
): Step<ReadOutcome> {
  const role = yield* selectRole(roles, ctx, cache, trace);
  if (!role) {
    settle(trace, 'apply_when', 'hidden: no role applies');
    return { role, document: undefined };
  }
  if (search) {
    // `search` defaults to true (decision 0010, conflict 2).
    const allowed = (yield* evaluateOptional(role.search, ctx, trace, `${role.label}.search`)) ?? true;
    if (!allowed) {
      settle(trace, `${role.label}.search`, 'hidden: the role may not search');
      return { role, document: undefined };
    }
  }
  if (!(yield* documentFiltersAllowRead(role, ctx, trace))) return { role, document: undefined };

  const read = yield* evaluateOptional(role.read, ctx, trace, `${role.label}.read`);
  if (read === true) {
    settle(trace, `${role.label}.read`, 'visible: the role reads the whole document');
    return { role, document: doc };
  }
  const write = yield* evaluateOptional(role.write, ctx, trace, `${role.label}.write`);
  if (write === true) {
    settle(trace, `${role.label}.write`, 'visible: write implies read');
    return { role, document: doc };
  }
  if (read === false) {
    settle(trace, `${role.label}.read`, 'hidden: read is false and write is not true');
    return { role, document: undefined };
  }
  if (!role.hasFieldRules) {
    settle(trace, `${role.label}.read`, 'hidden: neither read nor write is true and the role has no field rules');
    return { role, document: undefined };
  }
  const visible = yield* visibleFields(doc, role.fields, role.additionalFields, ctx, trace, `${role.label}.fields`, '');
  if ('_id' in doc) visible._id = doc._id;
  settle(trace, `${role.label}.fields`, 'visible: field-level read permissions');
  return { role, document: visible };
}

/** The fields of `value` the rules let the user read; `_id` is handled by the caller (decision 0010). */
function* visibleFields(
  value: Record<string, unknown>,
  rules: ReadonlyMap<string, CompiledFieldRule> | undefined,
  additional: CompiledFieldRule | undefined,
  ctx: EvaluationContext,
  trace: DecisionTrace | undefined,
  at: string,
  prefix: string,
): Step<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (prefix === '' && key === '_id') continue;
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const own = rules?.get(key);
    const rule = own ?? additional;
    const ruleAt = own ? `${at}.${key}` : `${at.replace(/\.fields$/, '')}.additional_fields`;
    const fieldValue = value[key];
    if (!rule) {
      if (trace) trace.withheldFields.push(path);
      continue;
    }
    if (rule.explicit) {
      const fieldCtx: EvaluationContext = { ...ctx, this: fieldValue, prev: fieldValue };
      if (rule.read && (yield* evaluate(rule.read, fieldCtx, trace, `${ruleAt}.read`))) out[key] = fieldValue;
      else if (rule.write && (yield* evaluate(rule.write, fieldCtx, trace, `${ruleAt}.write`))) out[key] = fieldValue;
      else if (trace) trace.withheldFields.push(path);
      continue;
    }
    if (rule.fields) {
      const inner = yield* visibleEmbedded(fieldValue, rule.fields, ctx, trace, `${ruleAt}.fields`, path);
      if (inner !== undefined) out[key] = inner;
      else if (trace) trace.withheldFields.push(path);
      continue;
    }
    // The field rule defines nothing: read and write default to false.
    if (trace) trace.withheldFields.push(path);
  }
  return out;
}

/** An embedded document (or an array of them) under embedded field rules; undefined when nothing is left. */
function* visibleEmbedded(
  value: unknown,
  rules: ReadonlyMap<string, CompiledFieldRule>,
  ctx: EvaluationContext,
  trace: DecisionTrace | undefined,
  at: string,
  path: string,
): Step<unknown> {
  if (isPlainObject(value)) {
    const inner = yield* visibleFields(value, rules, undefined, ctx, trace, at, path);
    return Object.keys(inner).length > 0 ? inner : undefined;
  }
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) {
      if (!isPlainObject(item)) continue;
      items.push(yield* visibleFields(item, rules, undefined, ctx, trace, at, path));
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
function* documentFiltersAllowWrite(
  role: CompiledRole,
  images: readonly EvaluationContext[],
  trace: DecisionTrace | undefined,
): Step<boolean> {
  const filter = role.documentFilters?.write;
  if (!filter) return true;
  for (const ctx of images) {
    if (!(yield* evaluate(filter, ctx, trace, `${role.label}.document_filters.write`))) return false;
  }
  return true;
}

/**
 * Field-level write check: every changed field path must be writable. `before`/`after` are the field
 * values before and after the write (`undefined` for absent).
 */
function* fieldsWritable(
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
  rules: ReadonlyMap<string, CompiledFieldRule> | undefined,
  additional: CompiledFieldRule | undefined,
  ctx: EvaluationContext,
  trace: DecisionTrace | undefined,
  at: string,
  prefix: string,
  refused: string[],
): Step<void> {
  const keys = new Set<string>([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const key of keys) {
    if (prefix === '' && key === '_id') continue;
    const previous = before?.[key];
    const next = after?.[key];
    if (before && after && deepEqual(previous, next)) continue;
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const own = rules?.get(key);
    const rule = own ?? additional;
    const ruleAt = own ? `${at}.${key}` : `${at.replace(/\.fields$/, '')}.additional_fields`;
    if (!rule) {
      refused.push(path);
      if (trace) trace.withheldFields.push(path);
      continue;
    }
    if (rule.explicit) {
      const fieldCtx: EvaluationContext = { ...ctx, this: next, prev: previous };
      const ok = rule.write ? yield* evaluate(rule.write, fieldCtx, trace, `${ruleAt}.write`) : false;
      if (!ok) {
        refused.push(path);
        if (trace) trace.withheldFields.push(path);
      }
      continue;
    }
    if (rule.fields && (previous === undefined || isPlainObject(previous)) && (next === undefined || isPlainObject(next))) {
      yield* fieldsWritable(
        previous,
        next,
        rule.fields,
        undefined,
        ctx,
        trace,
        `${ruleAt}.fields`,
        path,
        refused,
      );
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
export function* writeDocument(
  roles: readonly CompiledRole[],
  operation: WriteOperation,
  pre: RuleDocument | undefined,
  post: RuleDocument | undefined,
  base: EvaluationContext,
  cache: ApplyWhenCache | undefined,
  trace: DecisionTrace | undefined,
): Step<WriteOutcome> {
  const stored = pre ?? post;
  const selectionCtx: EvaluationContext = { ...base, root: stored, prevRoot: pre };
  const role = yield* selectRole(roles, selectionCtx, cache, trace);
  if (!role) return refuse(role, trace, 'apply_when', 'no role applies to the document');

  // `%%root` is the document after the operation (the stored one for a delete), `%%prevRoot` the one before.
  const ctx: EvaluationContext = { ...base, root: post ?? pre, prevRoot: pre };
  const images = operation === 'update' ? [{ ...base, root: pre, prevRoot: pre }, ctx] : [ctx];
  if (!(yield* documentFiltersAllowWrite(role, images, trace))) {
    return refuse(role, trace, `${role.label}.document_filters.write`, `role "${role.name}" document filters do not allow writing the document`);
  }

  const write = yield* evaluateOptional(role.write, ctx, trace, `${role.label}.write`);
  if (write === false) return refuse(role, trace, `${role.label}.write`, `role "${role.name}" does not have write permission`);
  if (write === undefined) {
    if (!role.hasFieldRules) {
      return refuse(role, trace, `${role.label}.write`, `role "${role.name}" does not have write permission`);
    }
    const refused: string[] = [];
    // Inserts write every field of the new document and deletes remove every field of the stored one.
    const before = operation === 'insert' ? undefined : pre;
    const after = operation === 'delete' ? undefined : post;
    yield* fieldsWritable(before, after, role.fields, role.additionalFields, ctx, trace, `${role.label}.fields`, '', refused);
    if (refused.length > 0) {
      return refuse(role, trace, `${role.label}.fields`, `role "${role.name}" does not have write permission for field(s) ${refused.join(', ')}`);
    }
  }

  switch (operation) {
    case 'insert': {
      // insert and delete default to true (decision 0010, conflict 2).
      const insert = (yield* evaluateOptional(role.insert, ctx, trace, `${role.label}.insert`)) ?? true;
      if (!insert) return refuse(role, trace, `${role.label}.insert`, `role "${role.name}" does not have insert permission`);
      settle(trace, `${role.label}.insert`, 'allowed');
      return { role, allowed: true };
    }
    case 'delete': {
      const remove = (yield* evaluateOptional(role.delete, ctx, trace, `${role.label}.delete`)) ?? true;
      if (!remove) return refuse(role, trace, `${role.label}.delete`, `role "${role.name}" does not have delete permission`);
      settle(trace, `${role.label}.delete`, 'allowed');
      return { role, allowed: true };
    }
    case 'update':
      settle(trace, write === true ? `${role.label}.write` : `${role.label}.fields`, 'allowed');
      return { role, allowed: true };
  }
}
