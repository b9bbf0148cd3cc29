/**
 * The normalized form of a served subscription query: a small predicate over document fields with MongoDB's
 * query semantics. Both the datastore filter (`planToFilter`) and the in-process document matcher
 * (`compilePlan`) are built from it, so what a session is sent and what a write is matched against are one
 * definition. The shapes are the few the translator emits, nothing more.
 */
import { type RqlScalar, type Quantifier } from './ast';
import { compareSameType, equalityKey, isPlainDocument, valuesEqual } from './values';

export type RelationalOp = '$gt' | '$gte' | '$lt' | '$lte';

export type ValueTest =
  | { op: '$eq' | '$ne' | RelationalOp; value: RqlScalar }
  | { op: '$in' | '$nin'; values: RqlScalar[] }
  | { op: '$regex'; source: string; flags: '' | 'i' }
  | { op: '$not'; test: ValueTest };

export type Plan =
  | { op: 'const'; value: boolean }
  | { op: 'and' | 'or'; of: Plan[] }
  | { op: 'not'; of: Plan }
  /** A scalar field (or a dictionary entry `dict.key`). */
  | { op: 'field'; path: string; test: ValueTest }
  /** Elements of a list field. */
  | { op: 'elements'; path: string; quantifier: Quantifier; test: ValueTest }
  /** The length of a list field (a missing list has none). */
  | { op: 'size'; path: string; compare: '$eq' | '$ne' | RelationalOp; count: number }
  | { op: 'hasKey'; path: string; key: string }
  /** Some value of a dictionary is one of `values`. */
  | { op: 'dictionaryValue'; path: string; values: RqlScalar[] };

type Document = Record<string, unknown>;

function testToFilter(test: ValueTest): Document {
  switch (test.op) {
    case '$in':
    case '$nin':
      return { [test.op]: test.values };
    case '$regex':
      return { $regex: test.source, $options: test.flags };
    case '$not':
      return { $not: testToFilter(test.test) };
    case '$eq':
    case '$ne':
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return { [test.op]: test.value };
  }
}

/** No document matches it (an empty `$in`). */
export const MATCH_NOTHING: Document = Object.freeze({ _id: { $in: [] } });

export function planToFilter(plan: Plan): Document {
  switch (plan.op) {
    case 'const':
      return plan.value ? {} : { _id: { $in: [] } };
    case 'and':
      return { $and: plan.of.map(planToFilter) };
    case 'or':
      return { $or: plan.of.map(planToFilter) };
    case 'not':
      return { $nor: [planToFilter(plan.of)] };
    case 'field':
      return { [plan.path]: testToFilter(plan.test) };
    case 'elements': {
      const test = testToFilter(plan.test);
      if (plan.quantifier === 'any') return { [plan.path]: { $elemMatch: test } };
      if (plan.quantifier === 'none') return { [plan.path]: { $not: { $elemMatch: test } } };
      return { [plan.path]: { $not: { $elemMatch: { $not: test } } } };
    }
    case 'size': {
      const list = `$${plan.path}`;
      return { $expr: { [plan.compare]: [{ $size: { $cond: { if: { $isArray: list }, then: list, else: [] } } }, plan.count] } };
    }
    case 'hasKey':
      return { [`${plan.path}.${plan.key}`]: { $exists: true } };
    case 'dictionaryValue': {
      const field = `$${plan.path}`;
      const entries = { $objectToArray: { $cond: { if: { $eq: [{ $type: field }, 'object'] }, then: field, else: { $literal: {} } } } };
      return { $expr: { $anyElementTrue: [{ $map: { input: entries, as: 'entry', in: { $in: ['$$entry.v', { $literal: plan.values }] } } }] } };
    }
  }
}

export type DocumentMatcher = (doc: Document) => boolean;

/** The values a dotted path reaches, arrays on the way fanned out as MongoDB does; missing is `undefined`. */
export function valuesAt(doc: unknown, path: string): unknown[] {
  let current: unknown[] = [doc];
  for (const segment of path.split('.')) {
    const next: unknown[] = [];
    for (const value of current) {
      if (isPlainDocument(value)) next.push(value[segment]);
      else if (Array.isArray(value)) {
        if (/^\d+$/.test(segment)) next.push(value[Number(segment)]);
        for (const item of value) if (isPlainDocument(item)) next.push(item[segment]);
      } else next.push(undefined);
    }
    current = next;
  }
  return current;
}

type ScalarTest = (value: unknown) => boolean;

/** Equality with one constant, with the common constant types tested without the general comparison. */
function equalTo(expected: RqlScalar): ScalarTest {
  if (typeof expected === 'string' || typeof expected === 'boolean') return (value) => value === expected;
  if (typeof expected === 'number' && !Number.isNaN(expected)) return (value) => (typeof value === 'number' ? value === expected : valuesEqual(value, expected));
  return (value) => valuesEqual(value, expected);
}

/** Membership in a list of constants; a long list is looked up by equality key first. */
function memberOf(values: RqlScalar[]): ScalarTest {
  const tests = values.map(equalTo);
  if (values.length <= 8) return (value) => tests.some((test) => test(value));
  const keys = new Set(values.map(equalityKey));
  return (value) => keys.has(equalityKey(value)) && tests.some((test) => test(value));
}

function compileScalarTest(test: ValueTest): ScalarTest {
  switch (test.op) {
    case '$eq':
      return equalTo(test.value);
    case '$ne': {
      const equal = equalTo(test.value);
      return (value) => !equal(value);
    }
    case '$in':
      return memberOf(test.values);
    case '$nin': {
      const member = memberOf(test.values);
      return (value) => !member(value);
    }
    case '$regex': {
      const regex = new RegExp(test.source, `${test.flags}u`);
      return (value) => typeof value === 'string' && regex.test(value);
    }
    case '$not': {
      const inner = compileScalarTest(test.test);
      return (value) => !inner(value);
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const expected = test.value;
      const accept = test.op === '$gt' ? (c: number) => c > 0 : test.op === '$gte' ? (c: number) => c >= 0 : test.op === '$lt' ? (c: number) => c < 0 : (c: number) => c <= 0;
      return (value) => {
        const order = compareSameType(value, expected);
        return order !== undefined && accept(order);
      };
    }
  }
}

/**
 * A field test as a query applies it to a field: positive operators hold when the value or any element of an
 * array value passes; $ne, $nin and $not are the negations of their positive forms over the same values.
 */
function compileFieldTest(test: ValueTest): ScalarTest {
  if (test.op === '$ne') {
    const equal = compileFieldTest({ op: '$eq', value: test.value });
    return (value) => !equal(value);
  }
  if (test.op === '$nin') {
    const member = compileFieldTest({ op: '$in', values: test.values });
    return (value) => !member(value);
  }
  if (test.op === '$not') {
    const inner = compileFieldTest(test.test);
    return (value) => !inner(value);
  }
  const scalar = compileScalarTest(test);
  return (value) => scalar(value) || (Array.isArray(value) && value.some(scalar));
}

function compareCounts(op: '$eq' | '$ne' | RelationalOp, a: number, b: number): boolean {
  switch (op) {
    case '$eq':
      return a === b;
    case '$ne':
      return a !== b;
    case '$gt':
      return a > b;
    case '$gte':
      return a >= b;
    case '$lt':
      return a < b;
    case '$lte':
      return a <= b;
  }
}

/** The same predicate as `planToFilter(plan)`, evaluated in process against one document. */
export function compilePlan(plan: Plan): DocumentMatcher {
  switch (plan.op) {
    case 'const':
      return plan.value ? () => true : () => false;
    case 'and': {
      const parts = plan.of.map(compilePlan);
      return (doc) => parts.every((part) => part(doc));
    }
    case 'or': {
      const parts = plan.of.map(compilePlan);
      return (doc) => parts.some((part) => part(doc));
    }
    case 'not': {
      const inner = compilePlan(plan.of);
      return (doc) => !inner(doc);
    }
    case 'field': {
      const test = compileFieldTest(plan.test);
      const { path } = plan;
      if (!path.includes('.')) return (doc) => test(doc[path]);
      return (doc) => valuesAt(doc, path).some(test);
    }
    case 'elements': {
      const test = compileScalarTest(plan.test);
      const { path, quantifier } = plan;
      if (quantifier === 'any') return (doc) => Array.isArray(doc[path]) && (doc[path] as unknown[]).some(test);
      if (quantifier === 'none') return (doc) => !(Array.isArray(doc[path]) && (doc[path] as unknown[]).some(test));
      return (doc) => !(Array.isArray(doc[path]) && (doc[path] as unknown[]).some((item) => !test(item)));
    }
    case 'size': {
      const { path, compare, count } = plan;
      return (doc) => {
        const list = doc[path];
        return compareCounts(compare, Array.isArray(list) ? list.length : 0, count);
      };
    }
    case 'hasKey': {
      const { path, key } = plan;
      return (doc) => {
        const dictionary = doc[path];
        return isPlainDocument(dictionary) && Object.prototype.hasOwnProperty.call(dictionary, key);
      };
    }
    case 'dictionaryValue': {
      const { path, values } = plan;
      return (doc) => {
        const dictionary = doc[path];
        return isPlainDocument(dictionary) && Object.values(dictionary).some((value) => values.some((expected) => valuesEqual(value, expected)));
      };
    }
  }
}

