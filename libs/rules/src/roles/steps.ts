/**
 * The decision flows (role selection, read, write, filters) are plain synchronous functions that evaluate
 * expressions through an `Evaluator`. Rules without `%function` run once with the synchronous evaluator:
 * no promise, no generator, nothing allocated beyond the decision. Rules that call `%function` run under
 * `runAsync`, which replays the flow: when it meets an expression that must await, it stops the pass,
 * awaits that expression, records its value and runs the (pure, deterministic) flow again, now answering
 * the recorded values in order. Each function is called once; only the cheap synchronous parts repeat.
 */
import { RulesError, RulesErrorCode } from '../errors/rules.error';
import { type CompiledExpression, type Node } from '../expressions/compile';
import { type EvaluationContext } from '../expressions/context';
import { type DecisionTrace } from '../explain/trace';

export interface Evaluator {
  /** Evaluates an expression, recording it in the trace when there is one. */
  bool(expression: CompiledExpression, ctx: EvaluationContext, trace: DecisionTrace | undefined, at: string): boolean;
  /** Like `bool`, but an undefined expression gives `undefined` (recorded as such). */
  optional(expression: CompiledExpression | undefined, ctx: EvaluationContext, trace: DecisionTrace | undefined, at: string): boolean | undefined;
  /** Computes a value (a filter query with expansions). */
  value(node: Node<unknown>, ctx: EvaluationContext): unknown;
}

export type Flow<T> = (ev: Evaluator) => T;

/** Thrown inside a pass to stop it until `promise` settles. */
class Suspend {
  constructor(readonly promise: Promise<unknown>) {}
}

abstract class BaseEvaluator implements Evaluator {
  protected abstract awaited(node: Node<unknown>, ctx: EvaluationContext): unknown;

  bool(expression: CompiledExpression, ctx: EvaluationContext, trace: DecisionTrace | undefined, at: string): boolean {
    const node = expression.node;
    const value = node.async ? (this.awaited(node, ctx) as boolean) : node.run(ctx);
    if (trace) trace.evaluations.push({ at, expression: expression.source, value });
    return value;
  }

  optional(expression: CompiledExpression | undefined, ctx: EvaluationContext, trace: DecisionTrace | undefined, at: string): boolean | undefined {
    if (!expression) {
      if (trace) trace.evaluations.push({ at, expression: undefined, value: undefined });
      return undefined;
    }
    return this.bool(expression, ctx, trace, at);
  }

  value(node: Node<unknown>, ctx: EvaluationContext): unknown {
    return node.async ? this.awaited(node, ctx) : node.run(ctx);
  }
}

class SyncEvaluator extends BaseEvaluator {
  protected awaited(): unknown {
    throw new RulesError(RulesErrorCode.AsyncEvaluationRequired, 'these rules call %function: use the asynchronous entry point');
  }
}

class ReplayEvaluator extends BaseEvaluator {
  private next = 0;

  constructor(private readonly recorded: unknown[]) {
    super();
  }

  protected awaited(node: Node<unknown>, ctx: EvaluationContext): unknown {
    if (this.next < this.recorded.length) return this.recorded[this.next++];
    throw new Suspend(node.run(ctx) as Promise<unknown>);
  }
}

/** Evaluates without awaiting; meets a `%function` with AsyncEvaluationRequired. */
export const syncEvaluator: Evaluator = new SyncEvaluator();

/** Runs a flow synchronously; throws AsyncEvaluationRequired if it meets a `%function`. */
export function runSync<T>(flow: Flow<T>): T {
  return flow(syncEvaluator);
}

/** Runs a flow that may await `%function` calls (see the header). */
export async function runAsync<T>(flow: Flow<T>): Promise<T> {
  const recorded: unknown[] = [];
  for (;;) {
    try {
      return flow(new ReplayEvaluator(recorded));
    } catch (error) {
      if (!(error instanceof Suspend)) throw error;
      recorded.push(await error.promise);
    }
  }
}
