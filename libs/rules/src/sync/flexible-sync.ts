/**
 * Flexible Sync roles: one role per collection per session, chosen by the first apply_when that holds.
 * The chosen role must be Sync-compatible, otherwise access is denied and later roles are not tried.
 * Documents then sync by the role's document filters (write implies read).
 */
import { type CompiledExpression, type ExpansionRoot } from '../expressions/compile';
import { type EvaluationContext, requestScope, withDocument } from '../expressions/context';
import { type RuleDocument } from '../expressions/values';
import { type DecisionTrace, newTrace } from '../explain/trace';
import { type Condition, translateExpression } from '../filters/pushdown';
import { type CompiledFieldRule, type CompiledRole } from '../roles/compiled-role';
import { type CompiledRules, type RequestContext } from '../roles/compiled-rules';
import { selectRole } from '../roles/flows';
import { type Evaluator, runAsync } from '../roles/steps';

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
      if (!queryable.has(field) && !expression.info.expansions.has('root')) reasons.push(`${where} references non-queryable field "${field}"`);
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
  /** What a document must satisfy to sync down (document_filters.read OR .write), as a MongoDB query. */
  readQuery: Condition;
  /** What a document must satisfy to accept a client write. */
  writeQuery: Condition;
  canRead(doc: RuleDocument): boolean;
  canWrite(doc: RuleDocument): boolean;
  trace?: DecisionTrace;
}

function deniedSession(role: string | null, reasons: string[], trace: DecisionTrace | undefined): SyncSession {
  return { role, denied: true, reasons, readQuery: false, writeQuery: false, canRead: () => false, canWrite: () => false, trace };
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
  const readFilter = role.documentFilters?.read as CompiledExpression;
  const writeFilter = role.documentFilters?.write as CompiledExpression;
  const readAll = role.read?.source === true || role.write?.source === true || role.hasFieldRules;
  const writeAll = role.write?.source === true;
  const at = (doc: RuleDocument): EvaluationContext => withDocument(base, doc, doc);
  const readQuery = translateExpression({ $or: [readFilter.source, writeFilter.source] }, base).condition;
  const writeQuery = translateExpression(writeFilter.source, base).condition;
  return {
    role: role.name,
    denied: false,
    reasons: [],
    readQuery: readAll ? readQuery : false,
    writeQuery: writeAll ? writeQuery : false,
    canRead: (doc) => readAll && (readFilter.evaluateSync(at(doc)) || writeFilter.evaluateSync(at(doc))),
    canWrite: (doc) => writeAll && writeFilter.evaluateSync(at(doc)),
    trace,
  };
}

/** Chooses the session's role for a collection and returns what the user may sync from it. */
export function openSyncSession(rules: CompiledRules, request: RequestContext, options: SyncCompatibilityOptions = {}): Promise<SyncSession> {
  return runAsync((ev) => sessionFlow(ev, rules, request, options));
}
