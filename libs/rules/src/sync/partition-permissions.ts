/**
 * Partition-Based Sync permissions: `partition.permissions.read/write` evaluated when a user opens a
 * realm, with `%%user` and `%%partition`. Write implies read. An undefined permission denies.
 */
import { RulesError, RulesErrorCode } from '../errors/rules.error';
import { type CompiledExpression, compileExpression } from '../expressions/compile';
import { requestScope } from '../expressions/context';
import { type DecisionTrace, newTrace } from '../explain/trace';
import { type RequestContext } from '../roles/compiled-rules';
import { type PartitionPermissionsConfig } from '../roles/rule-config';
import { type Evaluator, runAsync, runSync } from '../roles/steps';

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

  private flow(ev: Evaluator, request: PartitionRequest): PartitionDecision {
    const ctx = requestScope(request);
    const trace = request.explain ? newTrace('partition', undefined) : undefined;
    const write = (ev.optional(this.write, ctx, trace, 'partition.permissions.write')) === true;
    // Write implies read: the read expression is only consulted when write is refused.
    const read = write || (ev.optional(this.read, ctx, trace, 'partition.permissions.read')) === true;
    const decision: PartitionDecision = { read, write };
    if (trace) {
      trace.decidedBy = write ? 'partition.permissions.write' : 'partition.permissions.read';
      trace.reason = write ? 'read and write' : read ? 'read only' : 'no access to the partition';
      decision.trace = trace;
    }
    return decision;
  }

  evaluate(request: PartitionRequest): Promise<PartitionDecision> {
    return runAsync((ev) => this.flow(ev, request));
  }

  /** Throws AsyncEvaluationRequired when a permission calls `%function`. */
  evaluateSync(request: PartitionRequest): PartitionDecision {
    return runSync((ev) => this.flow(ev, request));
  }
}

export function compilePartitionPermissions(config: PartitionPermissionsConfig): CompiledPartitionPermissions {
  return new CompiledPartitionPermissions(config);
}

/** One-shot: may the user read and write the partition? */
export function syncPermissions(config: PartitionPermissionsConfig, request: PartitionRequest): Promise<PartitionDecision> {
  return compilePartitionPermissions(config).evaluate(request);
}
