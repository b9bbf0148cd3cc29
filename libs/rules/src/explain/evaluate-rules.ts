/**
 * One decision with its explanation, for the admin "evaluate rules" endpoint: a user, an operation, a
 * document (and pre-image) or a partition, and the rules (deployed or inline). The endpoint validates its
 * input and maps the result; everything about rules happens here.
 */
import { RulesError, RulesErrorCode, type RulesErrorBody } from '../errors/rules.error';
import { type EvaluationContext, type RuleUser } from '../expressions/context';
import { type RuleDocument } from '../expressions/values';
import { type CompiledRules, compileRules } from '../roles/compiled-rules';
import { type PartitionPermissionsConfig, type RuleSetConfig } from '../roles/rule-config';
import { compilePartitionPermissions } from '../sync/partition-permissions';
import { type DecisionTrace } from './trace';

export type EvaluatedOperation = 'read' | 'search' | 'insert' | 'update' | 'delete' | 'partitionRead' | 'partitionWrite';

export interface EvaluateRulesInput extends Pick<EvaluationContext, 'values' | 'environment' | 'request' | 'callFunction'> {
  user: RuleUser;
  operation: EvaluatedOperation;
  /** The document read or deleted, the new document of an insert, the result of an update. */
  document?: RuleDocument;
  /** The stored document before an update. */
  preImage?: RuleDocument;
  /** The partition value (Partition-Based Sync operations). */
  partition?: unknown;
  /** Compiled rules of a namespace, or rule documents given inline. */
  rules?: CompiledRules | { collection?: RuleSetConfig; defaults?: RuleSetConfig; namespace?: string };
  /** `partition.permissions` for the Partition-Based Sync operations. */
  partitionPermissions?: PartitionPermissionsConfig;
}

export interface EvaluateRulesResult {
  allowed: boolean;
  role: string | null;
  /** For reads: the visible document. */
  document?: RuleDocument;
  /** For refused writes: the App Services error body a client would get. */
  error?: RulesErrorBody;
  trace: DecisionTrace;
}

function missing(what: string, operation: string): RulesError {
  return new RulesError(RulesErrorCode.InvalidRule, `${what} is required for a ${operation} evaluation`);
}

/**
 * Evaluates one operation and explains it. Throws RulesError for malformed rules or input (InvalidRule,
 * InvalidExpression), for a namespace without rules (NoMatchingRuleFound) and for failing functions.
 */
export async function evaluateRules(input: EvaluateRulesInput): Promise<EvaluateRulesResult> {
  const ctx = { user: input.user, values: input.values, environment: input.environment, request: input.request, callFunction: input.callFunction, explain: true };
  if (input.operation === 'partitionRead' || input.operation === 'partitionWrite') {
    if (!input.partitionPermissions) throw missing('partitionPermissions', input.operation);
    const decision = await compilePartitionPermissions(input.partitionPermissions).evaluate({ ...ctx, partition: input.partition });
    const allowed = input.operation === 'partitionRead' ? decision.read : decision.write;
    return { allowed, role: null, trace: decision.trace as DecisionTrace };
  }
  if (!input.rules) throw missing('rules', input.operation);
  const rules = 'forRequest' in input.rules ? input.rules : compileRules(input.rules.collection, input.rules.defaults, { namespace: input.rules.namespace });
  const access = rules.forRequest(ctx);
  const document = input.document;
  if (!document) throw missing('document', input.operation);
  switch (input.operation) {
    case 'read':
    case 'search': {
      const decision = await access.canRead(document, { search: input.operation === 'search' });
      return { allowed: decision.allowed, role: decision.role, document: decision.document, trace: decision.trace as DecisionTrace };
    }
    case 'insert':
    case 'update':
    case 'delete': {
      let decision;
      if (input.operation === 'insert') decision = await access.checkInsert(document);
      else if (input.operation === 'delete') decision = await access.checkDelete(document);
      else {
        if (!input.preImage) throw missing('preImage', 'update');
        decision = await access.checkUpdate(input.preImage, document);
      }
      return { allowed: decision.allowed, role: decision.role, error: decision.error?.toBody(), trace: decision.trace as DecisionTrace };
    }
  }
}
