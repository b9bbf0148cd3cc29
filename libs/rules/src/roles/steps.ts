/**
 * The decision flows (role selection, read, write) are written once as generators that yield only when an
 * expression has to await a `%function`. `runSync` drives them without any promise (the hot path of rules
 * without functions); `runAsync` awaits what they yield.
 */
import { RulesError, RulesErrorCode } from '../errors/rules.error';
import { type CompiledExpression } from '../expressions/compile';
import { type EvaluationContext } from '../expressions/context';
import { type DecisionTrace } from '../explain/trace';

export type Step<T> = Generator<Promise<unknown>, T, unknown>;

/** Evaluates an expression inside a flow, recording it in the trace when there is one. */
export function* evaluate(
  expression: CompiledExpression,
  ctx: EvaluationContext,
  trace: DecisionTrace | undefined,
  at: string,
): Step<boolean> {
  const node = expression.node;
  const value = node.async ? ((yield node.run(ctx)) as boolean) : node.run(ctx);
  if (trace) trace.evaluations.push({ at, expression: expression.source, value });
  return value;
}

/** Like `evaluate`, but an undefined expression gives `undefined` (recorded as such). */
export function* evaluateOptional(
  expression: CompiledExpression | undefined,
  ctx: EvaluationContext,
  trace: DecisionTrace | undefined,
  at: string,
): Step<boolean | undefined> {
  if (!expression) {
    if (trace) trace.evaluations.push({ at, expression: undefined, value: undefined });
    return undefined;
  }
  return yield* evaluate(expression, ctx, trace, at);
}

export function runSync<T>(flow: Step<T>): T {
  const result = flow.next();
  if (!result.done) {
    // Never left dangling: the caller asked for a synchronous answer from rules that need a function.
    result.value.catch(() => undefined);
    throw new RulesError(RulesErrorCode.AsyncEvaluationRequired, 'these rules call %function: use the asynchronous entry point');
  }
  return result.value;
}

export async function runAsync<T>(flow: Step<T>): Promise<T> {
  let result = flow.next();
  while (!result.done) {
    let value: unknown;
    try {
      value = await result.value;
    } catch (error) {
      result = flow.throw(error);
      continue;
    }
    result = flow.next(value);
  }
  return result.value;
}
