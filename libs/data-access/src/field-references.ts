/**
 * The document fields a user's request reads to decide what it returns: the paths its query filters on,
 * its sort keys, the fields its aggregation stages group, match, sort or compute on, the fields an update
 * pipeline copies from. A user may only use fields it can read (see the rules' readable paths): a filter
 * or sort on a withheld field answers questions about its value though the value never comes back.
 * Paths are dotted; array indexes and positional segments (`$`, `$[]`, `$[id]`) are dropped, since field
 * rules apply alike to every element. Pure: no store, no rules.
 */
import type { Document } from '@tessera/datastore';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  if ((value as { _bsontype?: unknown })._bsontype !== undefined || value instanceof Date || value instanceof RegExp) return false;
  return true;
}

function join(prefix: string, key: string): string {
  return prefix ? `${prefix}.${key}` : key;
}

/** The path without array indexes and positional segments. */
export function normalizePath(path: string): string {
  return path
    .split('.')
    .filter((segment) => segment !== '' && !/^\d+$/.test(segment) && !segment.startsWith('$'))
    .join('.');
}

const LOGICAL = new Set(['$and', '$or', '$nor']);

/** Paths a query filter reads (`prefix` for the elements of an `$elemMatch`). */
export function queryPaths(query: unknown, prefix = '', out: string[] = []): string[] {
  if (!isPlainObject(query)) return out;
  for (const [key, value] of Object.entries(query)) {
    if (LOGICAL.has(key)) {
      if (Array.isArray(value)) for (const clause of value) queryPaths(clause, prefix, out);
      continue;
    }
    if (key === '$expr') {
      expressionPaths(value, out);
      continue;
    }
    if (key.startsWith('$')) continue; // $comment, and the selectors users may not send at all
    conditionPaths(join(prefix, key), value, out);
  }
  return out;
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}

function conditionPaths(path: string, condition: unknown, out: string[]): void {
  if (!isOperatorObject(condition)) {
    out.push(path); // equality, with a whole embedded document or array as the value too
    return;
  }
  for (const [operator, operand] of Object.entries(condition)) {
    switch (operator) {
      case '$elemMatch':
        if (isOperatorObject(operand)) conditionPaths(path, operand, out);
        else queryPaths(operand, path, out);
        break;
      case '$not':
        conditionPaths(path, operand, out);
        break;
      case '$all':
        out.push(path);
        if (Array.isArray(operand)) for (const item of operand) if (isPlainObject(item) && item['$elemMatch'] !== undefined) queryPaths(item['$elemMatch'], path, out);
        break;
      case '$options':
        break;
      default:
        out.push(path);
    }
  }
}

/** Sort keys (a `{$meta: ...}` key sorts on no field). */
export function sortPaths(sort: unknown, out: string[] = []): string[] {
  if (!isPlainObject(sort)) return out;
  for (const [key, direction] of Object.entries(sort)) if (!isPlainObject(direction)) out.push(key);
  return out;
}

/** Paths a find projection selects on: `$elemMatch` conditions choose which element comes back. */
export function projectionPaths(projection: unknown, out: string[] = []): string[] {
  if (!isPlainObject(projection)) return out;
  for (const [key, value] of Object.entries(projection)) {
    if (isPlainObject(value) && value['$elemMatch'] !== undefined) queryPaths(value['$elemMatch'], key, out);
  }
  return out;
}

/** Field paths an aggregation expression reads (`"$a.b"`, `"$$ROOT.a"`, `"$$CURRENT.a"`). */
export function expressionPaths(expression: unknown, out: string[] = []): string[] {
  if (typeof expression === 'string') {
    if (expression.startsWith('$$ROOT.') || expression.startsWith('$$CURRENT.')) out.push(expression.slice(expression.indexOf('.') + 1));
    else if (expression.startsWith('$') && !expression.startsWith('$$') && expression.length > 1) out.push(expression.slice(1));
    return out;
  }
  if (Array.isArray(expression)) {
    for (const item of expression) expressionPaths(item, out);
    return out;
  }
  if (!isPlainObject(expression)) return out;
  for (const [key, value] of Object.entries(expression)) {
    if (key === '$literal') continue;
    // $top, $bottom, $topN, $bottomN and $sortArray name their sort keys as fields.
    if (key === 'sortBy' && isPlainObject(value)) {
      sortPaths(value, out);
      continue;
    }
    expressionPaths(value, out);
  }
  return out;
}

/** Names a projection-like stage computes (not plain inclusions or exclusions). */
function computedNames(spec: unknown): string[] {
  if (!isPlainObject(spec)) return [];
  return Object.entries(spec)
    .filter(([, value]) => !(value === 0 || value === 1 || value === true || value === false))
    .map(([key]) => key);
}

/**
 * Paths an aggregation pipeline reads from the stored documents. Stages after one that reshapes the
 * documents ($group, $replaceRoot, ...) read computed values only; fields a stage computes ($addFields,
 * $project) are not stored fields either.
 */
export function pipelinePaths(pipeline: unknown[], out: string[] = []): string[] {
  const computed = new Set<string>();
  const stored = (paths: string[]): void => {
    for (const path of paths) if (!computed.has(path.split('.')[0])) out.push(path);
  };
  for (const stage of pipeline) {
    if (!isPlainObject(stage)) continue;
    const [name] = Object.keys(stage);
    const spec = stage[name];
    switch (name) {
      case '$match':
        stored(queryPaths(spec));
        break;
      case '$sort':
        stored(sortPaths(spec));
        break;
      case '$project':
      case '$addFields':
      case '$set':
        if (isPlainObject(spec)) for (const key of computedNames(spec)) stored(expressionPaths(spec[key]));
        for (const key of name === '$project' ? computedNames(spec) : isPlainObject(spec) ? Object.keys(spec) : []) computed.add(key.split('.')[0]);
        break;
      case '$unset':
      case '$limit':
      case '$skip':
      case '$sample':
        break;
      case '$unwind':
        stored(expressionPaths(isPlainObject(spec) ? spec['path'] : spec));
        break;
      case '$setWindowFields':
        if (isPlainObject(spec)) {
          stored(expressionPaths(spec['partitionBy']));
          stored(sortPaths(spec['sortBy']));
          stored(expressionPaths(spec['output']));
          if (isPlainObject(spec['output'])) for (const key of Object.keys(spec['output'])) computed.add(key.split('.')[0]);
        }
        break;
      case '$facet':
        if (isPlainObject(spec)) for (const inner of Object.values(spec)) if (Array.isArray(inner)) stored(pipelinePaths(inner));
        return out;
      case '$group':
      case '$bucket':
      case '$bucketAuto':
      case '$sortByCount':
      case '$replaceRoot':
      case '$replaceWith':
      case '$count':
        // What the stage reads, then nothing after it reads a stored document.
        stored(expressionPaths(spec));
        return out;
      default:
        stored(expressionPaths(spec));
    }
  }
  return out;
}

/** Paths the array filters of an update read, through the update paths that use their identifiers. */
export function arrayFilterPaths(arrayFilters: unknown[] | undefined, update: unknown, out: string[] = []): string[] {
  if (!arrayFilters || !isPlainObject(update)) return out;
  const targets: string[] = [];
  for (const fields of Object.values(update)) if (isPlainObject(fields)) targets.push(...Object.keys(fields));
  for (const filter of arrayFilters) {
    if (!isPlainObject(filter)) continue;
    for (const [key, condition] of Object.entries(filter)) {
      const [identifier, ...rest] = key.split('.');
      for (const target of targets) {
        const at = target.indexOf(`$[${identifier}]`);
        if (at < 0) continue;
        const element = target.slice(0, at + identifier.length + 3);
        conditionPaths(rest.length ? `${element}.${rest.join('.')}` : element, condition, out);
      }
    }
  }
  return out;
}

/** Paths an update reads from the stored document: a pipeline update copies values from fields. */
export function updatePaths(update: Document | Document[]): string[] {
  return Array.isArray(update) ? pipelinePaths(update) : [];
}
