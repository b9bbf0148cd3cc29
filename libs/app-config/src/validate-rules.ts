// The gate's half of the rules engine: every rule expression of a rule file (roles, filters, Sync
// permissions) is compiled here exactly as the data path will compile it, so a rule that could never be
// evaluated is refused at push naming its file, JSON path and rule, instead of deploying and failing every
// request on its namespace with InvalidRule. It also refuses members a role or filter does not have (a
// misspelt `raed` silently grants nothing). It must not be stricter than App Services: every member App
// Services wrote in any export generation stays accepted.

import { compileExpression, compileRules, compileValue, isRulesError, type ExpressionKind } from '@tessera/rules';
import { isPlainObject, jsonPath, type JsonObject } from './json';

export interface RuleFinding {
  /** JSON path inside the rule file. */
  path: string;
  rule: string;
  message: string;
}

/**
 * Members of a role in every rules generation (rules v1 of the legacy and 20210101 exports, rules v2 of
 * the current ones). `id`/`_id` appear in documents the admin API returns and are harmless.
 */
const ROLE_MEMBERS = ['name', 'apply_when', 'document_filters', 'read', 'write', 'insert', 'delete', 'search', 'fields', 'additional_fields', 'id', '_id'];
const FILTER_MEMBERS = ['name', 'apply_when', 'query', 'projection', 'id', '_id'];
const FIELD_MEMBERS = ['read', 'write', 'fields'];
const READ_WRITE_MEMBERS = ['read', 'write'];

/** Compiles one expression; a finding names the innermost key at fault (`roles[0].read.owner`). */
export function expressionFinding(source: unknown, path: string, kind: ExpressionKind, asValue = false): RuleFinding | undefined {
  try {
    if (asValue) compileValue(source, { kind });
    else compileExpression(source, { kind });
    return undefined;
  } catch (error) {
    if (!isRulesError(error)) throw error;
    // The compiler names the spot as `expression.<keys>` (or `value.<keys>`): put it under `path`.
    const match = /^(?:expression|value)((?:\.[^:]*)?): (.*)$/s.exec(error.message);
    const inner = match ? match[1] : '';
    const detail = match ? match[2] : error.message;
    return { path: `${path}${inner}`, rule: 'rule.expression.invalid', message: `${detail} (the expression at ${path} does not compile)` };
  }
}

function unknownMembers(object: JsonObject, allowed: readonly string[], base: string, what: string, rule: string, out: RuleFinding[]): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) out.push({ path: jsonPath(base, key), rule, message: `"${key}" is not a member of a ${what} (${allowed.filter((k) => k !== 'id' && k !== '_id').join(', ')})` });
  }
}

function readWrite(object: unknown, base: string, what: string, out: RuleFinding[]): void {
  if (!isPlainObject(object)) return;
  unknownMembers(object, READ_WRITE_MEMBERS, base, what, 'role.field.unknown', out);
  for (const key of READ_WRITE_MEMBERS) {
    if (object[key] === undefined) continue;
    const finding = expressionFinding(object[key], `${base}.${key}`, 'document');
    if (finding) out.push(finding);
  }
}

function fieldPermissions(fields: unknown, base: string, out: RuleFinding[]): void {
  if (!isPlainObject(fields)) return;
  for (const [name, permission] of Object.entries(fields)) {
    const path = jsonPath(base, name);
    if (!isPlainObject(permission)) continue; // the shape check reports it
    unknownMembers(permission, FIELD_MEMBERS, path, 'field permission', 'role.field.unknown', out);
    for (const key of READ_WRITE_MEMBERS) {
      if (permission[key] === undefined) continue;
      const finding = expressionFinding(permission[key], `${path}.${key}`, 'document');
      if (finding) out.push(finding);
    }
    fieldPermissions(permission.fields, `${path}.fields`, out);
  }
}

/**
 * Everything the rules engine would refuse in the roles and filters of one rule file (a collection's
 * rules or a data source's default rule). Shapes (a role that is not an object, a missing name) are the
 * validator's; this adds the members and the expressions.
 */
export function checkRuleSet(rule: JsonObject): RuleFinding[] {
  const out: RuleFinding[] = [];
  if (Array.isArray(rule.roles)) {
    rule.roles.forEach((role, i) => {
      if (!isPlainObject(role)) return;
      const base = `roles[${i}]`;
      unknownMembers(role, ROLE_MEMBERS, base, 'role', 'role.field.unknown', out);
      for (const key of ['apply_when', 'read', 'write', 'insert', 'delete', 'search']) {
        if (role[key] === undefined) continue;
        const finding = expressionFinding(role[key], `${base}.${key}`, 'document');
        if (finding) out.push(finding);
      }
      readWrite(role.document_filters, `${base}.document_filters`, 'document_filters', out);
      readWrite(role.additional_fields, `${base}.additional_fields`, 'additional_fields', out);
      fieldPermissions(role.fields, `${base}.fields`, out);
    });
  }
  if (Array.isArray(rule.filters)) {
    rule.filters.forEach((filter, i) => {
      if (!isPlainObject(filter)) return;
      const base = `filters[${i}]`;
      unknownMembers(filter, FILTER_MEMBERS, base, 'filter', 'filter.field.unknown', out);
      if (filter.apply_when !== undefined) {
        const finding = expressionFinding(filter.apply_when, `${base}.apply_when`, 'filter');
        if (finding) out.push(finding);
      }
      if (isPlainObject(filter.query)) {
        const finding = expressionFinding(filter.query, `${base}.query`, 'filter', true);
        if (finding) out.push(finding);
      }
    });
  }
  return out;
}

/**
 * The last word: the rules engine compiles the rule set as the data path will. Anything it refuses that
 * the checks above did not name is reported against the whole file, so nothing deploys that cannot run.
 */
export function compileFinding(rule: JsonObject, isDefault: boolean): RuleFinding | undefined {
  try {
    if (isDefault) compileRules(undefined, rule);
    else compileRules(rule, undefined);
    return undefined;
  } catch (error) {
    if (!isRulesError(error)) throw error;
    return { path: '', rule: 'rule.compile', message: `the rules engine cannot use these rules: ${error.message}` };
  }
}
