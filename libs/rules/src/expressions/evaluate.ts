/**
 * One-shot evaluation of an expression. Rules compile their expressions once (compileRules); this entry
 * point is for callers that evaluate a loose expression, such as service rules or the admin evaluate API.
 */
import { compileExpression, type CompileOptions, type CompiledExpression } from './compile';
import { type EvaluationContext, normalizeUser } from './context';

const cache = new WeakMap<object, Map<string, CompiledExpression>>();

function compiled(expression: unknown, options: CompileOptions): CompiledExpression {
  if (typeof expression !== 'object' || expression === null) return compileExpression(expression, options);
  let byKind = cache.get(expression);
  if (!byKind) {
    byKind = new Map<string, CompiledExpression>();
    cache.set(expression, byKind);
  }
  let found = byKind.get(options.kind);
  if (!found) byKind.set(options.kind, (found = compileExpression(expression, options)));
  return found;
}

/**
 * Evaluates an expression. Returns a boolean synchronously unless the expression calls `%function`, in
 * which case it returns a promise. Throws RulesError(InvalidExpression) for a malformed expression.
 */
export function evaluateExpression(
  expression: unknown,
  ctx: EvaluationContext,
  options: CompileOptions = { kind: 'document' },
): boolean | Promise<boolean> {
  const scope = ctx.user ? { ...ctx, user: normalizeUser(ctx.user) } : ctx;
  return compiled(expression, options).evaluate(scope);
}
