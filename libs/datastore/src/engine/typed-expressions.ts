/**
 * Aggregation expressions and accumulators whose results carry MongoDB's BSON number types. mingo computes
 * over promoted copies of stored documents (every number a JS number, see promoteNumbers), so on its own a
 * $sum of longs is a plain number and a $toLong a plain number too. Here an expression is evaluated typed:
 * field paths are read from the stored document a promoted copy was made from (originalOf), numeric operators
 * compute with bson/numeric.ts, and a result is a stored value (a Long, a Double holding an integer...), but
 * for a whole document named by `$$ROOT` or `$$CURRENT`, which stays mingo's promoted copy (storedOf gives
 * its stored form, as the stages do with what they output).
 *
 * Two faces for each operator. Typed evaluation (typedValue) is what the engine's own stages call, and the
 * accumulators mingo calls from a stage answer typed values (they go straight into output documents). Every
 * expression operator mingo itself may call answers a promoted value (promoteNumbers), because mingo's own
 * operators compute with JS numbers: a typed value never reaches them. Operators not listed here are mingo's;
 * their results are read as stored values by the rules of promotion (a JS number is an int or a double).
 *
 * Nothing here is on the find or write paths' per-document work, except a filter's or projection's own
 * expressions.
 */
import { ComputeOptions, type AccumulatorOperator, type ExpressionOperator, OpType, type Options, type WindowOperator, computeValue, getOperator } from 'mingo/core';
import { $dateDiff as mingoDateDiff, $toHashedIndexKey as mingoHashedIndexKey } from 'mingo/operators/expression';
import { $covariancePop as mingoCovariancePop, $covarianceSamp as mingoCovarianceSamp, $median as mingoMedian, $percentile as mingoPercentile } from 'mingo/operators/accumulator';
import { $derivative as mingoDerivative, $expMovingAvg as mingoExpMovingAvg, $integral as mingoIntegral } from 'mingo/operators/window';
import { resolve, truthy } from 'mingo/util';
import { Long } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import { type Document, compareValues, hasOwn, isPlainObject, originalOf, promoteNumbers, storedDouble, storedOf, typeName } from '../bson/values';
import {
  NumericTotal,
  abs,
  add,
  atan2,
  ceilOrFloor,
  convertToNumber,
  divide,
  doubleOf,
  log,
  mod,
  multiply,
  numericKind,
  pow,
  realFunction,
  roundTo,
  subtract,
  type NumericTarget,
} from '../bson/numeric';
import { collatedKeyOf, uniqueValues } from './collated-keys';
import { checkSort, sortDocuments } from './sort';

/**
 * A typed operator: `args` is the operand as the pipeline gives it (numbers promoted), `literal` the same
 * operand with the caller's number types where they are known (a pipeline's Long literal).
 */
type TypedOperator = (obj: unknown, args: unknown, options: Options, literal: unknown) => unknown;

function badValue(message: string, code?: number): DatastoreError {
  return new DatastoreError('BadValue', message, code === undefined ? undefined : { code });
}

/** The document field paths resolve against: mingo's root (the stage's document), else `obj`. */
function rootOf(obj: unknown, options: Options): unknown {
  return (options instanceof ComputeOptions ? options.root : undefined) ?? obj;
}

function plainValue(obj: unknown, expr: unknown, options: Options): unknown {
  return computeValue(obj, expr, null, options);
}

/**
 * `$path`, `$$ROOT.path`, `$$CURRENT.path` or `$$name.path` read with stored types. `$$ROOT` and `$$CURRENT`
 * themselves answer the document as mingo holds it, a promoted copy whose original is at hand (storedOf):
 * mingo's own stages accumulate whole documents so ($setWindowFields's partitions) and compute over them.
 */
function typedPath(obj: unknown, expr: string, options: Options): unknown {
  if (expr[1] !== '$') return resolveStored(originalOf(rootOf(obj, options)), expr.slice(1));
  const dot = expr.indexOf('.');
  const name = dot < 0 ? expr.slice(2) : expr.slice(2, dot);
  const rest = dot < 0 ? '' : expr.slice(dot + 1);
  let base: unknown;
  if (name === 'ROOT' || name === 'CURRENT') {
    base = name === 'ROOT' ? rootOf(obj, options) : obj;
    if (rest === '') return base;
  } else {
    // Variables an expression binds ($map's, $let's...) are the local ones, held typed beside mingo's values
    // (withVariables); an operation's `let` variables are given as a promoted copy of their stored values.
    const local = options instanceof ComputeOptions ? options.local.variables : undefined;
    const globals = options.variables;
    if (local && hasOwn(local, name)) {
      const bound = (local as Record<symbol, Record<string, Bound> | undefined>)[TYPED_VARIABLES]?.[name];
      // A variable an operator of mingo's bound again under the same name is mingo's value.
      if (!bound || bound.plain !== local[name]) return storedOf(plainValue(obj, expr, options));
      base = bound.stored;
    } else if (globals && hasOwn(globals, name)) {
      base = (originalOf(globals) as Document)[name];
    } else {
      return storedOf(plainValue(obj, expr, options));
    }
  }
  const source = originalOf(base);
  return rest === '' ? source : resolveStored(source, rest);
}

/** A variable's stored value beside the promoted one mingo's operators are given. */
interface Bound {
  plain: unknown;
  stored: unknown;
}

/** Where the variables an operator here binds are kept typed, in mingo's local variables (copied along with them). */
const TYPED_VARIABLES = Symbol('typedVariables');

/** `options` with variables bound for expressions below: mingo's operators see them promoted, typed ones stored. */
function withVariables(obj: unknown, options: Options, values: Readonly<Record<string, unknown>>): Options {
  const copts = ComputeOptions.init(options, obj);
  const local: unknown = copts.local.variables;
  const outer = isPlainObject(local) ? (local as Record<symbol, Record<string, Bound> | undefined>)[TYPED_VARIABLES] : undefined;
  const bound: Record<string, Bound> = { ...outer };
  const variables: Record<string | symbol, unknown> = {};
  for (const [name, stored] of Object.entries(values)) {
    const plain = promoteNumbers(stored);
    variables[name] = plain;
    bound[name] = { plain, stored };
  }
  // Enumerable: ComputeOptions merges variables by spreading them.
  variables[TYPED_VARIABLES] = bound;
  return copts.update(copts.root, { variables });
}

function resolveStored(doc: unknown, path: string): unknown {
  if (doc === null || typeof doc !== 'object') return undefined;
  // A top-level field (most paths) of a document, read directly: what mingo's resolve answers for it.
  if (!Array.isArray(doc) && !path.includes('.')) return hasOwn(doc, path) ? (doc as Document)[path] : undefined;
  return resolve(doc as Document, path);
}

/**
 * Evaluates an expression with BSON number types: the result is a stored value. `literal` is `expr` with
 * the caller's number types where known (a pipeline read from BSON keeps them, see originalOf).
 */
export function typedValue(obj: unknown, expr: unknown, options: Options, literal: unknown = expr): unknown {
  if (typeof expr === 'string') return expr.length > 1 && expr[0] === '$' ? typedPath(obj, expr, options) : expr;
  if (expr === null || typeof expr !== 'object') return literal;
  if (Array.isArray(expr)) {
    const typed = typedLiterals(expr, literal);
    const out = new Array<unknown>(expr.length);
    for (let i = 0; i < expr.length; i++) out[i] = typedValue(obj, expr[i], options, typed[i]);
    return out;
  }
  if (!isPlainObject(expr)) return literal;
  const keys = Object.keys(expr);
  if (keys.length === 1 && keys[0][0] === '$') {
    const op = keys[0];
    const typed = TYPED_EXPRESSIONS[op];
    if (typed) return typed(obj, expr[op], options, typedLiterals(expr, literal)[op]);
    // mingo's operator, called as mingo's computeValue would call it (options already hold the root).
    const builtin = options instanceof ComputeOptions ? (getOperator(OpType.EXPRESSION, op, options) as ExpressionOperator | null) : null;
    return storedOf(builtin ? builtin(obj as Document, expr[op], options) : plainValue(obj, expr, options));
  }
  if (keys.some((key) => key[0] === '$')) return storedOf(plainValue(obj, expr, options)); // mingo's error
  const typed = typedLiterals(expr, literal);
  const out: Document = {};
  for (const key of keys) out[key] = typedValue(obj, expr[key], options, typed[key]);
  return out;
}

/** `expr`'s members with the caller's number types: its original when it is a promoted copy. */
function typedLiterals<T extends Document | unknown[]>(expr: T, literal: unknown): T {
  const original = originalOf(expr);
  if (original !== expr) return original;
  return literal !== null && typeof literal === 'object' && Array.isArray(literal) === Array.isArray(expr) ? (literal as T) : expr;
}

// ---- operands ----

/** An operator's operands: an array's elements, else the one operand. */
function operands(obj: unknown, args: unknown, options: Options, literal: unknown): unknown[] {
  if (!Array.isArray(args)) return [typedValue(obj, args, options, literal)];
  return typedValue(obj, args, options, literal) as unknown[];
}

function exactly(op: string, list: unknown[], count: number): unknown[] {
  if (list.length !== count) throw badValue(`Expression ${op} takes exactly ${count} arguments. ${list.length} were passed in.`, 16020);
  return list;
}

function unary(op: string, fn: (value: unknown) => unknown): TypedOperator {
  return (obj, args, options, literal) => fn(exactly(op, operands(obj, args, options, literal), 1)[0]);
}

function binary(op: string, fn: (a: unknown, b: unknown) => unknown): TypedOperator {
  return (obj, args, options, literal) => {
    const [a, b] = exactly(op, operands(obj, args, options, literal), 2);
    return fn(a, b);
  };
}

function isNullish(value: unknown): boolean {
  return value === null || value === undefined;
}

/** The numbers of an $sum/$avg/$min/$max expression: one operand's array elements, else the operands. */
function listOperands(obj: unknown, args: unknown, options: Options, literal: unknown): unknown[] {
  const list = operands(obj, args, options, literal);
  return list.length === 1 && Array.isArray(list[0]) ? (list[0] as unknown[]) : list;
}

// ---- arithmetic ----

function roundOperator(op: '$round' | '$trunc'): TypedOperator {
  return (obj, args, options, literal) => {
    const list = operands(obj, args, options, literal);
    if (list.length < 1 || list.length > 2) throw badValue(`Expression ${op} takes at least 1 argument, and at most 2, but ${list.length} were passed in.`, 16020);
    return roundTo(list[0], list.length === 2 ? list[1] : 0, op);
  };
}

function positive(op: string, code: number): (x: number) => void {
  return (x) => {
    if (!(x > 0) && !Number.isNaN(x)) throw badValue(`${op}'s argument must be a positive number, but is ${x}`, code);
  };
}

function inRange(op: string, low: number, high: number, open = false): (x: number) => void {
  return (x) => {
    const outside = open ? !(x > low && x < high) : !(x >= low && x <= high);
    if (outside && !Number.isNaN(x)) throw badValue(`cannot apply ${op} to ${x}, value must be in ${open ? '(' : '['}${low},${high}${open ? ')' : ']'}`, 50989);
  };
}

function finite(op: string): (x: number) => void {
  return (x) => {
    if (x === Infinity || x === -Infinity) throw badValue(`cannot apply ${op} to ${x}, value must be in (-inf,inf)`, 50989);
  };
}

function real(op: string, fn: (x: number) => number, check?: (x: number) => void): TypedOperator {
  return unary(op, (value) => realFunction(value, op, fn, check));
}

const RADIANS = Math.PI / 180;

// ---- conversions ----

const CONVERT_TARGETS: Readonly<Record<string, NumericTarget>> = { int: 'int', long: 'long', double: 'double', decimal: 'decimal', '1': 'double', '16': 'int', '18': 'long', '19': 'decimal' };

function conversion(target: NumericTarget): (value: unknown) => unknown {
  return (value) => (isNullish(value) ? null : convertToNumber(value, target));
}

/** $convert to a numeric type; other targets are mingo's. onError and onNull are evaluated only when used. */
const $convert: TypedOperator = (obj, args, options, literal) => {
  if (!isPlainObject(args)) return storedOf(plainValue(obj, { $convert: args }, options));
  const typed = typedLiterals(args, literal);
  const to: unknown = plainValue(obj, args.to, options);
  const target = typeof to === 'string' || typeof to === 'number' ? CONVERT_TARGETS[String(to)] : undefined;
  if (!target) return storedOf(plainValue(obj, { $convert: args }, options));
  const input = typedValue(obj, args.input, options, typed.input);
  if (isNullish(input)) return 'onNull' in args ? typedValue(obj, args.onNull, options, typed.onNull) : null;
  try {
    return convertToNumber(input, target);
  } catch (error) {
    if (!('onError' in args) || !(error instanceof DatastoreError) || error.codeName !== 'ConversionFailure') throw error;
    return typedValue(obj, args.onError, options, typed.onError);
  }
};

// ---- values passed through ----

/** $cond: the condition as mingo reads it (truthiness of JS values), the chosen branch typed. */
const $cond: TypedOperator = (obj, args, options, literal) => {
  let branches: [unknown, unknown, unknown];
  let typed: [unknown, unknown, unknown];
  if (Array.isArray(args) && args.length === 3) {
    branches = args as [unknown, unknown, unknown];
    typed = typedLiterals(args, literal) as [unknown, unknown, unknown];
  } else if (isPlainObject(args)) {
    const t = typedLiterals(args, literal);
    branches = [args.if, args.then, args.else];
    typed = [t.if, t.then, t.else];
  } else {
    return storedOf(plainValue(obj, { $cond: args }, options));
  }
  const chosen = truthy(plainValue(obj, branches[0], options), true) ? 1 : 2;
  return typedValue(obj, branches[chosen], options, typed[chosen]);
};

const $ifNull: TypedOperator = (obj, args, options, literal) => {
  if (!Array.isArray(args) || args.length < 2) return storedOf(plainValue(obj, { $ifNull: args }, options));
  const typed = typedLiterals(args, literal);
  for (let i = 0; i < args.length - 1; i++) {
    const value = typedValue(obj, args[i], options, typed[i]);
    if (!isNullish(value)) return value;
  }
  return typedValue(obj, args[args.length - 1], options, typed[args.length - 1]);
};

const $switch: TypedOperator = (obj, args, options, literal) => {
  if (!isPlainObject(args) || !Array.isArray(args.branches)) return storedOf(plainValue(obj, { $switch: args }, options));
  const typed = typedLiterals(args, literal);
  const typedBranches = Array.isArray(typed.branches) ? (typed.branches as unknown[]) : [];
  for (let i = 0; i < args.branches.length; i++) {
    const branch = args.branches[i] as unknown;
    if (!isPlainObject(branch)) return storedOf(plainValue(obj, { $switch: args }, options));
    if (truthy(plainValue(obj, branch.case, options), true)) {
      const typedBranch = typedBranches[i];
      return typedValue(obj, branch.then, options, isPlainObject(typedBranch) ? typedBranch.then : branch.then);
    }
  }
  return typedValue(obj, args.default, options, typed.default);
};

/** $arrayElemAt with the element as stored. */
const $arrayElemAt: TypedOperator = (obj, args, options, literal) => {
  const [array, index] = exactly('$arrayElemAt', operands(obj, args, options, literal), 2);
  if (isNullish(array) || isNullish(index)) return null;
  if (!Array.isArray(array)) throw badValue(`$arrayElemAt's first argument must be an array, but is ${typeName(array)}`, 28689);
  const kind = numericKind(index);
  const position = kind === undefined ? Number.NaN : doubleOf(index);
  if (!Number.isInteger(position)) throw badValue(`$arrayElemAt's second argument must be a numeric value representable as a 32-bit integer, but is ${typeName(index)}`, 28691);
  return position < 0 ? array[array.length + position] : array[position];
};

/** The array forms of $first and $last (one operand, an array): its first or last element as stored. */
function endOfArray(op: '$first' | '$last'): TypedOperator {
  return (obj, args, options, literal) => {
    if (Array.isArray(args) && args.length !== 1) return storedOf(plainValue(obj, { [op]: args }, options));
    const [array] = operands(obj, args, options, literal);
    if (isNullish(array)) return null;
    if (!Array.isArray(array)) return storedOf(plainValue(obj, { [op]: args }, options));
    const items = array as unknown[];
    return op === '$first' ? items[0] : items[items.length - 1];
  };
}

// ---- arrays, sets and documents, their values passed through as stored ----

/** A numeric argument as an int32 (MongoDB's array positions and counts), or undefined when it is none. */
function int32Of(value: unknown): number | undefined {
  if (numericKind(value) === undefined) return undefined;
  const n = doubleOf(value);
  return Number.isInteger(n) && n >= -0x8000_0000 && n <= 0x7fff_ffff ? n : undefined;
}

const $slice: TypedOperator = (obj, args, options, literal) => {
  const list = operands(obj, args, options, literal);
  if (list.length < 2 || list.length > 3) throw badValue(`Expression $slice takes at least 2 arguments, and at most 3, but ${list.length} were passed in.`, 28667);
  if (list.some(isNullish)) return null;
  const [array, second, third] = list;
  if (!Array.isArray(array)) throw badValue(`First argument to $slice must be an array, but is of type: ${typeName(array)}`, 28724);
  if (numericKind(second) === undefined) throw badValue(`Second argument to $slice must be a numeric value, but is of type: ${typeName(second)}`, 28725);
  const position = int32Of(second);
  if (position === undefined) throw badValue(`Second argument to $slice can't be represented as a 32-bit integer: ${String(second)}`, 28726);
  const items = array as unknown[];
  if (list.length === 2) return position >= 0 ? items.slice(0, position) : items.slice(Math.max(0, items.length + position));
  if (numericKind(third) === undefined) throw badValue(`Third argument to $slice must be numeric, but is of type: ${typeName(third)}`, 28727);
  const count = int32Of(third);
  if (count === undefined) throw badValue(`Third argument to $slice can't be represented as a 32-bit integer: ${String(third)}`, 28728);
  if (count <= 0) throw badValue(`Third argument to $slice must be positive: ${count}`, 28729);
  const start = position >= 0 ? Math.min(position, items.length) : Math.max(0, items.length + position);
  return items.slice(start, start + count);
};

const $concatArrays: TypedOperator = (obj, args, options, literal) => {
  const out: unknown[] = [];
  for (const value of operands(obj, args, options, literal)) {
    if (isNullish(value)) return null;
    if (!Array.isArray(value)) throw badValue(`$concatArrays only supports arrays, not ${typeName(value)}`, 28664);
    out.push(...(value as unknown[]));
  }
  return out;
};

const $reverseArray = unary('$reverseArray', (value) => {
  if (isNullish(value)) return null;
  if (!Array.isArray(value)) throw badValue(`The argument to $reverseArray must be an array, but was of type: ${typeName(value)}`, 34435);
  return (value as unknown[]).slice().reverse();
});

/** $zip: `inputs` an array of expressions (or one resolving to an array of arrays), `defaults` likewise. */
const $zip: TypedOperator = (obj, args, options, literal) => {
  if (!isPlainObject(args)) throw badValue(`$zip only supports an object as its argument`, 34460);
  const typed = typedLiterals(args, literal);
  const useLongestLength = args.useLongestLength ?? false;
  if (typeof useLongestLength !== 'boolean') throw badValue(`useLongestLength must be a bool, found ${typeName(useLongestLength)}`, 34463);
  if (args.defaults !== undefined && !useLongestLength) throw badValue('cannot specify defaults unless useLongestLength is true', 34466);
  const inputs = typedValue(obj, args.inputs, options, typed.inputs);
  if (!Array.isArray(inputs)) throw badValue('inputs must be an array of expressions', 34461);
  const defaults = args.defaults === undefined ? [] : typedValue(obj, args.defaults, options, typed.defaults);
  if (!Array.isArray(defaults)) throw badValue('defaults must be an array of expressions', 34462);
  if (args.defaults !== undefined && defaults.length !== inputs.length) throw badValue('defaults and inputs must have the same length', 34467);
  let length = useLongestLength ? 0 : Infinity;
  for (const input of inputs as unknown[]) {
    if (isNullish(input)) return null;
    if (!Array.isArray(input)) throw badValue(`$zip found a non-array expression in input: ${typeName(input)}`, 34468);
    length = useLongestLength ? Math.max(length, input.length) : Math.min(length, input.length);
  }
  const arrays = inputs as unknown[][];
  if (arrays.length === 0) return [];
  return Array.from({ length }, (_unused, i) => arrays.map((array, j) => (i < array.length ? array[i] : ((defaults as unknown[])[j] ?? null))));
};

/** A document operand as stored (a promoted copy's original), or undefined when it is not a document. */
function documentOf(value: unknown): Document | undefined {
  const stored = originalOf(value);
  return isPlainObject(stored) ? stored : undefined;
}

/** The field name of $getField, $setField and $unsetField: a string, as MongoDB requires. */
function fieldName(op: string, obj: unknown, field: unknown, options: Options): string {
  const name: unknown = plainValue(obj, field, options);
  if (typeof name !== 'string') throw badValue(`${op} requires 'field' to evaluate to type String, but got ${typeName(name)}`, op === '$getField' ? 3041704 : 4161106);
  return name;
}

/** $getField: a field of `input` (by default the current document) as stored, missing when it has none. */
const $getField: TypedOperator = (obj, args, options, literal) => {
  const full = isPlainObject(args) && hasOwn(args, 'field');
  const spec = full ? args : { field: args };
  const typed = full ? typedLiterals(args, literal) : {};
  const name = fieldName('$getField', obj, spec.field, options);
  const input = 'input' in spec ? typedValue(obj, spec.input, options, typed.input) : typedValue(obj, '$$CURRENT', options);
  if (isNullish(input)) return null;
  const doc = documentOf(input);
  if (!doc) throw badValue(`$getField requires 'input' to evaluate to type Object, but got ${typeName(input)}`, 3041705);
  return hasOwn(doc, name) ? doc[name] : undefined;
};

/** $setField and $unsetField: a copy of `input` with the field set to `value` as computed, or removed ($$REMOVE, or missing). */
function setField(op: '$setField' | '$unsetField'): TypedOperator {
  return (obj, args, options, literal) => {
    if (!isPlainObject(args)) throw badValue(`${op} only supports an object as its argument`, 4161100);
    const typed = typedLiterals(args, literal);
    const name = fieldName(op, obj, args.field, options);
    const input = typedValue(obj, args.input, options, typed.input);
    if (isNullish(input)) return null;
    const doc = documentOf(input);
    if (!doc) throw badValue(`${op} requires 'input' to evaluate to type Object, but got ${typeName(input)}`, 4161105);
    const value = op === '$unsetField' || args.value === '$$REMOVE' ? undefined : typedValue(obj, args.value, options, typed.value);
    const out: Document = {};
    for (const key of Object.keys(doc)) if (key !== name || value !== undefined) setOwnField(out, key, key === name ? value : doc[key]);
    if (value !== undefined && !hasOwn(doc, name)) setOwnField(out, name, value);
    return out;
  };
}

function setOwnField(target: Document, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

const $objectToArray = unary('$objectToArray', (value) => {
  if (isNullish(value)) return null;
  const doc = documentOf(value);
  if (!doc) throw badValue(`$objectToArray requires a document input, found: ${typeName(value)}`, 40390);
  return Object.keys(doc).map((k) => ({ k, v: doc[k] }));
});

const $arrayToObject = unary('$arrayToObject', (value) => {
  if (isNullish(value)) return null;
  if (!Array.isArray(value)) throw badValue(`$arrayToObject requires an array input, found: ${typeName(value)}`, 40386);
  const out: Document = {};
  for (const item of value as unknown[]) {
    let key: unknown;
    let field: unknown;
    const pair = documentOf(item);
    if (Array.isArray(item)) {
      if (item.length !== 2) throw badValue(`$arrayToObject requires an array of size 2 arrays,found array of size: ${item.length}`, 40397);
      [key, field] = item as unknown[];
    } else if (pair && Object.keys(pair).length === 2 && hasOwn(pair, 'k') && hasOwn(pair, 'v')) {
      key = pair.k;
      field = pair.v;
    } else {
      throw badValue('$arrayToObject requires an object with keys \'k\' and \'v\', or an array of size 2 arrays', 40392);
    }
    if (typeof key !== 'string') throw badValue(`$arrayToObject requires the key to be of type string, found: ${typeName(key)}`, 40395);
    if (key.includes('\0')) throw badValue("Key field cannot contain an embedded null byte", 4940400);
    setOwnField(out, key, field);
  }
  return out;
});

/** $sortArray: by BSON order of the whole values (sortBy 1 or -1) or of documents' fields, strings by the active comparison. */
const $sortArray: TypedOperator = (obj, args, options, literal) => {
  if (!isPlainObject(args)) throw badValue('$sortArray requires an object as its argument', 2942500);
  const typed = typedLiterals(args, literal);
  const input = typedValue(obj, args.input, options, typed.input);
  const sortBy: unknown = plainValue(obj, args.sortBy, options);
  if (isNullish(input)) return null;
  if (!Array.isArray(input)) throw badValue(`The input argument to $sortArray must be an array, but was of type: ${typeName(input)}`, 2942504);
  if (sortBy === 1 || sortBy === -1) return (input as unknown[]).slice().sort((a, b) => compareValues(a, b) * sortBy);
  if (!isPlainObject(sortBy)) throw badValue('$sortArray requires sortBy to be 1, -1 or a sort specification', 2942505);
  return sortDocuments((input as Document[]).slice(), checkSort(sortBy) ?? {});
};

/** The expression forms of $firstN, $lastN, $maxN and $minN: `{input, n}` over an array, its values as stored. */
function arrayN(op: '$firstN' | '$lastN' | '$maxN' | '$minN'): TypedOperator {
  return (obj, args, options, literal) => {
    if (!isPlainObject(args)) throw badValue(`${op} requires an object with 'input' and 'n'`, 5787801);
    const typed = typedLiterals(args, literal);
    const n: unknown = plainValue(obj, args.n, options);
    if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) throw badValue(`${op}: 'n' must be a positive integer, found ${String(n)}`, 5787908);
    const input = typedValue(obj, args.input, options, typed.input);
    if (isNullish(input)) return null;
    if (!Array.isArray(input)) throw badValue(`${op} requires 'input' to be an array, found ${typeName(input)}`, 5788200);
    const items = input as unknown[];
    if (op === '$firstN') return items.slice(0, n);
    if (op === '$lastN') return items.slice(Math.max(0, items.length - n));
    const direction = op === '$maxN' ? -1 : 1;
    return items
      .filter((item) => !isNullish(item))
      .sort((a, b) => compareValues(a, b) * direction)
      .slice(0, n);
  };
}

/** The operands of a set operator: null when one is null or missing, else arrays. */
function setOperands(op: string, obj: unknown, args: unknown, options: Options, literal: unknown): unknown[][] | null {
  const list = operands(obj, args, options, literal);
  if (list.some(isNullish)) return null;
  for (const value of list) if (!Array.isArray(value)) throw badValue(`All operands of ${op} must be arrays. One argument is of type: ${typeName(value)}`, op === '$setUnion' ? 17043 : op === '$setIntersection' ? 17047 : 17048);
  return list as unknown[][];
}

const $setUnion: TypedOperator = (obj, args, options, literal) => {
  const sets = setOperands('$setUnion', obj, args, options, literal);
  return sets && uniqueValues(sets.flat());
};

const $setIntersection: TypedOperator = (obj, args, options, literal) => {
  const sets = setOperands('$setIntersection', obj, args, options, literal);
  if (!sets) return null;
  const [first, ...rest] = sets;
  if (first === undefined) return [];
  const keyOf = collatedKeyOf();
  const others = rest.map((values) => new Set(values.map(keyOf)));
  return uniqueValues(first, keyOf).filter((v) => others.every((keys) => keys.has(keyOf(v))));
};

const $setDifference: TypedOperator = (obj, args, options, literal) => {
  const list = operands(obj, args, options, literal);
  if (list.length !== 2) throw badValue(`Expression $setDifference takes exactly 2 arguments. ${list.length} were passed in.`, 16020);
  const sets = setOperands('$setDifference', obj, args, options, literal);
  if (!sets) return null;
  const [first, second] = sets;
  const keyOf = collatedKeyOf();
  const removed = new Set(second.map(keyOf));
  return uniqueValues(first, keyOf).filter((v) => !removed.has(keyOf(v)));
};

/** $let, its variables and `in` typed. */
const $let: TypedOperator = (obj, args, options, literal) => {
  if (!isPlainObject(args) || !isPlainObject(args.vars)) return storedOf(plainValue(obj, { $let: args }, options));
  const typed = typedLiterals(args, literal);
  const typedVars = isPlainObject(typed.vars) ? typed.vars : args.vars;
  const values: Document = {};
  for (const [name, value] of Object.entries(args.vars)) values[name] = typedValue(obj, value, options, typedVars[name]);
  return typedValue(obj, args.in, withVariables(obj, options, values), typed.in);
};

/** $map, $filter and $reduce over an array as stored, `$$this` (or `as`) and `$$value` typed. */
function arrayInput(op: string, obj: unknown, args: Document, options: Options, literal: Document): unknown[] | null {
  const input = typedValue(obj, args.input, options, literal.input);
  if (isNullish(input)) return null;
  if (!Array.isArray(input)) throw badValue(`input to ${op} must be an array not ${typeName(input)}`, op === '$map' ? 16883 : op === '$filter' ? 28651 : 40080);
  return input as unknown[];
}

const $map: TypedOperator = (obj, args, options, literal) => {
  if (!isPlainObject(args)) return storedOf(plainValue(obj, { $map: args }, options));
  const typed = typedLiterals(args, literal);
  const input = arrayInput('$map', obj, args, options, typed);
  if (input === null) return null;
  const name = typeof args.as === 'string' ? args.as : 'this';
  return input.map((item) => typedValue(obj, args.in, withVariables(obj, options, { [name]: item }), typed.in));
};

const $filter: TypedOperator = (obj, args, options, literal) => {
  if (!isPlainObject(args)) return storedOf(plainValue(obj, { $filter: args }, options));
  const typed = typedLiterals(args, literal);
  const input = arrayInput('$filter', obj, args, options, typed);
  if (input === null) return null;
  const name = typeof args.as === 'string' ? args.as : 'this';
  const limit = args.limit === undefined ? undefined : Number(plainValue(obj, args.limit, options));
  const out: unknown[] = [];
  for (const item of input) {
    if (limit !== undefined && out.length >= limit) break;
    if (truthy(plainValue(obj, args.cond, withVariables(obj, options, { [name]: item })), true)) out.push(item);
  }
  return out;
};

const $reduce: TypedOperator = (obj, args, options, literal) => {
  if (!isPlainObject(args)) return storedOf(plainValue(obj, { $reduce: args }, options));
  const typed = typedLiterals(args, literal);
  const input = arrayInput('$reduce', obj, args, options, typed);
  let value = typedValue(obj, args.initialValue, options, typed.initialValue);
  if (input === null) return null;
  for (const item of input) value = typedValue(obj, args.in, withVariables(obj, options, { value, this: item }), typed.in);
  return value;
};

function typedMerge(values: unknown[]): Document {
  const out: Document = {};
  for (const given of values) {
    if (isNullish(given)) continue;
    const value = originalOf(given);
    if (!isPlainObject(value)) throw badValue(`$mergeObjects requires object inputs, but input ${typeName(value)} is of type ${typeName(value)}`, 40400);
    for (const key of Object.keys(value)) if (value[key] !== undefined) out[key] = value[key];
  }
  return out;
}

// ---- array reductions ----

function sumOf(values: unknown[]): unknown {
  const total = new NumericTotal();
  for (const value of values) total.addValue(value);
  return total.sum();
}

function averageOf(values: unknown[]): unknown {
  const total = new NumericTotal();
  for (const value of values) total.addValue(value);
  return total.average();
}

/** The greatest (direction 1) or least (-1) value that is not null or missing, as stored; null for none. */
function extremeOf(values: unknown[], direction: 1 | -1): unknown {
  let best: unknown;
  for (const value of values) {
    if (isNullish(value)) continue;
    if (best === undefined || compareValues(value, best) * direction > 0) best = value;
  }
  return best ?? null;
}

function standardDeviation(values: unknown[], sample: boolean): unknown {
  const numbers: number[] = [];
  for (const value of values) if (numericKind(value) !== undefined) numbers.push(doubleOf(value));
  if (numbers.length === 0 || (sample && numbers.length === 1)) return null;
  const mean = numbers.reduce((a, b) => a + b, 0) / numbers.length;
  const squares = numbers.reduce((a, b) => a + (b - mean) ** 2, 0);
  return storedDouble(Math.sqrt(squares / (numbers.length - (sample ? 1 : 0))));
}

// ---- bitwise ----

function bitwise(op: '$bitAnd' | '$bitOr' | '$bitXor'): TypedOperator {
  return (obj, args, options, literal) => {
    const list = operands(obj, args, options, literal);
    let long = false;
    let result = op === '$bitAnd' ? -1n : 0n;
    for (const value of list) {
      if (isNullish(value)) return null;
      const kind = numericKind(value);
      if (kind !== 'int' && kind !== 'long') throw new DatastoreError('TypeMismatch', `${op} only supports int and long operands.`, { code: 28768 });
      if (kind === 'long') long = true;
      const n = BigInt.asIntN(64, BigInt(String(value)));
      result = op === '$bitAnd' ? result & n : op === '$bitOr' ? result | n : result ^ n;
    }
    return long ? Long.fromBigInt(result) : Number(BigInt.asIntN(32, result));
  };
}

const $bitNot = unary('$bitNot', (value) => {
  if (isNullish(value)) return null;
  const kind = numericKind(value);
  if (kind === 'int') return ~(value as number);
  if (kind === 'long') return Long.fromBigInt(BigInt.asIntN(64, ~BigInt(String(value))));
  throw new DatastoreError('TypeMismatch', `$bitNot only supports int and long operands.`, { code: 28768 });
});

// ---- results of mingo's operators with a type of their own ----

/** A mingo operator whose number result MongoDB gives as a long. */
function longResultOf(operator: ExpressionOperator): TypedOperator {
  return (obj, args, options) => {
    const value: unknown = operator(obj as Document, args, options);
    return typeof value === 'number' && Number.isInteger(value) ? Long.fromNumber(value) : storedOf(value);
  };
}

const $rand: TypedOperator = () => storedDouble(Math.random());

const TYPED_EXPRESSIONS: Readonly<Record<string, TypedOperator>> = {
  $add: (obj, args, options, literal) => add(operands(obj, args, options, literal)),
  $multiply: (obj, args, options, literal) => multiply(operands(obj, args, options, literal)),
  $subtract: binary('$subtract', subtract),
  $divide: binary('$divide', divide),
  $mod: binary('$mod', mod),
  $abs: unary('$abs', abs),
  $ceil: unary('$ceil', (v) => ceilOrFloor(v, '$ceil')),
  $floor: unary('$floor', (v) => ceilOrFloor(v, '$floor')),
  $round: roundOperator('$round'),
  $trunc: roundOperator('$trunc'),
  $pow: binary('$pow', pow),
  $sqrt: real('$sqrt', Math.sqrt, (x) => {
    if (x < 0) throw badValue("$sqrt's argument must be greater than or equal to 0", 28714);
  }),
  $exp: real('$exp', Math.exp),
  $ln: real('$ln', Math.log, positive('$ln', 28766)),
  $log10: real('$log10', Math.log10, positive('$log10', 28761)),
  $log: binary('$log', log),
  $sin: real('$sin', Math.sin, finite('$sin')),
  $cos: real('$cos', Math.cos, finite('$cos')),
  $tan: real('$tan', Math.tan, finite('$tan')),
  $asin: real('$asin', Math.asin, inRange('$asin', -1, 1)),
  $acos: real('$acos', Math.acos, inRange('$acos', -1, 1)),
  $atan: real('$atan', Math.atan),
  $atan2: binary('$atan2', atan2),
  $sinh: real('$sinh', Math.sinh),
  $cosh: real('$cosh', Math.cosh),
  $tanh: real('$tanh', Math.tanh),
  $asinh: real('$asinh', Math.asinh),
  $acosh: real('$acosh', Math.acosh, inRange('$acosh', 1, Infinity)),
  $atanh: real('$atanh', Math.atanh, inRange('$atanh', -1, 1)),
  $degreesToRadians: real('$degreesToRadians', (x) => x * RADIANS),
  $radiansToDegrees: real('$radiansToDegrees', (x) => x / RADIANS),
  $toInt: unary('$toInt', conversion('int')),
  $toLong: unary('$toLong', conversion('long')),
  $toDouble: unary('$toDouble', conversion('double')),
  $toDecimal: unary('$toDecimal', conversion('decimal')),
  $convert,
  $bitAnd: bitwise('$bitAnd'),
  $bitOr: bitwise('$bitOr'),
  $bitXor: bitwise('$bitXor'),
  $bitNot,
  $sum: (obj, args, options, literal) => sumOf(listOperands(obj, args, options, literal)),
  $avg: (obj, args, options, literal) => averageOf(listOperands(obj, args, options, literal)),
  $max: (obj, args, options, literal) => extremeOf(listOperands(obj, args, options, literal), 1),
  $min: (obj, args, options, literal) => extremeOf(listOperands(obj, args, options, literal), -1),
  $stdDevPop: (obj, args, options, literal) => standardDeviation(listOperands(obj, args, options, literal), false),
  $stdDevSamp: (obj, args, options, literal) => standardDeviation(listOperands(obj, args, options, literal), true),
  $mergeObjects: (obj, args, options, literal) => typedMerge(operands(obj, args, options, literal)),
  $literal: (_obj, _args, _options, literal) => literal,
  $cond,
  $ifNull,
  $switch,
  $let,
  $map,
  $filter,
  $reduce,
  $arrayElemAt,
  $first: endOfArray('$first'),
  $last: endOfArray('$last'),
  $slice,
  $concatArrays,
  $reverseArray,
  $zip,
  $getField,
  $setField: setField('$setField'),
  $unsetField: setField('$unsetField'),
  $objectToArray,
  $arrayToObject,
  $sortArray,
  $firstN: arrayN('$firstN'),
  $lastN: arrayN('$lastN'),
  $maxN: arrayN('$maxN'),
  $minN: arrayN('$minN'),
  $setUnion,
  $setIntersection,
  $setDifference,
  $dateDiff: longResultOf(mingoDateDiff),
  $toHashedIndexKey: longResultOf(mingoHashedIndexKey),
  $rand,
};

// ---- accumulators ----

/**
 * The typed values of an accumulator's operand over a group's documents; with no operand (mingo calls an
 * accumulator so from an expression), the values given.
 */
export function typedPush(collection: unknown[], expr: unknown, options: Options): unknown[] {
  if (isNullish(expr)) return collection.map(storedOf);
  const copts = ComputeOptions.init(options);
  return collection.map((doc) => typedValue(doc, expr, copts.update(doc)));
}

function endOfGroup(last: boolean): AccumulatorOperator {
  return (collection, expr, options) => {
    if (collection.length === 0) return undefined;
    const doc: unknown = collection[last ? collection.length - 1 : 0];
    if (isNullish(expr)) return storedOf(doc);
    return typedValue(doc, expr, ComputeOptions.init(options).update(doc));
  };
}

/** $firstN and $lastN: `n` read from the group's key, as mingo reads it. */
function endsOfGroup(last: boolean): AccumulatorOperator {
  return (collection, expr, options) => {
    if (!isPlainObject(expr)) throw badValue(`${last ? '$lastN' : '$firstN'} requires a document with input and n`);
    const copts = ComputeOptions.init(options);
    const n = Number(computeValue(copts.local.groupId, expr.n, null, copts));
    if (!(n > 0) || !Number.isInteger(n)) throw badValue(`${last ? '$lastN' : '$firstN'}: 'n' must resolve to a positive integer.`);
    const members = last ? collection.slice(Math.max(0, collection.length - n)) : collection.slice(0, n);
    return typedPush(members, expr.input, options);
  };
}

function doubles(value: unknown): unknown {
  if (typeof value === 'number') return storedDouble(value);
  return Array.isArray(value) ? value.map(doubles) : value;
}

/** A mingo accumulator whose numbers MongoDB gives as doubles. */
function doubleAccumulator(accumulator: AccumulatorOperator): AccumulatorOperator {
  return (collection, expr, options) => doubles(accumulator(collection, expr, options));
}

/**
 * The accumulators with typed results ($addToSet, $min, $max and the other ordering ones are in
 * collated-operators.ts, over typedPush): registered for mingo's $group, $bucket and $setWindowFields,
 * which put an accumulator's value straight into their output documents.
 */
export const typedAccumulators: Readonly<Record<string, AccumulatorOperator>> = {
  $sum: (collection, expr, options) => sumOf(typedPush(collection, expr, options)),
  $avg: (collection, expr, options) => averageOf(typedPush(collection, expr, options)),
  $first: endOfGroup(false),
  $last: endOfGroup(true),
  $firstN: endsOfGroup(false),
  $lastN: endsOfGroup(true),
  $push: typedPush,
  $mergeObjects: (collection, expr, options) => typedMerge(typedPush(collection, expr, options)),
  $stdDevPop: (collection, expr, options) => standardDeviation(typedPush(collection, expr, options), false),
  $stdDevSamp: (collection, expr, options) => standardDeviation(typedPush(collection, expr, options), true),
  $median: doubleAccumulator(mingoMedian),
  $percentile: doubleAccumulator(mingoPercentile),
  $covariancePop: doubleAccumulator(mingoCovariancePop),
  $covarianceSamp: doubleAccumulator(mingoCovarianceSamp),
};

/** Window operators with MongoDB's types: $shift's value as stored, rates and averages as doubles. */
export const typedWindowOperators: Readonly<Record<string, WindowOperator>> = {
  $shift: (obj, collection, expr, options) => {
    const input = expr.inputExpr as Document;
    const at = expr.documentNumber - 1 + Number(input.by);
    if (at < 0 || at > collection.length - 1) return input.default === undefined ? null : typedValue(obj, input.default, options);
    const doc: unknown = collection[at];
    return typedValue(doc, input.output, ComputeOptions.init(options).update(doc));
  },
  $derivative: (obj, collection, expr, options) => doubles(mingoDerivative(obj, collection, expr, options)),
  $integral: (obj, collection, expr, options) => doubles(mingoIntegral(obj, collection, expr, options)),
  $expMovingAvg: (obj, collection, expr, options) => doubles(mingoExpMovingAvg(obj, collection, expr, options)),
};

/**
 * The expression operators mingo calls, each answering a promoted value (mingo's operators compute with JS
 * numbers): the typed ones above (the expression forms of $firstN, $maxN... among them). An accumulator's
 * name is also called so by mingo's stages that accumulate, with the group's documents for `obj` (mingo
 * looks for an expression operator first): that answers the accumulator's typed value, which goes into an
 * output document. Where neither applies, mingo's own expression operator, else mingo's reading of an
 * accumulator in an expression (over its operand's values).
 */
export function plainExpressionOperators(accumulators: Readonly<Record<string, AccumulatorOperator>>): Record<string, ExpressionOperator> {
  const out: Record<string, ExpressionOperator> = {};
  const names = new Set([...Object.keys(TYPED_EXPRESSIONS), ...Object.keys(accumulators)]);
  for (const name of names) {
    const accumulator = accumulators[name] as AccumulatorOperator | undefined;
    const typed = TYPED_EXPRESSIONS[name] as TypedOperator | undefined;
    const builtin = getOperator(OpType.EXPRESSION, name, { useGlobalContext: true } as Options) as ExpressionOperator | null;
    out[name] = (obj, args, options) => {
      if (accumulator && Array.isArray(obj)) return accumulator(obj as unknown[], args, options);
      if (typed) return promoteNumbers(typed(obj, args, options, originalOf(args)));
      if (builtin) return builtin(obj, args, options);
      const values: unknown = plainValue(obj, args, options);
      if (!Array.isArray(values) || !accumulator) throw badValue(`arguments must resolve to array for ${name}.`);
      return promoteNumbers(accumulator(values as unknown[], null, options));
    };
  }
  return out;
}
