/**
 * Query pushdown: turns what the roles require of a readable document into a MongoDB query the store can
 * use, so a find as a user does not fetch documents that no role could show. The translation is
 * conservative: the query always matches a superset of the readable documents (anything it cannot
 * express exactly becomes "no constraint"), and the per-document check still runs on every result.
 * See docs/decisions/0012-rules-query-pushdown.md.
 */
import { type CompiledExpression, compileExpression, compileValue, DOCUMENT_EXPANSIONS, type ExpansionRoot, usesDocument } from '../expressions/compile';
import { type EvaluationContext } from '../expressions/context';
import { isPlainObject } from '../expressions/values';
import { type CompiledRole } from '../roles/compiled-role';
import { type MongoQuery } from './filters';

/** `true`: no constraint; `false`: matches nothing; otherwise a MongoDB query. */
export type Condition = true | false | MongoQuery;

export interface Translation {
  condition: Condition;
  /** The condition is exactly the rule (not a superset of it). */
  exact: boolean;
}

const ANY: Translation = { condition: true, exact: false };
const exactly = (condition: Condition): Translation => ({ condition, exact: true });

function and(parts: readonly Translation[]): Translation {
  const queries: MongoQuery[] = [];
  let exact = true;
  for (const part of parts) {
    if (part.condition === false) return part;
    exact &&= part.exact;
    if (part.condition !== true) queries.push(part.condition);
  }
  if (queries.length === 0) return { condition: true, exact };
  return { condition: queries.length === 1 ? queries[0] : { $and: queries }, exact };
}

function or(parts: readonly Translation[]): Translation {
  const queries: MongoQuery[] = [];
  let exact = true;
  for (const part of parts) {
    if (part.condition === true) return part.exact ? part : ANY;
    exact &&= part.exact;
    if (part.condition !== false) queries.push(part.condition);
  }
  if (queries.length === 0) return { condition: false, exact };
  return { condition: queries.length === 1 ? queries[0] : { $or: queries }, exact };
}

function not(part: Translation): Translation {
  if (!part.exact) return ANY;
  if (part.condition === true) return exactly(false);
  if (part.condition === false) return exactly(true);
  return exactly({ $nor: [part.condition] });
}

function operatorName(key: string): string | undefined {
  if (key.startsWith('$')) return key.slice(1);
  if (key.startsWith('%') && !key.startsWith('%%')) return key.slice(1);
  return undefined;
}

type CompiledValue = ReturnType<typeof compileValue>;

// Translation runs once per request; compiling the same rule fragments again each time would cost more
// than the translation itself. Rule sources are long-lived objects, so memoize on their identity.
const stringValues = new Map<string, CompiledValue>();
const objectValues = new WeakMap<object, CompiledValue>();
const keyExpressions = new WeakMap<object, Map<string, CompiledExpression>>();
const conversions = new WeakMap<object, Map<string, CompiledValue>>();

function memoValue(source: unknown): CompiledValue {
  if (typeof source === 'string') {
    let found = stringValues.get(source);
    if (!found) stringValues.set(source, (found = compileValue(source, { kind: 'document' })));
    return found;
  }
  if (typeof source === 'object' && source !== null) {
    let found = objectValues.get(source);
    if (!found) objectValues.set(source, (found = compileValue(source, { kind: 'document' })));
    return found;
  }
  return compileValue(source, { kind: 'document' });
}

function memoIn<T>(memo: WeakMap<object, Map<string, T>>, parent: object, key: string, build: () => T): T {
  let byKey = memo.get(parent);
  if (!byKey) {
    byKey = new Map<string, T>();
    memo.set(parent, byKey);
  }
  let found = byKey.get(key);
  if (found === undefined) byKey.set(key, (found = build()));
  return found;
}

/** A value the user side can compute now: no document, no `%function`. */
function knownValue(source: unknown, ctx: EvaluationContext, compiled: CompiledValue = memoValue(source)): { ok: true; value: unknown } | { ok: false } {
  const { node, info } = compiled;
  if (info.usesFunction || usesDocument(info) || node.async) return { ok: false };
  return { ok: true, value: node.run(ctx) };
}

/** `{field: value}` as rule equality means it (array contains, scalar in array). */
function equality(field: string, value: unknown): Translation {
  // A missing value equals nothing (see ruleEquals).
  if (value === undefined) return exactly(false);
  // MongoDB's null also matches missing fields: a superset of the rule.
  if (value === null) return { condition: { [field]: null }, exact: false };
  if (Array.isArray(value)) return { condition: { [field]: { $in: [...(value as unknown[]), value] } }, exact: false };
  // Embedded documents compare key-order-sensitively in MongoDB, but not in rules: do not push them.
  if (isPlainObject(value)) return ANY;
  return exactly({ [field]: value });
}

function documentPath(key: string): string | undefined {
  if (!key.startsWith('%%')) return key;
  const [root, ...rest] = key.slice(2).split('.');
  // During a read, %%prevRoot is the stored document too.
  if ((root === 'root' || root === 'prevRoot') && rest.length > 0) return rest.join('.');
  return undefined;
}

class Translator {
  constructor(private readonly ctx: EvaluationContext) {}

  expression(source: unknown): Translation {
    if (source === true) return exactly(true);
    if (source === false) return exactly(false);
    if (!isPlainObject(source)) return ANY;
    return and(Object.keys(source).map((key) => this.key(source, key, source[key])));
  }

  private key(parent: Record<string, unknown>, key: string, value: unknown): Translation {
    const op = operatorName(key);
    if (op !== undefined) {
      switch (op) {
        case 'and':
          return Array.isArray(value) ? and(value.map((v) => this.expression(v))) : ANY;
        case 'or':
          return Array.isArray(value) ? or(value.map((v) => this.expression(v))) : ANY;
        case 'nor':
          return Array.isArray(value) ? not(or(value.map((v) => this.expression(v)))) : ANY;
        case 'not':
          return not(Array.isArray(value) ? and(value.map((v) => this.expression(v))) : this.expression(value));
        default:
          return ANY;
      }
    }
    const path = documentPath(key);
    if (path !== undefined) return this.matcher(path, value);
    const root = key.slice(2).split('.')[0] as ExpansionRoot;
    if (DOCUMENT_EXPANSIONS.has(root)) return ANY; // %%root alone, %%this, %%prev
    if ((key === '%%true' || key === '%%false') && isPlainObject(value) && !Object.keys(value).some((k) => operatorName(k) !== undefined)) {
      const nested = this.expression(value);
      return key === '%%true' ? nested : not(nested);
    }
    // A user-known left side: evaluate the key now when the value is user-known too.
    const whole = memoIn(keyExpressions, parent, key, () => compileExpression({ [key]: value }, { kind: 'document' }));
    if (!usesDocument(whole.info) && !whole.async) return exactly(whole.evaluateSync(this.ctx));
    // `{"%%user.id": "%%root.owner"}`: equality is symmetric.
    if (typeof value === 'string') {
      const field = value.startsWith('%%') ? documentPath(value) : undefined;
      const left = knownValue(key, this.ctx);
      if (field !== undefined && field !== value && left.ok) return equality(field, left.value);
    }
    return ANY;
  }

  private matcher(field: string, spec: unknown): Translation {
    if (isPlainObject(spec)) {
      const keys = Object.keys(spec);
      const ops = keys.map(operatorName);
      if (keys.length === 0 || ops.some((o) => o === undefined)) return ANY;
      return and(keys.map((key, i) => this.operator(spec, field, ops[i] as string, spec[key])));
    }
    const known = knownValue(spec, this.ctx);
    return known.ok ? equality(field, known.value) : ANY;
  }

  private operator(parent: Record<string, unknown>, field: string, op: string, operand: unknown): Translation {
    switch (op) {
      case 'and':
        return Array.isArray(operand) ? and(operand.map((o) => this.matcher(field, o))) : ANY;
      case 'or':
        return Array.isArray(operand) ? or(operand.map((o) => this.matcher(field, o))) : ANY;
      case 'not':
        return not(this.matcher(field, operand));
      case 'nor':
        return Array.isArray(operand) ? not(or(operand.map((o) => this.matcher(field, o)))) : ANY;
      case 'stringToOid':
      case 'oidToString':
      case 'stringToUuid':
      case 'uuidToString': {
        const compiled = memoIn(conversions, parent, op, () => compileValue({ [`%${op}`]: operand }, { kind: 'document' }));
        const known = knownValue(undefined, this.ctx, compiled);
        return known.ok ? equality(field, known.value) : ANY;
      }
      default:
        break;
    }
    const known = knownValue(operand, this.ctx);
    if (!known.ok) return ANY;
    const value = known.value;
    switch (op) {
      case 'eq':
        return equality(field, value);
      case 'ne':
        if (value === undefined) return exactly(true);
        if (value === null || Array.isArray(value) || isPlainObject(value)) return ANY;
        return exactly({ [field]: { $ne: value } });
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        if (value === undefined || value === null || Array.isArray(value) || isPlainObject(value)) return ANY;
        return exactly({ [field]: { [`$${op}`]: value } });
      case 'in':
        if (!Array.isArray(value)) return exactly(false);
        return { condition: { [field]: { $in: value } }, exact: !value.some((v) => v === null) };
      case 'nin':
        if (!Array.isArray(value)) return exactly(false);
        if (value.some((v) => v === null)) return ANY;
        return exactly({ [field]: { $nin: value } });
      case 'exists': {
        const present = value !== undefined && value !== null && value !== false && value !== 0;
        return exactly({ [field]: { $exists: present } });
      }
      default:
        return ANY;
    }
  }
}

export function translateExpression(source: unknown, ctx: EvaluationContext): Translation {
  return new Translator(ctx).expression(source);
}

/**
 * What a document must satisfy to be readable under some role: for each role, apply_when AND the
 * document filters (read, or write since write implies read) AND (read OR write, or field rules when
 * read is undefined).
 * The ORed result ignores "first match wins" and so matches a superset of the readable documents.
 */
export function readableCondition(roles: readonly CompiledRole[], ctx: EvaluationContext): Translation {
  const alternatives: Translation[] = [];
  // Per alternative: whether its role, once it applies, reads every document (filters and level exactly true).
  const readsAll: boolean[] = [];
  // A role that may apply but never reads hides the documents it is chosen for: still a superset, not exact.
  let shadows = false;
  const translate = (expression: { source: unknown } | undefined, fallback: Translation): Translation =>
    expression ? translateExpression(expression.source, ctx) : fallback;
  for (const role of roles) {
    const applies = translate(role.applyWhen, exactly(true));
    const filters = role.documentFilters;
    const documentFilters =
      filters?.read !== undefined ? or([translate(filters.read, exactly(false)), translate(filters.write, exactly(false))]) : exactly(true);
    // A defined `read` is true or false for every document: false hides it unless write holds, whatever
    // the field rules; only an undefined `read` lets field rules show (part of) the document.
    const level =
      role.read === undefined && role.hasFieldRules
        ? exactly(true)
        : or([translate(role.read, exactly(false)), translate(role.write, exactly(false))]);
    const alternative = and([applies, documentFilters, level]);
    const reads = and([documentFilters, level]);
    alternatives.push(alternative);
    readsAll.push(reads.condition === true && reads.exact);
    if (alternative.condition === false && !(applies.condition === false && applies.exact)) shadows = true;
    // A role that applies to every document of this user shadows the roles after it.
    if (applies.condition === true && applies.exact) break;
  }
  const result = or(alternatives);
  // Several alternatives ignore the order of roles, which matters only when a role chosen first may hide a
  // document a later role would show. So the OR is exact when every live alternative but the last reads
  // whatever it applies to: the first role that applies then shows the document, as a later one would.
  const live = alternatives.flatMap((alternative, i) => (alternative.condition === false ? [] : [i]));
  const orderFree = live.slice(0, -1).every((i) => readsAll[i]);
  return !orderFree || shadows ? { condition: result.condition, exact: false } : result;
}
