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

/** Throws when a user's query uses a selector reserved for system functions. */
export function assertUserQuery(query: unknown, where: string): void {
  walk(query, (key) => {
    if (restrictedSelectors.has(key)) {
      throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `${key} is not allowed in ${where} outside a system function`);
    }
  });
}

/** Throws when a user's pipeline has a stage or selector reserved for system functions. */
export function assertUserPipeline(pipeline: unknown[]): void {
  for (const stage of pipeline) {
    if (stage === null || typeof stage !== 'object') continue;
    for (const name of Object.keys(stage)) {
      if (restrictedStages.has(name)) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `aggregation stage ${name} is only allowed in a system function`);
    }
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
