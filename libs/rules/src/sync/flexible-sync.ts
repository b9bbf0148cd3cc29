/**
 * Flexible Sync roles: one role per collection per session, chosen by the first apply_when that holds.
 * The chosen role must be Sync-compatible, otherwise access is denied and later roles are not tried.
 * Documents then sync by the role's document filters (write implies read).
 */
import { type CompiledExpression, type ExpansionRoot } from '../expressions/compile';
import { requestScope, withDocument } from '../expressions/context';
import { type RuleDocument } from '../expressions/values';
import { type DecisionTrace, newTrace } from '../explain/trace';
import { type Condition, readableCondition, translateExpression } from '../filters/pushdown';
import { type CompiledFieldRule, type CompiledRole } from '../roles/compiled-role';
import { type CompiledRules, type RequestContext } from '../roles/compiled-rules';
import { type ApplyWhenCache, readDocument, selectRole, type WriteOperation, type WriteOutcome, writeDocument } from '../roles/flows';
import { type Evaluator, runAsync, syncEvaluator } from '../roles/steps';

const SYNC_EXPANSIONS = new Set<ExpansionRoot>(['true', 'false', 'values', 'environment', 'user']);

export interface SyncCompatibility {
  compatible: boolean;
  reasons: string[];
}

export interface SyncCompatibilityOptions {
  /** The collection's queryable fields; when given, document filters may only use these. */
  queryableFields?: readonly string[];
}

function checkFilterExpression(expression: CompiledExpression, where: string, options: SyncCompatibilityOptions, reasons: string[]): void {
  for (const root of expression.info.expansions) {
    if (!SYNC_EXPANSIONS.has(root)) reasons.push(`${where} uses %%${root}, which Sync does not allow`);
  }
  if (expression.info.usesFunction) reasons.push(`${where} uses %function, which Sync document filters do not allow`);
  if (options.queryableFields) {
    const queryable = new Set(options.queryableFields);
    for (const field of expression.info.fields) {
      if (!queryable.has(field)) reasons.push(`${where} references non-queryable field "${field}"`);
    }
  }
}

function checkFieldRules(rules: ReadonlyMap<string, CompiledFieldRule> | undefined, where: string, reasons: string[], top: boolean): void {
  if (!rules) return;
  for (const [name, rule] of rules) {
    if (top && name === '_id') reasons.push(`${where}._id: field-level permissions on _id are not allowed with Sync`);
    for (const kind of ['read', 'write'] as const) {
      const expression = rule[kind];
      if (expression && typeof expression.source !== 'boolean') reasons.push(`${where}.${name}.${kind} must be a boolean literal with Sync`);
    }
    checkFieldRules(rule.fields, `${where}.${name}.fields`, reasons, false);
  }
}

/** The reasons (none when compatible) a role cannot be used with Flexible Sync. */
export function checkSyncCompatibility(role: CompiledRole, options: SyncCompatibilityOptions = {}): SyncCompatibility {
  const reasons: string[] = [];
  for (const root of role.applyWhen.info.expansions) {
    if (!SYNC_EXPANSIONS.has(root)) reasons.push(`${role.label}.apply_when uses %%${root}, which Sync does not allow`);
  }
  if (role.applyWhen.info.fields.size > 0) reasons.push(`${role.label}.apply_when reads document fields, which Sync does not allow`);
  const filters = role.documentFilters;
  if (!filters?.read) reasons.push(`${role.label}.document_filters.read must be defined with Sync`);
  if (!filters?.write) reasons.push(`${role.label}.document_filters.write must be defined with Sync`);
  if (filters?.read) checkFilterExpression(filters.read, `${role.label}.document_filters.read`, options, reasons);
  if (filters?.write) checkFilterExpression(filters.write, `${role.label}.document_filters.write`, options, reasons);
  if (role.insert) checkFilterExpression(role.insert, `${role.label}.insert`, options, reasons);
  if (role.delete) checkFilterExpression(role.delete, `${role.label}.delete`, options, reasons);
  for (const kind of ['read', 'write'] as const) {
    const expression = role[kind];
    if (expression && typeof expression.source !== 'boolean') reasons.push(`${role.label}.${kind} must be a boolean literal with Sync`);
  }
  checkFieldRules(role.fields, `${role.label}.fields`, reasons, true);
  if (role.additionalFields) checkFieldRules(new Map([['additional_fields', role.additionalFields]]), role.label, reasons, false);
  return { compatible: reasons.length === 0, reasons };
}

/** The per-session outcome for one collection. */
export interface SyncSession {
  /** The role chosen for the session, or null. */
  role: string | null;
  /** True when no role applies or the applying role is not Sync-compatible. */
  denied: boolean;
  reasons: string[];
  /** What a document must satisfy to sync down, as a MongoDB query (`false`: nothing). */
  readQuery: Condition;
  /** What a document must satisfy to accept a client write (`false`: nothing). */
  writeQuery: Condition;
  /** The document as the client may see it (field permissions applied), or undefined. */
  read(doc: RuleDocument): RuleDocument | undefined;
  canRead(doc: RuleDocument): boolean;
  /** Whether the client may write this (stored) document at all. */
  canWrite(doc: RuleDocument): boolean;
  /** A client write; a refused one is undone by a compensating write. */
  checkWrite(operation: WriteOperation, pre: RuleDocument | undefined, post: RuleDocument | undefined): WriteOutcome;
  trace?: DecisionTrace;
}

const refused: WriteOutcome = { role: undefined, allowed: false, reason: 'no Sync role' };

function deniedSession(role: string | null, reasons: string[], trace: DecisionTrace | undefined): SyncSession {
  return {
    role,
    denied: true,
    reasons,
    readQuery: false,
    writeQuery: false,
    read: () => undefined,
    canRead: () => false,
    canWrite: () => false,
    checkWrite: () => refused,
    trace,
  };
}

function sessionFlow(ev: Evaluator, rules: CompiledRules, request: RequestContext, options: SyncCompatibilityOptions): SyncSession {
  const base = requestScope(request);
  const trace = request.explain ? newTrace('sync', rules.namespace) : undefined;
  if (trace) trace.roleSource = rules.roleSource;
  const role = selectRole(ev, rules.roles, base, undefined, trace);
  if (!role) return deniedSession(null, ['no role applies'], trace);
  const compatibility = checkSyncCompatibility(role, options);
  // No fallback: an incompatible matching role denies access, later roles are not tried.
  if (!compatibility.compatible) return deniedSession(role.name, compatibility.reasons, trace);

  // The role is fixed for the session: per document only its filters and permissions are evaluated,
  // with the same read and write flows as outside Sync. A compatible role calls no %function.
  const roles = [role];
  const cache: ApplyWhenCache = [];
  cache[role.index] = true;
  const read = (doc: RuleDocument): RuleDocument | undefined =>
    readDocument(syncEvaluator, roles, doc, withDocument(base, doc, doc), cache, false, undefined).document;
  const writeFilter = role.documentFilters?.write as CompiledExpression;
  const writeLevel = role.write?.source === true || (role.write === undefined && role.hasFieldRules);
  const writeQuery = writeLevel ? translateExpression(writeFilter.source, base).condition : false;
  return {
    role: role.name,
    denied: false,
    reasons: [],
    readQuery: readableCondition(roles, base).condition,
    writeQuery,
    read,
    canRead: (doc) => read(doc) !== undefined,
    canWrite: (doc) => writeLevel && writeFilter.evaluateSync(withDocument(base, doc, doc)),
    checkWrite: (operation, pre, post) => writeDocument(syncEvaluator, roles, operation, pre, post, base, cache, undefined),
    trace,
  };
}

/** Chooses the session's role for a collection and returns what the user may sync from it. */
export function openSyncSession(rules: CompiledRules, request: RequestContext, options: SyncCompatibilityOptions = {}): Promise<SyncSession> {
  return runAsync((ev) => sessionFlow(ev, rules, request, options));
}
