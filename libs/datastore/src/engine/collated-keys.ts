/**
 * Keys for grouping values by equality in BSON order, strings by the active comparison (the collation's when
 * one runs, else binary): shared by the operators that deduplicate or group values ($addToSet, the set
 * expressions, $bucketAuto). Pure functions of values; they must run inside the comparison they group by.
 */
import { collationActive, compareValues, idKey, isPlainObject } from '../bson/values';

/**
 * Strings the collation calls equal mapped to one of them (the first met), at any depth of a value: two
 * values are equal under the collation exactly when their canonical forms are equal in binary order, so
 * maps keyed by `idKey` of the canonical form group by the collation. The representatives are kept in the
 * collation's order and searched by bisection (ICU gives no sort keys here, so no hash can group them): a
 * string new to the operation costs a logarithmic number of comparisons. Without a collation, the identity.
 */
export function collatedKeys(): (value: unknown) => unknown {
  if (!collationActive()) return (value) => value;
  const seen = new Map<string, string>();
  const representatives: string[] = [];
  const canonical = (value: unknown): unknown => {
    if (typeof value === 'string') {
      let found = seen.get(value);
      if (found === undefined) {
        let low = 0;
        let high = representatives.length;
        while (low < high) {
          const middle = (low + high) >>> 1;
          const order = compareValues(representatives[middle], value);
          if (order === 0) {
            found = representatives[middle];
            break;
          }
          if (order < 0) low = middle + 1;
          else high = middle;
        }
        if (found === undefined) {
          found = value;
          representatives.splice(low, 0, value);
        }
        seen.set(value, found);
      }
      return found;
    }
    if (Array.isArray(value)) return value.map(canonical);
    if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonical(v)]));
    return value;
  };
  return canonical;
}

/**
 * A Map key equal for two values exactly when they are equal in BSON order: a JS number as itself (0 and -0,
 * NaN and NaN are one key, as in BSON), likewise booleans and null (missing too), other values as `idKey`'s
 * string. Cheaper than `idKey` for the numbers most keys are.
 */
export function mapKey(value: unknown): unknown {
  switch (typeof value) {
    case 'number':
    case 'boolean':
      return value;
    case 'string':
      return `s${value}`;
    case 'undefined':
      return null;
    case 'bigint':
    case 'function':
    case 'object':
    case 'symbol': {
      if (value === null) return null;
      const key = idKey(value);
      // A BSON number that is not a JS number (Int32, Double, a Long that fits) keys as the JS number would.
      return key.charCodeAt(0) === 110 ? Number(key.slice(1)) : key;
    }
  }
}

/** A map key equal for two values exactly when the active comparison calls them equal (one canonicalizer per use). */
export function collatedKeyOf(): (value: unknown) => unknown {
  if (!collationActive()) return mapKey;
  const canonical = collatedKeys();
  return (value) => mapKey(canonical(value));
}

/** The values, each once by the collation (the first met of equal ones), in order. */
export function uniqueValues(values: unknown[], keyOf = collatedKeyOf()): unknown[] {
  const seen = new Set<unknown>();
  const out: unknown[] = [];
  for (const value of values) {
    const key = keyOf(value);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(value);
  }
  return out;
}
