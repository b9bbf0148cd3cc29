/**
 * Partition-Based Sync permissions: `partition.permissions.read/write` evaluated when a user opens a
 * realm, with `%%user` and `%%partition`. Write implies read. An undefined permission denies.
 */
import { RulesError, RulesErrorCode } from '../errors/rules.error';
import { type CompiledExpression, compileExpression } from '../expressions/compile';
import { type EvaluationContext, normalizeUser } from '../expressions/context';
import { type DecisionTrace, newTrace } from '../explain/trace';
import { type RequestContext } from '../roles/compiled-rules';
import { type PartitionPermissionsConfig } from '../roles/rule-config';
import { evaluateOptional, runAsync, runSync, type Step } from '../roles/steps';

export interface PartitionDecision {
  read: boolean;
  write: boolean;
  trace?: DecisionTrace;
}

export type PartitionRequest = RequestContext & { partition: unknown };

function compile(source: unknown, where: string): CompiledExpression | undefined {
  if (source === undefined) return undefined;
  try {
    return compileExpression(source, { kind: 'partition' });
  } catch (error) {
    if (error instanceof RulesError) throw new RulesError(RulesErrorCode.InvalidRule, `${where}: ${error.message}`, error.reason, { cause: error });
    throw error;
  }
}

export class CompiledPartitionPermissions {
  readonly read: CompiledExpression | undefined;
  readonly write: CompiledExpression | undefined;
  readonly async: boolean;

  constructor(config: PartitionPermissionsConfig) {
    this.read = compile(config.read, 'partition.permissions.read');
    this.write = compile(config.write, 'partition.permissions.write');
    this.async = this.read?.async === true || this.write?.async === true;
  }

  private *flow(request: PartitionRequest): Step<PartitionDecision> {
    const { explain, ...rest } = request;
    const ctx: EvaluationContext = { ...rest, user: normalizeUser(request.user) };
    const trace = explain ? newTrace('partition', undefined) : undefined;
    const write = (yield* evaluateOptional(this.write, ctx, trace, 'partition.permissions.write')) === true;
    // Write implies read: the read expression is only consulted when write is refused.
    const read = write || (yield* evaluateOptional(this.read, ctx, trace, 'partition.permissions.read')) === true;
    const decision: PartitionDecision = { read, write };
    if (trace) {
      trace.decidedBy = write ? 'partition.permissions.write' : 'partition.permissions.read';
      trace.reason = write ? 'read and write' : read ? 'read only' : 'no access to the partition';
      decision.trace = trace;
    }
    return decision;
  }

  evaluate(request: PartitionRequest): Promise<PartitionDecision> {
    return runAsync(this.flow(request));
  }

  /** Throws AsyncEvaluationRequired when a permission calls `%function`. */
  evaluateSync(request: PartitionRequest): PartitionDecision {
    return runSync(this.flow(request));
  }
}

export function compilePartitionPermissions(config: PartitionPermissionsConfig): CompiledPartitionPermissions {
  return new CompiledPartitionPermissions(config);
}

/** One-shot: may the user read and write the partition? */
export function syncPermissions(config: PartitionPermissionsConfig, request: PartitionRequest): Promise<PartitionDecision> {
  return compilePartitionPermissions(config).evaluate(request);
}
