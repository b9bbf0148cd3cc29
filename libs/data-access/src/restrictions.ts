import type { RulesAccess } from '@tessera/rules';
import { DataAccessError, DataAccessErrorCode } from './data-access.error';
import { normalizePath } from './field-references';

/**
 * Spec 4.4 rule 1: evaluation, geospatial and bitwise selectors only in system functions. Stages that read
 * or write other collections would bypass the rules of those collections, so users may not run them.
 * `$regex` is not among them: SDK clients search with it (realm-web's `find({f: {$regex: ..}})`), and a
 * regex reaches this check as a BSON regex value, which no key test could tell from `{f: /x/}` anyway.
 */
const restrictedSelectors = new Set([
  // evaluation
  '$expr',
  '$jsonSchema',
  '$mod',
  '$text',
  '$where',
  '$function',
  '$accumulator',
  // geospatial
  '$geoIntersects',
  '$geoWithin',
  '$near',
  '$nearSphere',
  '$box',
  '$center',
  '$centerSphere',
  '$geometry',
  '$polygon',
  // bitwise
  '$bitsAllClear',
  '$bitsAllSet',
  '$bitsAnyClear',
  '$bitsAnySet',
]);

const restrictedStages = new Set(['$lookup', '$graphLookup', '$unionWith', '$out', '$merge', '$search', '$searchMeta', '$geoNear', '$currentOp', '$listSessions', '$collStats', '$indexStats', '$planCacheStats']);

function walk(value: unknown, visit: (key: string) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, visit);
    return;
  }
  if (value === null || typeof value !== 'object' || (value as { _bsontype?: unknown })._bsontype !== undefined || value instanceof Date) return;
  for (const [key, inner] of Object.entries(value)) {
    visit(key);
    walk(inner, visit);
  }
}

/**
 * Patterns users may send. The embedded engine runs a query regex on V8's backtracking engine (MongoDB's PCRE
 * semantics need lookarounds and the `u` flag, which its linear-time engine lacks), so a pattern that can
 * backtrack exponentially would hold the event loop, and with it every app of the process. Users may not
 * send the two shapes that do: a quantified group that holds an unbounded quantifier (`(a+)+`, `(\w*)*`),
 * and a backreference (`\1`, `\k<name>`, `(?P=name)`); nor a pattern longer than MAX_USER_PATTERN.
 * System functions are trusted with any pattern.
 */
const MAX_USER_PATTERN = 4_096;

function refuseRegex(where: string, why: string): never {
  throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `${why} in a regular expression is not allowed in ${where} outside a system function`);
}

/** True when a quantifier starts at `pattern[i]` and can repeat without bound (`*`, `+`, `{n,}`, `{n,m}` with m > 1). */
function unboundedQuantifierAt(pattern: string, i: number): boolean {
  const c = pattern[i];
  if (c === '*' || c === '+') return true;
  if (c !== '{') return false;
  const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
  if (!match) return false;
  if (match[2] === undefined) return false;
  return match[3] === '' || Number(match[3]) > 1;
}

function assertUserPattern(pattern: string, where: string): void {
  if (pattern.length > MAX_USER_PATTERN) refuseRegex(where, `a pattern longer than ${MAX_USER_PATTERN} characters`);
  // One flag per open group: whether it holds an unbounded quantifier so far.
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || next === 'k')) refuseRegex(where, 'a backreference');
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (pattern[i + 1] === ']') i++;
      continue;
    }
    if (c === '(') {
      if (pattern.startsWith('(?P=', i)) refuseRegex(where, 'a backreference');
      groups.push(false);
      continue;
    }
    if (c === ')') {
      const heldQuantifier = groups.pop() ?? false;
      if (heldQuantifier && unboundedQuantifierAt(pattern, i + 1)) refuseRegex(where, 'a repeated group that holds a repetition');
      if (groups.length > 0 && (heldQuantifier || unboundedQuantifierAt(pattern, i + 1))) groups[groups.length - 1] = true;
      continue;
    }
    if (groups.length > 0 && unboundedQuantifierAt(pattern, i)) groups[groups.length - 1] = true;
  }
}

/** The patterns of every regex in a query: regex values, `{$regex: <string>}`. */
function visitPatterns(value: unknown, visit: (pattern: string) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) visitPatterns(item, visit);
    return;
  }
  if (value instanceof RegExp) return visit(value.source);
  if (value === null || typeof value !== 'object') return;
  const bsonType = (value as { _bsontype?: unknown })._bsontype;
  if (bsonType === 'BSONRegExp') return visit(String((value as { pattern: unknown }).pattern));
  if (bsonType !== undefined || value instanceof Date) return;
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$regex' && typeof inner === 'string') visit(inner);
    else visitPatterns(inner, visit);
  }
}

/** Throws when a user's query uses a selector reserved for system functions, or a regex users may not send. */
export function assertUserQuery(query: unknown, where: string): void {
  walk(query, (key) => {
    if (restrictedSelectors.has(key)) {
      throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `${key} is not allowed in ${where} outside a system function`);
    }
  });
  visitPatterns(query, (pattern) => assertUserPattern(pattern, where));
}

/**
 * Throws when a user's pipeline has a stage or selector reserved for system functions, at any depth: a
 * `$lookup` or `$out` inside `$facet` reaches other collections as surely as one at the top.
 */
export function assertUserPipeline(pipeline: unknown[]): void {
  for (const stage of pipeline) {
    if (stage === null || typeof stage !== 'object') continue;
    walk(stage, (name) => {
      if (restrictedStages.has(name)) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `aggregation stage ${name} is only allowed in a system function`);
    });
    assertUserQuery(stage, 'an aggregation pipeline');
  }
}

/**
 * Refuses a user's request that filters, sorts, groups or computes on a field the user may not read in
 * every document it can see: its answers would reveal the withheld value, though the value itself never
 * comes back (docs/decisions/0014-rules-withheld-fields-in-queries.md).
 */
export function assertReadablePaths(access: Pick<RulesAccess, 'canReadPath'>, paths: readonly string[], where: string): void {
  for (const path of paths) {
    const field = normalizePath(path);
    if (field === '' || access.canReadPath(field)) continue;
    throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `field '${field}' cannot be used in ${where}: the user does not have read permission for it`);
  }
}
