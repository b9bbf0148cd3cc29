/**
 * Compiles one role of a rule set: every expression once, with the facts the evaluators and the query
 * pushdown need (which expressions read the document, which call `%function`).
 */
import { RulesError, RulesErrorCode } from '../errors/rules.error';
import { type CompiledExpression, compileExpression, usesDocument } from '../expressions/compile';
import { type Expression, type FieldPermission, type RoleConfig } from './rule-config';

export interface CompiledFieldRule {
  /** `read` or `write` is defined on this field: it decides the whole subtree. */
  readonly explicit: boolean;
  /** Trace locations, e.g. `roles[0](r).fields.title.read` (built once, not per document). */
  readonly labels: { readonly read: string; readonly write: string };
  /** A permission reads `%%this`/`%%prev`: evaluate it with the field's values. */
  readonly usesFieldValue: boolean;
  /** Readability when `read` and `write` are constants (`true`, `false`, `{}`), else undefined. */
  readonly constantRead: boolean | undefined;
  readonly read?: CompiledExpression;
  readonly write?: CompiledExpression;
  /** Rules of the embedded document's fields, when the field itself defines no permission. */
  readonly fields?: ReadonlyMap<string, CompiledFieldRule>;
}

export interface CompiledRole {
  readonly name: string;
  readonly index: number;
  readonly source: RoleConfig;
  /** `roles[<index>](<name>)`, the prefix of trace locations. */
  readonly label: string;
  /** Trace locations of the role's expressions, built once. */
  readonly labels: RoleLabels;
  readonly applyWhen: CompiledExpression;
  /** apply_when does not read the document: its value is the same for every document of a request. */
  readonly applyWhenIsDocumentIndependent: boolean;
  readonly documentFilters?: { readonly read?: CompiledExpression; readonly write?: CompiledExpression };
  readonly read?: CompiledExpression;
  readonly write?: CompiledExpression;
  readonly insert?: CompiledExpression;
  readonly delete?: CompiledExpression;
  readonly search?: CompiledExpression;
  readonly fields?: ReadonlyMap<string, CompiledFieldRule>;
  readonly additionalFields?: CompiledFieldRule;
  /** `fields` or `additional_fields` is defined: field-level evaluation is possible. */
  readonly hasFieldRules: boolean;
  /** Field-level readability known at compile time (every field permission a constant), else undefined. */
  readonly staticFields?: StaticFieldPlan;
  /** Some expression of this role calls `%function`. */
  readonly async: boolean;
}

export interface RoleLabels {
  readonly applyWhen: string;
  readonly documentFiltersRead: string;
  readonly documentFiltersWrite: string;
  readonly read: string;
  readonly write: string;
  readonly insert: string;
  readonly delete: string;
  readonly search: string;
  readonly fields: string;
}

/** Top-level fields' readability when no field permission depends on the request or the document. */
export interface StaticFieldPlan {
  /** Field name -> readable (a null-prototype object). */
  readonly fields: Readonly<Record<string, boolean>>;
  /** Readability of fields without their own rule (additional_fields). */
  readonly others: boolean;
  /** The fields whose readability is not `others`, when few enough to scan (else undefined). */
  readonly exceptions: readonly string[] | undefined;
}

/** Up to this many exceptions a scan of a list beats a dictionary lookup per field. */
const EXCEPTION_SCAN_LIMIT = 8;

function staticFieldPlan(fields: ReadonlyMap<string, CompiledFieldRule> | undefined, additional: CompiledFieldRule | undefined): StaticFieldPlan | undefined {
  const readable = (rule: CompiledFieldRule): boolean | undefined => {
    if (rule.explicit) return rule.constantRead;
    return rule.fields ? undefined : false; // embedded rules need the per-field walk
  };
  const plan: Record<string, boolean> = Object.create(null) as Record<string, boolean>;
  for (const [name, rule] of fields ?? []) {
    const value = readable(rule);
    if (value === undefined) return undefined;
    plan[name] = value;
  }
  const others = additional ? readable(additional) : false;
  if (others === undefined) return undefined;
  const exceptions = Object.keys(plan).filter((name) => plan[name] !== others);
  return { fields: plan, others, exceptions: exceptions.length <= EXCEPTION_SCAN_LIMIT ? exceptions : undefined };
}

const NAME_LIMIT = 100;

function expression(source: Expression | undefined, where: string): CompiledExpression | undefined {
  if (source === undefined) return undefined;
  try {
    return compileExpression(source, { kind: 'document' });
  } catch (error) {
    if (error instanceof RulesError) {
      throw new RulesError(RulesErrorCode.InvalidRule, `${where}: ${error.message}`, error.reason, { cause: error });
    }
    throw error;
  }
}

/** Write implies read; undefined when either permission depends on the request or the document. */
function constantReadability(read: CompiledExpression | undefined, write: CompiledExpression | undefined): boolean | undefined {
  const value = (e: CompiledExpression | undefined): boolean | undefined => (e === undefined ? false : e.node.constant?.value);
  const r = value(read);
  const w = value(write);
  if (r === true || w === true) return true;
  if (r === false && w === false) return false;
  return undefined;
}

function fieldRule(source: FieldPermission, where: string): CompiledFieldRule {
  if (typeof source !== 'object' || source === null) {
    throw new RulesError(RulesErrorCode.InvalidRule, `${where}: a field permission is an object with read, write and fields`);
  }
  const read = expression(source.read, `${where}.read`);
  const write = expression(source.write, `${where}.write`);
  const fieldValue = (e: CompiledExpression | undefined) => e !== undefined && (e.info.expansions.has('this') || e.info.expansions.has('prev'));
  return {
    explicit: read !== undefined || write !== undefined,
    labels: { read: `${where}.read`, write: `${where}.write` },
    usesFieldValue: fieldValue(read) || fieldValue(write),
    constantRead: constantReadability(read, write),
    read,
    write,
    fields: source.fields ? fieldRules(source.fields, `${where}.fields`) : undefined,
  };
}

function fieldRules(source: Record<string, FieldPermission>, where: string): ReadonlyMap<string, CompiledFieldRule> {
  const map = new Map<string, CompiledFieldRule>();
  for (const [name, permission] of Object.entries(source)) map.set(name, fieldRule(permission, `${where}.${name}`));
  return map;
}

function anyAsync(rule: CompiledFieldRule | undefined): boolean {
  if (!rule) return false;
  if (rule.read?.async || rule.write?.async) return true;
  if (rule.fields) for (const inner of rule.fields.values()) if (anyAsync(inner)) return true;
  return false;
}

export function compileRole(source: RoleConfig, index: number, where: string): CompiledRole {
  if (typeof source !== 'object' || source === null) throw new RulesError(RulesErrorCode.InvalidRule, `${where}: a role is an object`);
  if (typeof source.name !== 'string' || source.name.length === 0 || source.name.length > NAME_LIMIT) {
    throw new RulesError(RulesErrorCode.InvalidRule, `${where}: a role needs a name of 1 to ${NAME_LIMIT} characters`);
  }
  const label = `roles[${index}](${source.name})`;
  // A role without apply_when applies to everyone, like `apply_when: {}` (see docs/decisions/0010).
  const applyWhen = expression(source.apply_when ?? {}, `${label}.apply_when`) as CompiledExpression;
  const documentFilters = source.document_filters
    ? {
        read: expression(source.document_filters.read, `${label}.document_filters.read`),
        write: expression(source.document_filters.write, `${label}.document_filters.write`),
      }
    : undefined;
  const fields = source.fields ? fieldRules(source.fields, `${label}.fields`) : undefined;
  const additionalFields = source.additional_fields ? fieldRule(source.additional_fields, `${label}.additional_fields`) : undefined;
  const role = {
    name: source.name,
    index,
    source,
    label,
    labels: {
      applyWhen: `${label}.apply_when`,
      documentFiltersRead: `${label}.document_filters.read`,
      documentFiltersWrite: `${label}.document_filters.write`,
      read: `${label}.read`,
      write: `${label}.write`,
      insert: `${label}.insert`,
      delete: `${label}.delete`,
      search: `${label}.search`,
      fields: `${label}.fields`,
    },
    applyWhen,
    applyWhenIsDocumentIndependent: !usesDocument(applyWhen.info),
    documentFilters,
    read: expression(source.read, `${label}.read`),
    write: expression(source.write, `${label}.write`),
    insert: expression(source.insert, `${label}.insert`),
    delete: expression(source.delete, `${label}.delete`),
    search: expression(source.search, `${label}.search`),
    fields,
    additionalFields,
    hasFieldRules: fields !== undefined || additionalFields !== undefined,
    staticFields: fields !== undefined || additionalFields !== undefined ? staticFieldPlan(fields, additionalFields) : undefined,
  };
  const expressions = [role.applyWhen, documentFilters?.read, documentFilters?.write, role.read, role.write, role.insert, role.delete, role.search];
  const async =
    expressions.some((e) => e?.async === true) ||
    anyAsync(additionalFields) ||
    (fields !== undefined && [...fields.values()].some((f) => anyAsync(f)));
  return { ...role, async };
}
