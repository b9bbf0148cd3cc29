/**
 * Filters: evaluated once per request before any document is read. Each applying filter's query is ANDed
 * into the request query (top-level `$and`) and its projection merged into the request projection; a
 * mix of inclusive and exclusive projections fails the query. Filters see no document expansions.
 */
import { RulesError, RulesErrorCode } from '../errors/rules.error';
import { type CompiledExpression, compileExpression, compileValue, type Node } from '../expressions/compile';
import { type EvaluationContext } from '../expressions/context';
import { type DecisionTrace } from '../explain/trace';
import { type FilterConfig } from '../roles/rule-config';
import { type Evaluator } from '../roles/steps';

export type MongoQuery = Record<string, unknown>;
export type MongoProjection = Record<string, unknown>;

export interface CompiledFilter {
  readonly name: string;
  readonly label: string;
  readonly applyWhen: CompiledExpression;
  readonly applyWhenLabel: string;
  readonly query: Node<unknown>;
  readonly projection: MongoProjection;
  readonly async: boolean;
}

const NAME_LIMIT = 100;

export function compileFilter(source: FilterConfig, index: number): CompiledFilter {
  const where = `filters[${index}]`;
  if (typeof source !== 'object' || source === null) throw new RulesError(RulesErrorCode.InvalidRule, `${where}: a filter is an object`);
  if (typeof source.name !== 'string' || source.name.length === 0 || source.name.length > NAME_LIMIT) {
    throw new RulesError(RulesErrorCode.InvalidRule, `${where}: a filter needs a name of 1 to ${NAME_LIMIT} characters`);
  }
  const label = `${where}(${source.name})`;
  const query = source.query ?? {};
  const projection = source.projection ?? {};
  if (typeof query !== 'object' || query === null || Array.isArray(query)) throw new RulesError(RulesErrorCode.InvalidRule, `${label}.query: must be an object`);
  if (typeof projection !== 'object' || projection === null || Array.isArray(projection)) {
    throw new RulesError(RulesErrorCode.InvalidRule, `${label}.projection: must be an object`);
  }
  try {
    const applyWhen = compileExpression(source.apply_when ?? {}, { kind: 'filter' });
    const compiledQuery = compileValue(query, { kind: 'filter' }).node;
    projectionMode(projection, `${label}.projection`);
    return { name: source.name, label, applyWhen, applyWhenLabel: `${label}.apply_when`, query: compiledQuery, projection, async: applyWhen.async || compiledQuery.async };
  } catch (error) {
    if (error instanceof RulesError && error.errorCode === RulesErrorCode.InvalidExpression) {
      throw new RulesError(RulesErrorCode.InvalidRule, `${label}: ${error.message}`, error.reason, { cause: error });
    }
    throw error;
  }
}

type ProjectionMode = 'inclusive' | 'exclusive' | 'empty';

/** Inclusive (`{a:1}`), exclusive (`{a:0}`) or empty; `_id` alone may go either way. */
export function projectionMode(projection: MongoProjection, where = 'projection'): ProjectionMode {
  let mode: ProjectionMode = 'empty';
  let idMode: ProjectionMode = 'empty';
  for (const [key, value] of Object.entries(projection)) {
    const include = value === 1 || value === true || (typeof value === 'object' && value !== null);
    const exclude = value === 0 || value === false;
    if (!include && !exclude) throw new RulesError(RulesErrorCode.InvalidRule, `${where}.${key}: a projection value is 0 or 1`);
    const fieldMode: ProjectionMode = include ? 'inclusive' : 'exclusive';
    if (key === '_id') {
      idMode = fieldMode;
      continue;
    }
    if (mode !== 'empty' && mode !== fieldMode) {
      throw new RulesError(RulesErrorCode.FilterProjectionConflict, `${where}: a projection cannot both include and exclude fields`);
    }
    mode = fieldMode;
  }
  return mode === 'empty' ? idMode : mode;
}

export interface AppliedFilters {
  /** The filter queries that apply, in order (already expanded). */
  queries: MongoQuery[];
  /** The merged projection of the applying filters (empty object when none projects). */
  projection: MongoProjection;
  names: string[];
}

export function applyFilterSet(
  ev: Evaluator,
  filters: readonly CompiledFilter[],
  ctx: EvaluationContext,
  trace: DecisionTrace | undefined,
): AppliedFilters {
  const queries: MongoQuery[] = [];
  const names: string[] = [];
  let projection: MongoProjection = {};
  let mode: ProjectionMode = 'empty';
  for (const filter of filters) {
    if (!ev.bool(filter.applyWhen, ctx, trace, filter.applyWhenLabel)) continue;
    names.push(filter.name);
    const node = filter.query;
    const query = ev.value(node, ctx) as MongoQuery;
    if (Object.keys(query).length > 0) queries.push(query);
    const filterMode = projectionMode(filter.projection, `${filter.label}.projection`);
    if (filterMode !== 'empty') {
      if (mode !== 'empty' && mode !== filterMode && !onlyId(filter.projection) && !onlyId(projection)) {
        throw new RulesError(
          RulesErrorCode.FilterProjectionConflict,
          'the applying filters mix inclusive and exclusive projections',
          `filters ${names.join(', ')} mix inclusive and exclusive projections`,
        );
      }
      if (mode === 'empty' || !onlyId(filter.projection)) mode = filterMode;
      projection = { ...projection, ...filter.projection };
    }
  }
  if (trace) trace.appliedFilters = names;
  return { queries, projection, names };
}

function onlyId(projection: MongoProjection): boolean {
  const keys = Object.keys(projection);
  return keys.length === 1 && keys[0] === '_id';
}

/** ANDs queries with a top-level `$and`, dropping empty ones: `{}` and one query stay as they are. */
export function andQueries(queries: readonly MongoQuery[]): MongoQuery {
  const parts = queries.filter((q) => Object.keys(q).length > 0);
  if (parts.length === 0) return {};
  if (parts.length === 1) return parts[0];
  return { $and: parts };
}

/** Merges the filters' projection into the request projection; a mix of modes fails the query. */
export function mergeProjections(request: MongoProjection | undefined, filters: MongoProjection): MongoProjection {
  const requested = request ?? {};
  const a = projectionMode(requested, 'request projection');
  const b = projectionMode(filters);
  if (a !== 'empty' && b !== 'empty' && a !== b && !onlyId(requested) && !onlyId(filters)) {
    throw new RulesError(RulesErrorCode.FilterProjectionConflict, 'the filters and the request mix inclusive and exclusive projections');
  }
  return { ...requested, ...filters };
}
