/**
 * From a parsed subscription query to what the server serves: checks it against the table's schema and the
 * sync configuration's queryable fields, refuses what App Services refused in flexible-sync subscriptions
 * (aggregates, links and embedded paths, SORT/DISTINCT/LIMIT, arithmetic, subqueries, @type, full-text,
 * geospatial), and lowers the rest to a Plan: a datastore filter and a document matcher in one.
 */
import { type CompareOp, type ParsedQuery, type PathElement, type Quantifier, type RqlConstant, type RqlExpression, type RqlProperty, type RqlQuery, type RqlScalar } from './ast';
import { type RqlError, RqlErrorCode, tableError } from './errors';
import { type Plan, type RelationalOp, type ValueTest, compilePlan, planToFilter, type DocumentMatcher } from './plan';
import { bracketOf } from './values';

export type RqlFieldType = 'bool' | 'int' | 'double' | 'float' | 'decimal' | 'string' | 'date' | 'objectId' | 'uuid' | 'binary' | 'mixed' | 'object';

export interface RqlField {
  type: RqlFieldType;
  /** A list (or set) of `type`, or a dictionary of `type` values. */
  collection?: 'list' | 'set' | 'dictionary';
}

export interface RqlTable {
  /** The class name the client subscribes with (`Item`, not `class_Item`). */
  name: string;
  fields: Readonly<Record<string, RqlField>>;
}

export interface QueryableFields {
  /** The sync configuration's `queryable_fields_names` (and any per-collection queryable fields). */
  queryable: Iterable<string>;
  /** `indexed_queryable_fields_names`: every query must AND an equality on it with the rest. */
  indexed?: Iterable<string>;
}

export interface TranslatedQuery {
  table: string;
  plan: Plan;
  /** The datastore (MongoDB-style) filter selecting the query's documents. */
  filter: Record<string, unknown>;
  /** The same predicate for one document, for matching writes. */
  matches: DocumentMatcher;
}

const NUMERIC = new Set<RqlFieldType>(['int', 'double', 'float', 'decimal']);
const RELATIONAL: Record<string, RelationalOp> = { '<': '$lt', '<=': '$lte', '>': '$gt', '>=': '$gte' };
const MIRRORED: Partial<Record<CompareOp, CompareOp>> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '==': '==', '!=': '!=', in: 'in' };

type Comparison = {
  op: CompareOp;
  property: RqlProperty;
  constant: RqlConstant;
  caseInsensitive: boolean;
  /** `constant IN property`: the property is the collection searched. */
  constantInProperty: boolean;
};

function pathText(path: PathElement[]): string {
  return path.map((element) => (typeof element === 'object' ? `[${element.index}]` : String(element))).join('.');
}

/** The first element of a key path: always a property name, as the parser builds paths. */
function headName(path: PathElement[]): string {
  return pathText(path.slice(0, 1));
}

function typeName(value: RqlScalar): string {
  switch (bracketOf(value)) {
    case 'null':
      return 'null';
    case 'number':
      return typeof value === 'number' && !Number.isInteger(value) ? 'double' : 'int';
    case 'string':
      return 'string';
    case 'bool':
      return 'bool';
    case 'date':
      return 'timestamp';
    case 'objectId':
      return 'objectId';
    case 'binary':
      return (value as { sub_type: number }).sub_type === 4 ? 'uuid' : 'binary';
    case 'array':
    case 'object':
    case 'other':
      return 'unknown';
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

// `(?![\s\S])` ends a pattern at the very end of the string, in JavaScript and PCRE alike (PCRE's `$` also
// matches before a final newline).
const END = '(?![\\s\\S])';
const ANY_CHAR = '[\\s\\S]';

function likePattern(pattern: string): string {
  return `^${[...pattern].map((c) => (c === '*' ? `${ANY_CHAR}*` : c === '?' ? ANY_CHAR : escapeRegex(c))).join('')}${END}`;
}

class Translator {
  private readonly queryable: ReadonlySet<string>;

  constructor(
    private readonly table: RqlTable,
    queryable: Iterable<string>,
  ) {
    this.queryable = new Set(queryable);
  }

  private unsupported(reason: string): RqlError {
    return tableError(RqlErrorCode.Unsupported, this.table.name, reason);
  }

  private invalid(reason: string): RqlError {
    return tableError(RqlErrorCode.Invalid, this.table.name, reason);
  }

  translate(query: RqlQuery): Plan {
    switch (query.kind) {
      case 'bool':
        return { op: 'const', value: query.value };
      case 'and':
      case 'or': {
        // Long chains are flattened without recursion: `a == 1 && a == 2 && ...` nests one level per operand.
        const of: Plan[] = [];
        const pending: RqlQuery[] = [query];
        while (pending.length > 0) {
          const next = pending.pop()!;
          if (next.kind === query.kind) pending.push(next.right, next.left);
          else of.push(this.translate(next));
        }
        return simplify({ op: query.kind, of });
      }
      case 'not':
        return negate(this.translate(query.query));
      case 'between':
        return this.between(query.value, query.range);
      case 'geowithin':
        throw this.unsupported('geoWithin is not supported in server-side queries');
      case 'compare':
        return this.compare(this.orient(query.op, query.left, query.right, query.caseInsensitive));
    }
  }

  /** Puts the property on the left: `5 < a` is `a > 5`, `'x' IN tags` searches tags. */
  private orient(op: CompareOp, left: RqlExpression, right: RqlExpression, caseInsensitive: boolean): Comparison {
    for (const side of [left, right]) {
      if (side.kind === 'arithmetic') throw this.unsupported('arithmetic is not supported in server-side queries');
      if (side.kind === 'aggregate') throw this.unsupported(`aggregate operator '@${side.op}' is not supported in server-side queries`);
      if (side.kind === 'subquery') throw this.unsupported('SUBQUERY is not supported in server-side queries');
      if (side.kind === 'constant' && side.link) throw this.unsupported('queries on links are not supported in server-side queries');
    }
    if (left.kind === 'property' && right.kind === 'constant') return { op, property: left, constant: right, caseInsensitive, constantInProperty: false };
    if (left.kind === 'constant' && right.kind === 'property') {
      const mirrored = MIRRORED[op];
      if (!mirrored) throw this.unsupported(`'${op}' needs the property on its left`);
      return { op: mirrored, property: right, constant: left, caseInsensitive, constantInProperty: op === 'in' };
    }
    if (left.kind === 'property') throw this.unsupported('comparing two properties is not supported in server-side queries');
    throw this.unsupported('a comparison needs a property');
  }

  /** The field a property names, after the queryable and path checks. */
  private field(property: RqlProperty): { name: string; field: RqlField; rest: PathElement[] } {
    const name = headName(property.path);
    const rest = property.path.slice(1);
    const field = Object.prototype.hasOwnProperty.call(this.table.fields, name) ? this.table.fields[name] : undefined;
    if (!field || !this.queryable.has(name)) throw tableError(RqlErrorCode.NotQueryable, this.table.name, `key "${name}" is not a queryable field`);
    if (rest.length > 0 && field.collection !== 'dictionary') {
      throw this.unsupported(`querying "${pathText(property.path)}": properties of embedded objects, links and list elements are not supported in server-side queries`);
    }
    if (property.postOp === 'type') throw this.unsupported('@type is not supported in server-side queries');
    return { name, field, rest };
  }

  private between(value: RqlExpression, range: RqlConstant): Plan {
    if (value.kind !== 'property') throw this.unsupported('BETWEEN needs a property on its left');
    const { name, field, rest } = this.field(value);
    if (field.collection || rest.length > 0 || value.postOp || value.quantifier) throw this.unsupported(`BETWEEN on "${pathText(value.path)}" is not supported in server-side queries`);
    const list = range.list ?? [];
    if (list.length !== 2) throw this.invalid("Operator 'BETWEEN' requires list with 2 elements.");
    const [low, high] = list as [RqlScalar, RqlScalar];
    this.checkType(name, field, low, '>=');
    this.checkType(name, field, high, '<=');
    return { op: 'and', of: [{ op: 'field', path: name, test: { op: '$gte', value: low } }, { op: 'field', path: name, test: { op: '$lte', value: high } }] };
  }

  private checkType(name: string, field: RqlField, value: RqlScalar, op: CompareOp): void {
    const bracket = bracketOf(value);
    if (bracket === 'null') {
      if (op === '==' || op === '!=' || op === 'in') return;
      throw this.invalid(`null can only be compared with == or != ("${name}" ${op} null)`);
    }
    if (field.type === 'mixed') return;
    const fits =
      NUMERIC.has(field.type) ? bracket === 'number'
      : field.type === 'string' ? bracket === 'string'
      : field.type === 'bool' ? bracket === 'bool'
      : field.type === 'date' ? bracket === 'date'
      : field.type === 'objectId' ? bracket === 'objectId'
      : field.type === 'uuid' ? bracket === 'binary' && typeName(value) === 'uuid'
      : field.type === 'binary' ? bracket === 'binary'
      : false;
    if (!fits) throw this.invalid(`Unsupported comparison between type '${field.type}' and type '${typeName(value)}' on "${name}"`);
  }

  /** The test one value must pass for `value op constant`. */
  private valueTest(name: string, field: RqlField, op: CompareOp, constant: RqlScalar, caseInsensitive: boolean, subMillisecond: boolean): ValueTest {
    this.checkType(name, field, constant, op);
    const stringOp = op === 'beginswith' || op === 'endswith' || op === 'contains' || op === 'like';
    if (op === 'text') throw this.unsupported('full-text search (TEXT) is not supported in server-side queries');
    if (stringOp || (caseInsensitive && (op === '==' || op === '!=' || op === 'in'))) {
      if (typeof constant !== 'string' || (field.type !== 'string' && field.type !== 'mixed')) {
        throw this.invalid(`Unsupported comparison operator '${op}${caseInsensitive ? '[c]' : ''}' for "${name}" of type '${field.type}'`);
      }
      const flags = caseInsensitive ? 'i' : '';
      const literal = escapeRegex(constant);
      const source =
        op === 'beginswith' ? `^${literal}`
        : op === 'endswith' ? `${literal}${END}`
        : op === 'contains' ? literal
        : op === 'like' ? likePattern(constant)
        : `^${literal}${END}`;
      const test: ValueTest = { op: '$regex', source, flags };
      return op === '!=' ? { op: '$not', test } : test;
    }
    if (op === '==' || op === 'in') return dateTest('$eq', constant, subMillisecond);
    if (op === '!=') return dateTest('$ne', constant, subMillisecond);
    return dateTest(RELATIONAL[op], constant, subMillisecond);
  }

  private compare(comparison: Comparison): Plan {
    const { property, constant, caseInsensitive } = comparison;
    let { op } = comparison;
    const { name, field, rest } = this.field(property);
    if (property.postOp === 'size') return this.size(name, field, property, op, constant);

    if (field.collection === 'dictionary') return this.dictionary(name, field, rest, property, comparison);

    const values = constant.list ?? [constant.value];
    const listQuantifier: Quantifier = constant.list ? (constant.quantifier ?? 'any') : 'any';
    const sub = constant.subMillisecond ?? false;
    if (field.collection) {
      // A list or set: the quantifier on the property (ANY by default) says how many elements must pass.
      if (constant.list && (constant.quantifier ?? 'any') !== 'any') throw this.unsupported('comparing a list with a quantified list literal is not supported in server-side queries');
      if (comparison.constantInProperty) op = '==';
      const quantifier = property.quantifier ?? 'any';
      const test: ValueTest =
        values.length === 1 ? this.valueTest(name, field, op, values[0], caseInsensitive, sub)
        : this.listTest(name, field, op, values, caseInsensitive);
      return { op: 'elements', path: name, quantifier, test };
    }
    if (property.quantifier) throw this.unsupported(`"${name}" is not a list: ${property.quantifier.toUpperCase()} needs a list property`);
    if (constant.list && values.length === 0) return { op: 'const', value: listQuantifier !== 'any' };
    if (op === 'in' && !constant.list && !comparison.constantInProperty) op = '==';
    if (constant.list && listQuantifier === 'any' && (op === '==' || op === 'in') && !caseInsensitive && !values.some((value) => bracketOf(value) === 'date' && sub)) {
      for (const value of values) this.checkType(name, field, value, op);
      return values.length === 1 ? { op: 'field', path: name, test: { op: '$eq', value: values[0]! } } : { op: 'field', path: name, test: { op: '$in', values } };
    }
    const parts: Plan[] = values.map((value) => ({ op: 'field', path: name, test: this.valueTest(name, field, op, value, caseInsensitive, sub) }));
    if (parts.length === 1) return parts[0];
    if (listQuantifier === 'all') return { op: 'and', of: parts };
    const any: Plan = { op: 'or', of: parts };
    return listQuantifier === 'none' ? negate(any) : any;
  }

  /** One element's test against any of several constants. */
  private listTest(name: string, field: RqlField, op: CompareOp, values: RqlScalar[], caseInsensitive: boolean): ValueTest {
    if ((op === '==' || op === 'in') && !caseInsensitive) {
      for (const value of values) this.checkType(name, field, value, op);
      return { op: '$in', values };
    }
    throw this.unsupported(`'${op}' between the elements of "${name}" and a list literal is not supported in server-side queries`);
  }

  private size(name: string, field: RqlField, property: RqlProperty, op: CompareOp, constant: RqlConstant): Plan {
    if (field.collection !== 'list' && field.collection !== 'set') throw this.unsupported(`@count and @size are supported on lists only, not on "${name}"`);
    if (property.quantifier || constant.list) throw this.unsupported('@size compares with one number');
    const count = constant.value;
    if (bracketOf(count) !== 'number') throw this.invalid(`Unsupported comparison between @size of "${name}" and type '${typeName(count)}'`);
    const compare = op === '==' || op === 'in' ? '$eq' : op === '!=' ? '$ne' : RELATIONAL[op];
    if (!compare) throw this.invalid(`Unsupported comparison operator '${op}' for @size`);
    return { op: 'size', path: name, compare, count: Number(count) };
  }

  private dictionary(name: string, field: RqlField, rest: PathElement[], property: RqlProperty, comparison: Comparison): Plan {
    const { constant } = comparison;
    let { op } = comparison;
    const values = constant.list ?? [constant.value];
    if (constant.list && (constant.quantifier ?? 'any') !== 'any') throw this.unsupported('comparing a dictionary with a quantified list literal is not supported');
    if (comparison.constantInProperty) op = '==';
    const quantifier = property.quantifier ?? 'any';
    const [selector, ...beyond] = rest;
    if (beyond.length > 0) throw this.unsupported(`querying "${pathText(property.path)}" is not supported in server-side queries`);
    if (selector === '@keys') {
      if ((op !== '==' && op !== 'in') || comparison.caseInsensitive || quantifier === 'all') throw this.unsupported('@keys supports == and IN only in server-side queries');
      const plans: Plan[] = values.map((key) => {
        if (typeof key !== 'string' || key === '' || key.startsWith('$') || key.includes('.')) throw this.invalid(`a dictionary key is a string without '.' and not starting with '$'`);
        return { op: 'hasKey', path: name, key };
      });
      const any = simplify({ op: 'or', of: plans });
      return quantifier === 'none' ? negate(any) : any;
    }
    if (selector === undefined || selector === '@values') {
      if ((op !== '==' && op !== 'in') || comparison.caseInsensitive || quantifier === 'all') throw this.unsupported('dictionary values support == and IN only in server-side queries');
      for (const value of values) this.checkType(name, field, value, op);
      const any: Plan = values.length === 0 ? { op: 'const', value: false } : { op: 'dictionaryValue', path: name, values };
      return quantifier === 'none' ? negate(any) : any;
    }
    if (typeof selector !== 'string' || selector.startsWith('$') || selector.startsWith('@') || selector === '') {
      throw this.unsupported(`querying "${pathText(property.path)}" is not supported in server-side queries`);
    }
    // dict.key / dict['key']: the entry is a scalar field at a dotted path.
    if (property.quantifier) throw this.unsupported(`${property.quantifier.toUpperCase()} on one dictionary entry is not supported`);
    const entry: RqlProperty = { kind: 'property', path: [name] };
    const scalar: RqlField = { type: field.type };
    const path = `${name}.${selector}`;
    const plan = new Translator({ name: this.table.name, fields: { [path]: scalar } }, [path]).compare({ ...comparison, property: { ...entry, path: [path] } });
    return plan;
  }
}

/** A date constant that fell between two milliseconds, against stored dates that have whole milliseconds. */
function dateTest(op: '$eq' | '$ne' | RelationalOp, value: RqlScalar, subMillisecond: boolean): ValueTest {
  if (!subMillisecond || !(value instanceof Date)) return { op, value };
  // value is the millisecond below the constant: x > c and x >= c both mean x > value; x < c and x <= c mean x <= value.
  switch (op) {
    case '$eq':
      return { op: '$in', values: [] };
    case '$ne':
      return { op: '$nin', values: [] };
    case '$gt':
    case '$gte':
      return { op: '$gt', value };
    case '$lt':
    case '$lte':
      return { op: '$lte', value };
  }
}

function negate(plan: Plan): Plan {
  if (plan.op === 'const') return { op: 'const', value: !plan.value };
  if (plan.op === 'not') return plan.of;
  return { op: 'not', of: plan };
}

/** Folds constants out of AND/OR and hoists nested AND/OR of the same kind. */
function simplify(plan: Plan & { op: 'and' | 'or' }): Plan {
  const absorbing = plan.op === 'or';
  const of: Plan[] = [];
  for (const part of plan.of) {
    if (part.op === 'const') {
      if (part.value === absorbing) return part;
      continue;
    }
    if (part.op === plan.op) of.push(...part.of);
    else of.push(part);
  }
  if (of.length === 0) return { op: 'const', value: !absorbing };
  return of.length === 1 ? of[0] : { op: plan.op, of };
}

/** Indexed queryable fields: every query must AND an == or IN on one of them with the rest (App Services' rule). */
function checkIndexedField(table: string, query: RqlQuery, indexed: ReadonlySet<string>): void {
  if (indexed.size === 0) return;
  const conjuncts: RqlQuery[] = [];
  const pending: RqlQuery[] = [query];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (next.kind === 'and') pending.push(next.left, next.right);
    else conjuncts.push(next);
  }
  const satisfied = conjuncts.some((part) => {
    if (part.kind !== 'compare' || (part.op !== '==' && part.op !== 'in') || part.caseInsensitive) return false;
    const sides = [part.left, part.right];
    const property = sides.find((side): side is RqlProperty => side.kind === 'property');
    const constant = sides.find((side): side is RqlConstant => side.kind === 'constant');
    return !!property && !!constant && property.path.length === 1 && !property.postOp && !property.quantifier && indexed.has(headName(property.path));
  });
  if (!satisfied) {
    const names = [...indexed].map((name) => `"${name}"`).join(', ');
    throw tableError(RqlErrorCode.Unsupported, table, `the query must compare the indexed queryable field ${names} with == or IN against a constant, ANDed with the rest of the query`);
  }
}

/**
 * Checks a parsed subscription query against a table and the queryable fields and lowers it to what the
 * server runs. Throws RqlError (QUERY_ERROR 226) for anything the server does not serve.
 */
export function translateQuery(parsed: ParsedQuery, table: RqlTable, fields: QueryableFields): TranslatedQuery {
  const [descriptor] = parsed.descriptors;
  if (descriptor) throw tableError(RqlErrorCode.Unsupported, table.name, `${descriptor.kind.toUpperCase()} is not supported in flexible sync subscriptions`);
  checkIndexedField(table.name, parsed.query, new Set(fields.indexed ?? []));
  const plan = new Translator(table, fields.queryable).translate(parsed.query);
  return { table: table.name, plan, filter: planToFilter(plan), matches: compilePlan(plan) };
}
