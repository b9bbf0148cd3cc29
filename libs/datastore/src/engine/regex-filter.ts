/**
 * Regex conditions of a query filter, made explicit before mingo sees the filter. mingo knows only
 * JavaScript RegExp literals: it compares a BSON regex (what EJSON, the wire protocol and functions hand
 * over) as a plain object, builds `$regex` with `new RegExp(pattern, $options)` (no `x`, no PCRE), never
 * matches a regex inside `$in`, and treats a stored regex as no match. So every regex spelling
 * (`{f: /x/}`, `{f: {$regex: /x/}}`, `{$regex: "x", $options: "i"}`, in `$in`, `$nin`, `$not`, `$all`,
 * `$elemMatch`) is compiled here into a RegexCondition under an internal operator that this engine
 * registers with mingo, and the errors MongoDB gives for malformed ones are raised here.
 */
import { DatastoreError } from '../api/datastore.error';
import { RegexCondition, compileRegexValue, isRegexValue } from '../bson/regex';
import { type Document, collectPathValues, isPlainObject } from '../bson/values';
import { typeOperator } from './type-operator';

/** The internal operators the prepared filter uses (an object that is not a RegexCondition is refused). */
export const REGEX_MATCH = '$_regexMatch';
export const REGEX_EQUAL = '$_regexEqual';

function badValue(message: string): DatastoreError {
  return new DatastoreError('BadValue', message);
}

function setField(target: Document, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The filter with its regex conditions compiled; the same object when it has none. */
export function prepareFilter(filter: Document): Document {
  let out: Document | undefined;
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    let next = value;
    if (key === '$and' || key === '$or' || key === '$nor') {
      if (Array.isArray(value)) {
        const mapped = value.map((branch: unknown) => (isPlainObject(branch) ? prepareFilter(branch) : branch));
        if (mapped.some((branch, i) => branch !== value[i])) next = mapped;
      }
    } else if (!key.startsWith('$')) {
      next = prepareCondition(value);
    }
    if (next !== value) {
      out ??= { ...filter };
      setField(out, key, next);
    }
  }
  return out ?? filter;
}

/** A field's condition with its regexes compiled; the same value when it has none. */
function prepareCondition(condition: unknown): unknown {
  if (isRegexValue(condition)) return { [REGEX_MATCH]: compileRegexValue(condition, undefined) };
  if (!isPlainObject(condition)) return condition;
  const keys = Object.keys(condition);
  // A document whose first key is not an operator is an embedded document to compare for equality.
  if (keys.length === 0 || !keys[0].startsWith('$')) return condition;
  const hasRegex = Object.prototype.hasOwnProperty.call(condition, '$regex');
  const hasOptions = Object.prototype.hasOwnProperty.call(condition, '$options');
  if (hasOptions && !hasRegex) throw badValue('$options needs a $regex');
  let changed = false;
  const out: Document = {};
  for (const op of keys) {
    const arg = condition[op];
    switch (op) {
      case '$regex': {
        const options = condition.$options;
        if (options !== undefined && typeof options !== 'string') throw badValue('$options has to be a string');
        if (typeof arg !== 'string' && !isRegexValue(arg)) throw badValue('$regex has to be a string');
        setField(out, REGEX_MATCH, compileRegexValue(arg, options));
        changed = true;
        continue;
      }
      case '$options':
        changed = true;
        continue;
      case '$eq':
        if (isRegexValue(arg)) {
          setField(out, REGEX_EQUAL, compileRegexValue(arg, undefined, true));
          changed = true;
          continue;
        }
        break;
      case '$ne':
        if (isRegexValue(arg)) throw badValue("Can't have regex as arg to $ne");
        break;
      case '$in':
      case '$nin':
        if (Array.isArray(arg) && arg.some(isRegexValue)) {
          setField(out, op, arg.map((item: unknown) => (isRegexValue(item) ? compileRegexValue(item, undefined) : item)));
          changed = true;
          continue;
        }
        break;
      case '$all':
        // mingo tests a RegExp member of $all against strings: give it the translated pattern.
        if (Array.isArray(arg) && arg.some(isRegexValue)) {
          setField(out, op, arg.map((item: unknown) => (isRegexValue(item) ? compileRegexValue(item, undefined).regex : item)));
          changed = true;
          continue;
        }
        break;
      case '$not':
        if (isRegexValue(arg) || isPlainObject(arg)) {
          const inner = prepareCondition(arg);
          if (inner !== arg) {
            setField(out, op, inner);
            changed = true;
            continue;
          }
        }
        break;
      case '$elemMatch':
        if (isPlainObject(arg)) {
          const operators = Object.keys(arg).every((k) => k.startsWith('$') && k !== '$and' && k !== '$or' && k !== '$nor');
          const inner = operators ? prepareCondition(arg) : prepareFilter(arg);
          if (inner !== arg) {
            setField(out, op, inner);
            changed = true;
            continue;
          }
        }
        break;
      default:
        break;
    }
    setField(out, op, arg);
  }
  return changed ? out : condition;
}

/** Values a query tests at a dotted path: each value reached and the elements of a reached array. */
function valuesAt(doc: unknown, path: string): unknown[] {
  const out: unknown[] = [];
  for (const v of collectPathValues(doc, path.split('.'))) {
    if (Array.isArray(v)) out.push(...(v as unknown[]));
    else out.push(v);
  }
  return out;
}

function asCondition(value: unknown, name: string): RegexCondition {
  if (!(value instanceof RegexCondition)) throw badValue(`unknown operator: ${name}`);
  return value;
}

type Predicate = (doc: unknown) => boolean;
type QueryOperator = (selector: string, value: unknown, options: unknown) => Predicate;

function regexOperator(name: string): QueryOperator {
  return (selector, value) => {
    const condition = asCondition(value, name);
    return (doc) => valuesAt(doc, selector).some((v) => condition.matches(v));
  };
}

function isCondition(value: unknown): value is RegexCondition {
  return value instanceof RegexCondition;
}

/**
 * The query operators to register with mingo: the two internal ones, and `$in`/`$nin` that test their
 * compiled regex members by regex and leave the other members to mingo's own operator.
 */
export function regexQueryOperators(builtinIn: QueryOperator): Record<string, QueryOperator> {
  const $in: QueryOperator = (selector, value, options) => {
    if (!Array.isArray(value) || !value.some(isCondition)) return builtinIn(selector, value, options);
    const regexes = value.filter(isCondition);
    const rest = value.filter((item) => !isCondition(item));
    const base = rest.length > 0 ? builtinIn(selector, rest, options) : () => false;
    return (doc) => base(doc) || valuesAt(doc, selector).some((v) => regexes.some((r) => r.matches(v)));
  };
  return {
    [REGEX_MATCH]: regexOperator(REGEX_MATCH),
    [REGEX_EQUAL]: regexOperator(REGEX_EQUAL),
    $in,
    $nin: (selector, value, options) => {
      const test = $in(selector, value, options);
      return (doc) => !test(doc);
    },
    // mingo's $type knows only RegExp as the regex type, and sees numbers as its promoted copies hold them.
    $type: (selector, value) => typeOperator(selector, value),
  };
}

type ExpressionOperator = (obj: unknown, expr: unknown, options: unknown) => unknown;

/**
 * `$regexMatch`, `$regexFind` and `$regexFindAll` with a literal regex (a BSON regex, as the wire protocol
 * and EJSON deliver it, or a literal pattern with literal options): compiled from MongoDB's dialect first,
 * then left to mingo. Computed patterns go to mingo as they are.
 */
export function regexExpressionOperators(builtins: Record<'$regexMatch' | '$regexFind' | '$regexFindAll', ExpressionOperator>): Record<string, ExpressionOperator> {
  const wrap =
    (builtin: ExpressionOperator): ExpressionOperator =>
    (obj, expr, options) => {
      if (!isPlainObject(expr)) return builtin(obj, expr, options);
      const { regex, options: flags } = expr;
      const literalFlags = flags === undefined || typeof flags === 'string';
      if (literalFlags && (isRegexValue(regex) || typeof regex === 'string')) {
        const compiled = compileRegexValue(regex, flags).regex;
        const rest: Document = { ...expr, regex: compiled };
        delete rest.options;
        return builtin(obj, rest, options);
      }
      return builtin(obj, expr, options);
    };
  return { $regexMatch: wrap(builtins.$regexMatch), $regexFind: wrap(builtins.$regexFind), $regexFindAll: wrap(builtins.$regexFindAll) };
}
