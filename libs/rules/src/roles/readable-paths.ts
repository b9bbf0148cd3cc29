/**
 * Which document fields a request may read in EVERY document it can see, decided from the request alone
 * (no document). The data-access layer refuses a query that filters, sorts, groups or projects on a
 * field outside this set: otherwise the query itself is an oracle for the withheld value (a `count`
 * with `{secret: {$gte: …}}` answers one bit per call), though the value never comes back.
 *
 * The answer is conservative. Roles are chosen per document and field permissions may read the
 * document, so a field can be readable in some documents and withheld in others; a path counts as
 * readable only when every role that may apply lets the user read it whatever the document holds. A
 * role whose documents are all hidden to the user does not count against a path (filtering on hidden
 * documents reveals nothing: they never match a user's query). Anything undecidable without the
 * document (`%%root` in a field permission, `%function`) counts as withheld. See
 * docs/decisions/0014-rules-withheld-fields-in-queries.md. Pure: no store, no transport.
 */
import { type CompiledExpression, usesDocument } from '../expressions/compile';
import { type EvaluationContext } from '../expressions/context';
import { type CompiledFieldRule, type CompiledRole } from './compiled-role';
import { type ApplyWhenCache, documentFiltersAllowRead } from './flows';
import { syncEvaluator } from './steps';

/** true / false when the request alone decides the expression, 'open' when it depends on the document. */
type Settled = boolean | 'open';

function settle(expression: CompiledExpression | undefined, ctx: EvaluationContext): Settled | undefined {
  if (!expression) return undefined;
  if (expression.async || usesDocument(expression.info) || expression.info.expansions.has('this') || expression.info.expansions.has('prev')) return 'open';
  return syncEvaluator.bool(expression, ctx, undefined, '');
}

/** How a role that may apply exposes a document: not at all, whole, or field by field. */
type RoleView = { kind: 'whole' } | { kind: 'fields'; role: CompiledRole };

function viewOf(role: CompiledRole, ctx: EvaluationContext): RoleView | undefined {
  // Document filters only ever hide a document: hidden documents do not constrain the paths.
  const filters = role.documentFilters;
  if (filters && !role.async && ![filters.read, filters.write].some((f) => f && (f.async || usesDocument(f.info)))) {
    if (!documentFiltersAllowRead(syncEvaluator, role, ctx, undefined)) return undefined;
  }
  const read = settle(role.read, ctx);
  // With `read` defined the read flow ends at document level (readAs in flows.ts): the whole document
  // when read or write holds, hidden otherwise. Field rules are only reached with `read` undefined.
  if (read !== undefined) return read === false && settle(role.write, ctx) === false ? undefined : { kind: 'whole' };
  const write = settle(role.write, ctx);
  if (write === true) return { kind: 'whole' };
  if (!role.hasFieldRules) return undefined;
  return { kind: 'fields', role };
}

function isIndex(segment: string): boolean {
  return /^\d+$/.test(segment);
}

/** Whether a field rule lets the user read the field whatever the document holds. */
function ruleReadable(rule: CompiledFieldRule, ctx: EvaluationContext): boolean {
  if (rule.constantRead !== undefined) return rule.constantRead;
  return settle(rule.read, ctx) === true || settle(rule.write, ctx) === true;
}

function fieldPathReadable(segments: readonly string[], rules: ReadonlyMap<string, CompiledFieldRule> | undefined, additional: CompiledFieldRule | undefined, ctx: EvaluationContext): boolean {
  if (segments.length === 0) return false; // the embedded document as a whole: some of it may be withheld
  const [head, ...rest] = segments;
  const rule = rules?.get(head) ?? additional;
  if (!rule) {
    // An array index inside an embedded document whose elements carry the rules.
    return additional === undefined && isIndex(head) && rules !== undefined && rest.length > 0 && fieldPathReadable(rest, rules, undefined, ctx);
  }
  if (rule.explicit) return ruleReadable(rule, ctx);
  if (!rule.fields) return false;
  const inner = rest.length > 0 && isIndex(rest[0]) && !rule.fields.has(rest[0]) ? rest.slice(1) : rest;
  return fieldPathReadable(inner, rule.fields, undefined, ctx);
}

export interface PathReadability {
  /** Whether the user may read `path` (dotted) in every document it can see. */
  readable(path: string): boolean;
}

/** Builds the request's path check. `ctx` is the request's context without a document. */
export function pathReadability(roles: readonly CompiledRole[], ctx: EvaluationContext, cache: ApplyWhenCache): PathReadability {
  const views: RoleView[] = [];
  for (const role of roles) {
    let last = false;
    if (role.applyWhenIsDocumentIndependent && !role.applyWhen.async) {
      let applies = cache[role.index];
      if (applies === undefined) cache[role.index] = applies = syncEvaluator.bool(role.applyWhen, ctx, undefined, role.labels.applyWhen);
      if (!applies) continue;
      last = true; // it applies to every document: later roles never do
    }
    const view = viewOf(role, ctx);
    if (view) views.push(view);
    if (last) break;
  }
  const seen = new Map<string, boolean>();
  return {
    readable(path: string): boolean {
      let answer = seen.get(path);
      if (answer === undefined) {
        const segments = path.split('.');
        answer =
          segments[0] === '_id' ||
          views.every((view) => view.kind === 'whole' || fieldPathReadable(segments, view.role.fields, view.role.additionalFields, ctx));
        seen.set(path, answer);
      }
      return answer;
    },
  };
}
