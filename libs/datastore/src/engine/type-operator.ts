/**
 * The `$type` query operator over stored values. It reads the document as stored (see originalOf in
 * bson/values.ts), not mingo's promoted copy, so a Double holding 1 is a double, a Long a long, and a
 * JS number an int or a double as bson writes it; regex values of either form are regexes.
 */
import { DatastoreError } from '../api/datastore.error';
import { collectPathValues, isInt32Number, isPlainObject, originalOf } from '../bson/values';

/** MongoDB's type aliases and their codes; `number` stands for the four numeric types. */
const TYPE_CODES: Readonly<Record<string, number>> = {
  double: 1,
  string: 2,
  object: 3,
  array: 4,
  binData: 5,
  undefined: 6,
  objectId: 7,
  bool: 8,
  date: 9,
  null: 10,
  regex: 11,
  dbPointer: 12,
  javascript: 13,
  symbol: 14,
  javascriptWithScope: 15,
  int: 16,
  timestamp: 17,
  long: 18,
  decimal: 19,
  minKey: -1,
  maxKey: 127,
};
const NUMBER = 'number';
const NUMERIC_CODES = new Set([1, 16, 18, 19]);
const VALID_CODES = new Set(Object.values(TYPE_CODES));

const TAG_CODES: Readonly<Record<string, number>> = {
  Double: 1,
  Int32: 16,
  Long: 18,
  Decimal128: 19,
  ObjectId: 7,
  Binary: 5,
  Timestamp: 17,
  BSONRegExp: 11,
  BSONSymbol: 14,
  MinKey: -1,
  MaxKey: 127,
  DBRef: 3,
};

/** The BSON type code of a stored value (undefined for a missing one). */
export function bsonTypeCode(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (value === null) return 10;
  switch (typeof value) {
    case 'number':
      return isInt32Number(value) ? 16 : 1;
    case 'bigint':
      return 18;
    case 'string':
      return 2;
    case 'boolean':
      return 8;
    case 'function':
    case 'symbol':
    case 'undefined':
      return undefined;
    case 'object':
      break;
  }
  if (Array.isArray(value)) return 4;
  if (value instanceof Date) return 9;
  if (value instanceof RegExp) return 11;
  if (isPlainObject(value)) return 3;
  const tag = (value as { _bsontype?: unknown })._bsontype;
  if (tag === 'Code') return (value as { scope?: unknown }).scope ? 15 : 13;
  return typeof tag === 'string' ? TAG_CODES[tag] : undefined;
}

/** The codes a `$type` argument names (NUMBER for the alias `number`); MongoDB's errors for bad ones. */
function typeCodes(argument: unknown): Array<number | typeof NUMBER> {
  const list = Array.isArray(argument) ? (argument as unknown[]) : [argument];
  if (list.length === 0) throw new DatastoreError('FailedToParse', '$type must match at least one type');
  return list.map((item) => {
    if (typeof item === 'string') {
      if (item === NUMBER) return NUMBER;
      const code = TYPE_CODES[item];
      if (code === undefined) throw new DatastoreError('BadValue', `Unknown type name alias: ${item}`);
      return code;
    }
    if (typeof item === 'number') {
      if (!Number.isInteger(item) || !VALID_CODES.has(item)) throw new DatastoreError('BadValue', `Invalid numerical type code: ${item}`);
      return item;
    }
    throw new DatastoreError('TypeMismatch', 'type must be represented as a number or a string');
  });
}

function matchesCode(code: number | undefined, wanted: Array<number | typeof NUMBER>): boolean {
  if (code === undefined) return false;
  return wanted.some((w) => (w === NUMBER ? NUMERIC_CODES.has(code) : w === code));
}

/** `{field: {$type: ...}}`: an array matches by itself (`array`) or by any element, as MongoDB does. */
export function typeOperator(selector: string, argument: unknown): (doc: unknown) => boolean {
  const wanted = typeCodes(argument);
  const parts = selector.split('.');
  return (doc) => {
    for (const value of collectPathValues(originalOf(doc), parts)) {
      if (matchesCode(bsonTypeCode(value), wanted)) return true;
      if (Array.isArray(value) && value.some((item) => matchesCode(bsonTypeCode(item), wanted))) return true;
    }
    return false;
  };
}

const ALIASES: ReadonlyMap<number, string> = new Map(Object.entries(TYPE_CODES).map(([alias, code]) => [code, alias]));

/**
 * The aggregation expression `{$type: <expression>}`: a field path is read from the document as stored,
 * so a stored Double holding 1 is "double" and a Long "long"; other expressions are computed by mingo.
 */
export function typeExpression<O>(compute: (obj: unknown, expr: unknown, options: O) => unknown): (obj: unknown, expr: unknown, options: O) => string {
  return (obj, expr, options) => {
    const argument = Array.isArray(expr) && expr.length === 1 ? (expr[0] as unknown) : expr;
    const path = typeof argument === 'string' && argument.startsWith('$') && !argument.startsWith('$$') ? argument.slice(1) : undefined;
    const value = path !== undefined ? fieldValue(originalOf(obj), path.split('.')) : compute(obj, argument, options);
    const code = bsonTypeCode(value);
    return code === undefined ? 'missing' : (ALIASES.get(code) ?? 'object');
  };
}

/** A field path's value as an expression reads it: through arrays, each element's value in an array. */
function fieldValue(doc: unknown, parts: readonly string[]): unknown {
  let current: unknown = doc;
  for (let i = 0; i < parts.length; i++) {
    if (Array.isArray(current)) return current.map((item) => fieldValue(item, parts.slice(i))).filter((v) => v !== undefined);
    if (!isPlainObject(current)) return undefined;
    current = current[parts[i]];
  }
  return current;
}
