// Public entry of @tessera/rules: the App Services rule expression language, roles, filters, query
// pushdown and Sync permissions. Pure: no framework, no store, no transport.
export { RulesError, RulesErrorCode, isRulesError, type RulesErrorBody } from './errors/rules.error';
export { type EvaluationContext, type RuleUser, type RuleUserIdentity, type RuleFunctionCaller, normalizeUser } from './expressions/context';
export {
  compileExpression,
  compileValue,
  usesDocument,
  type CompiledExpression,
  type CompileOptions,
  type ExpressionKind,
  type ExpansionRoot,
  type ExpressionInfo,
} from './expressions/compile';
export { evaluateExpression } from './expressions/evaluate';
export { type RuleDocument, deepEqual, ruleEquals, inList, compareValues, getPath } from './expressions/values';
export { type DecisionTrace, type TraceEvaluation, type TracedOperation } from './explain/trace';
export { evaluateRules, type EvaluateRulesInput, type EvaluateRulesResult, type EvaluatedOperation } from './explain/evaluate-rules';
export {
  type Expression,
  type FieldPermission,
  type RoleConfig,
  type FilterConfig,
  type RuleSetConfig,
  type PartitionPermissionsConfig,
} from './roles/rule-config';
export {
  compileRules,
  CompiledRules,
  RulesAccess,
  type CompileRulesOptions,
  type RequestContext,
  type RequestOptions,
  type Decision,
  type ReadDecision,
  type WriteDecision,
  type PreparedQuery,
} from './roles/compiled-rules';
export { type PathReadability, pathReadability } from './roles/readable-paths';
export { type CompiledRole, type CompiledFieldRule, type RoleLabels } from './roles/compiled-role';
export { type WriteOperation, type WriteOutcome } from './roles/flows';
export { type MongoQuery, type MongoProjection, andQueries, mergeProjections } from './filters/filters';
export { translateExpression, readableCondition, type Condition, type Translation } from './filters/pushdown';
export {
  compilePartitionPermissions,
  CompiledPartitionPermissions,
  syncPermissions,
  type PartitionDecision,
  type PartitionRequest,
} from './sync/partition-permissions';
export {
  checkSyncCompatibility,
  openSyncSession,
  type SyncCompatibility,
  type SyncCompatibilityOptions,
  type SyncSession,
} from './sync/flexible-sync';
