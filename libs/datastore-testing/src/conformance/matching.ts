/**
 * The unified test format's matching rules: numbers equal by value whatever their type, extra fields
 * allowed in root-level documents only, and the special operators ($$exists, $$type, $$unsetOrMatches,
 * $$lte) the CRUD tests use.
 */
import { EJSON } from 'bson';
import { compareValues, type Document, isPlainObject, typeRank } from '@tessera/datastore';

function isNumber(value: unknown): boolean {
  return typeRank(value) === 2;
}

const TYPE_ALIASES: Record<string, (v: unknown) => boolean> = {
  int: (v) => typeof v === 'number' && Number.isInteger(v),
  long: (v) => (typeof v === 'number' && Number.isInteger(v)) || (v as { _bsontype?: string } | null)?._bsontype === 'Long',
  double: (v) => typeof v === 'number',
  string: (v) => typeof v === 'string',
  object: (v) => isPlainObject(v),
  array: (v) => Array.isArray(v),
  bool: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  date: (v) => v instanceof Date,
  objectId: (v) => (v as { _bsontype?: string } | null)?._bsontype === 'ObjectId',
  binData: (v) => (v as { _bsontype?: string } | null)?._bsontype === 'Binary',
};

/** Returns a description of the first mismatch, or undefined when `actual` matches `expected`. */
export function match(actual: unknown, expected: unknown, root: boolean, path = '$'): string | undefined {
  if (isPlainObject(expected)) {
    const keys = Object.keys(expected);
    if (keys.length === 1 && keys[0].startsWith('$$')) {
      const op = keys[0];
      const arg = expected[op];
      switch (op) {
        case '$$unsetOrMatches':
          return actual === undefined ? undefined : match(actual, arg, root, path);
        case '$$exists':
          return (actual !== undefined) === Boolean(arg) ? undefined : `${path}: expected ${arg ? 'present' : 'absent'}`;
        case '$$type': {
          const types = Array.isArray(arg) ? (arg as string[]) : [String(arg)];
          return types.some((t) => TYPE_ALIASES[t]?.(actual)) ? undefined : `${path}: expected type ${types.join('|')}`;
        }
        case '$$lte':
          return isNumber(actual) && compareValues(actual, arg) <= 0 ? undefined : `${path}: expected <= ${String(arg)}`;
        default:
          return `${path}: unsupported special operator ${op}`;
      }
    }
    if (Array.isArray(actual) && keys.every((k) => /^\d+$/.test(k))) {
      // Drivers report insertedIds as {index: id}; the data-access API as an array.
      const asObject: Document = {};
      (actual as unknown[]).forEach((v, i) => {
        asObject[String(i)] = v;
      });
      return match(asObject, expected, root, path);
    }
    if (!isPlainObject(actual)) return `${path}: expected a document, got ${EJSON.stringify(actual)}`;
    for (const key of keys) {
      const problem = match(actual[key], expected[key], false, `${path}.${key}`);
      if (problem) return problem;
    }
    if (!root) {
      const extra = Object.keys(actual).filter((k) => !(k in expected));
      if (extra.length) return `${path}: unexpected fields ${extra.join(', ')}`;
    }
    return undefined;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${EJSON.stringify(actual)}`;
    if (actual.length !== expected.length) return `${path}: expected ${expected.length} elements, got ${actual.length}: ${EJSON.stringify(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const problem = match(actual[i], expected[i], false, `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (isNumber(expected)) return isNumber(actual) && compareValues(actual, expected) === 0 ? undefined : `${path}: expected ${String(expected)}, got ${EJSON.stringify(actual)}`;
  if (actual === undefined && expected !== undefined) return `${path}: missing, expected ${EJSON.stringify(expected)}`;
  return typeRank(actual) === typeRank(expected) && compareValues(actual, expected) === 0 ? undefined : `${path}: expected ${EJSON.stringify(expected)}, got ${EJSON.stringify(actual)}`;
}

/** Operations returning an iterable of documents, whose elements match as root-level documents. */
export const ITERABLE_RESULTS = new Set(['find', 'aggregate']);

/** Matches a cursor's documents: each element is a root-level document (extra fields allowed). */
export function matchIterable(actual: unknown, expected: unknown): string | undefined {
  if (!Array.isArray(expected) || !Array.isArray(actual)) return match(actual, expected, true);
  if (actual.length !== expected.length) return `$: expected ${expected.length} documents, got ${actual.length}: ${EJSON.stringify(actual)}`;
  for (let i = 0; i < expected.length; i++) {
    const problem = match(actual[i], expected[i], true, `$[${i}]`);
    if (problem) return problem;
  }
  return undefined;
}

