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
  timestamp: (v) => (v as { _bsontype?: string } | null)?._bsontype === 'Timestamp',
  decimal: (v) => (v as { _bsontype?: string } | null)?._bsontype === 'Decimal128',
  regex: (v) => v instanceof RegExp || (v as { _bsontype?: string } | null)?._bsontype === 'BSONRegExp',
};

/** What the special operators naming entities look up: a session's lsid, a saved result. */
export interface MatchContext {
  sessionLsid(id: string): unknown;
  entity(id: string): unknown;
}

function hexOf(value: unknown): string | undefined {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  const binary = value as { _bsontype?: string; buffer?: Uint8Array } | null;
  if (binary?._bsontype === 'Binary' && binary.buffer) return Buffer.from(binary.buffer).toString('hex');
  return undefined;
}

/** Returns a description of the first mismatch, or undefined when `actual` matches `expected`. */
export function match(actual: unknown, expected: unknown, root: boolean, path = '$', context?: MatchContext): string | undefined {
  if (isPlainObject(expected)) {
    const keys = Object.keys(expected);
    if (keys.length === 1 && keys[0].startsWith('$$')) {
      const op = keys[0];
      const arg = expected[op];
      switch (op) {
        case '$$unsetOrMatches':
          return actual === undefined ? undefined : match(actual, arg, root, path, context);
        case '$$exists':
          return (actual !== undefined) === Boolean(arg) ? undefined : `${path}: expected ${arg ? 'present' : 'absent'}`;
        case '$$type': {
          const types = Array.isArray(arg) ? (arg as string[]) : [String(arg)];
          return types.some((t) => TYPE_ALIASES[t]?.(actual)) ? undefined : `${path}: expected type ${types.join('|')}`;
        }
        case '$$lte':
          return isNumber(actual) && compareValues(actual, arg) <= 0 ? undefined : `${path}: expected <= ${String(arg)}`;
        case '$$sessionLsid': {
          const lsid = context?.sessionLsid(String(arg));
          if (lsid === undefined) return `${path}: no session ${String(arg)}`;
          return match(actual, lsid, false, path, context);
        }
        case '$$matchesEntity': {
          const entity = context?.entity(String(arg));
          if (entity === undefined) return `${path}: no entity ${String(arg)}`;
          return match(actual, entity, root, path, context);
        }
        case '$$matchesHexBytes':
          return hexOf(actual) === String(arg).toLowerCase() ? undefined : `${path}: expected the bytes ${String(arg)}`;
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
      return match(asObject, expected, root, path, context);
    }
    if (!isPlainObject(actual)) return `${path}: expected a document, got ${EJSON.stringify(actual)}`;
    for (const key of keys) {
      const problem = match(actual[key], expected[key], false, `${path}.${key}`, context);
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
      const problem = match(actual[i], expected[i], false, `${path}[${i}]`, context);
      if (problem) return problem;
    }
    return undefined;
  }
  if (isNumber(expected)) return isNumber(actual) && compareValues(actual, expected) === 0 ? undefined : `${path}: expected ${String(expected)}, got ${EJSON.stringify(actual)}`;
  if (actual === undefined && expected !== undefined) return `${path}: missing, expected ${EJSON.stringify(expected)}`;
  return typeRank(actual) === typeRank(expected) && compareValues(actual, expected) === 0 ? undefined : `${path}: expected ${EJSON.stringify(expected)}, got ${EJSON.stringify(actual)}`;
}

/** Operations returning an iterable of documents, whose elements match as root-level documents. */
export const ITERABLE_RESULTS = new Set(['find', 'aggregate', 'listIndexes', 'listCollections', 'listCollectionObjects', 'listDatabases', 'listDatabaseObjects', 'runCursorCommand']);

/** Matches a cursor's documents: each element is a root-level document (extra fields allowed). */
export function matchIterable(actual: unknown, expected: unknown, context?: MatchContext): string | undefined {
  if (!Array.isArray(expected) || !Array.isArray(actual)) return match(actual, expected, true, '$', context);
  if (actual.length !== expected.length) return `$: expected ${expected.length} documents, got ${actual.length}: ${EJSON.stringify(actual)}`;
  for (let i = 0; i < expected.length; i++) {
    const problem = match(actual[i], expected[i], true, `$[${i}]`, context);
    if (problem) return problem;
  }
  return undefined;
}

