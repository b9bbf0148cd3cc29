import { Injectable } from '@nestjs/common';
import { effectiveSyncConfig, isDataSourceType, type AppConfig } from '@tessera/app-config';
import { TesseraError } from '@tessera/domain';
import { decodeEjson, FunctionCalls } from '@tessera/messaging';
import { DeployedApps } from '@tessera/platform';
import { compileRules, evaluateRules, isRulesError, type CompiledRules, type DecisionTrace, type EvaluatedOperation as LibraryOperation, type PartitionPermissionsConfig, type RuleFunctionCaller, type RuleSetConfig, type RuleUser } from '@tessera/rules';

export type EvaluatedOperation = 'read' | 'insert' | 'update' | 'delete' | 'sync_read' | 'sync_write';

export interface RulesEvaluationRequest {
  user: RuleUser;
  operation: EvaluatedOperation;
  /** The document read or written (for updates: the document after the update). */
  document?: Record<string, unknown>;
  /** For updates: the stored document before the update. */
  previous?: Record<string, unknown>;
  /** For sync operations: the partition value. */
  partition?: unknown;
  /** The deployed rules of this namespace... */
  namespace?: { service?: string; database: string; collection: string };
  /** ...or a rule document given inline (roles, filters), with an optional default rule. */
  rule?: RuleSetConfig;
  default_rule?: RuleSetConfig;
  /** For sync operations: inline partition permissions instead of the app's sync configuration. */
  permissions?: PartitionPermissionsConfig;
}

export interface RulesEvaluationResponse {
  operation: EvaluatedOperation;
  allowed: boolean;
  role: string | null;
  /** What the user would see (reads), or null when the document is hidden. */
  document?: Record<string, unknown> | null;
  error?: { error: string; error_code: string };
  trace: DecisionTrace | undefined;
}

export class RulesEvaluationError extends TesseraError {
  readonly errorCode = 'InvalidParameter';
  readonly httpStatus = 400;
}

const operations = new Set<EvaluatedOperation>(['read', 'insert', 'update', 'delete', 'sync_read', 'sync_write']);

/** The endpoint's operation names, as the rules library calls them. */
const libraryOperation: Record<EvaluatedOperation, LibraryOperation> = {
  read: 'read',
  insert: 'insert',
  update: 'update',
  delete: 'delete',
  sync_read: 'partitionRead',
  sync_write: 'partitionWrite',
};

function isSync(operation: EvaluatedOperation): boolean {
  return operation === 'sync_read' || operation === 'sync_write';
}

/**
 * Explains a rule decision: given a user, an operation and a document (or a partition), which role applied,
 * which expression decided and which fields were withheld. Uses the app's deployed rules or inline ones.
 */
@Injectable()
export class RulesEvaluationService {
  constructor(
    private readonly apps: DeployedApps,
    private readonly functions: FunctionCalls,
  ) {}

  async evaluate(appId: string, body: unknown): Promise<RulesEvaluationResponse> {
    const request = this.parse(body);
    const deployed = await this.apps.byId(appId);
    // A failure becomes the rules' RuleFunctionFailed (reported in the answer), with the runtime's message.
    const callFunction: RuleFunctionCaller = (functionName, args) =>
      this.functions.call({ appId: deployed.record._id, functionName, args, caller: { type: 'system' }, metadata: { origin: 'rule' } }, { relaxed: true });
    try {
      const result = await evaluateRules({
        user: request.user,
        callFunction,
        operation: libraryOperation[request.operation],
        document: request.document ?? {},
        ...(request.operation === 'update' ? { preImage: request.previous ?? request.document ?? {} } : {}),
        partition: request.partition,
        ...(isSync(request.operation) ? { partitionPermissions: this.partitionPermissions(deployed.config, request) } : { rules: this.rulesFor(deployed.config, request) }),
      });
      return {
        operation: request.operation,
        allowed: result.allowed,
        role: result.role,
        ...(request.operation === 'read' ? { document: result.document ?? null } : {}),
        ...(result.error ? { error: result.error } : {}),
        trace: result.trace,
      };
    } catch (error) {
      if (isRulesError(error)) return { operation: request.operation, allowed: false, role: null, error: error.toBody(), trace: undefined };
      throw error;
    }
  }

  private partitionPermissions(config: AppConfig, request: RulesEvaluationRequest): PartitionPermissionsConfig {
    const permissions = request.permissions ?? (effectiveSyncConfig(config)?.partition?.permissions as PartitionPermissionsConfig | undefined);
    if (!permissions) throw new RulesEvaluationError('the app has no partition-based sync permissions; give "permissions" inline');
    return permissions;
  }

  private rulesFor(config: AppConfig, request: RulesEvaluationRequest): CompiledRules {
    if (request.rule) return compileRules(request.rule, request.default_rule);
    const namespace = request.namespace;
    if (!namespace) throw new RulesEvaluationError('give either "namespace" (deployed rules) or "rule" (inline)');
    const services = config.services.filter((service) => isDataSourceType(service.config.type));
    const service = namespace.service ? services.find((candidate) => candidate.config.name === namespace.service) : services[0];
    if (!service) throw new RulesEvaluationError(`data source '${namespace.service ?? ''}' not found`);
    const rule = service.collectionRules.find((candidate) => candidate.database === namespace.database && candidate.collection === namespace.collection);
    return compileRules(rule as RuleSetConfig | undefined, service.defaultRule as RuleSetConfig | undefined, { namespace: `${namespace.database}.${namespace.collection}` });
  }

  private parse(body: unknown): RulesEvaluationRequest {
    if (typeof body !== 'object' || body === null) throw new RulesEvaluationError('request body must be a JSON object');
    const raw = decodeEjson(body as never, { relaxed: true }) as Record<string, unknown>;
    const user = raw['user'] as RuleUser | undefined;
    if (!user || typeof user !== 'object' || typeof user.id !== 'string') throw new RulesEvaluationError('user.id is required');
    const operation = raw['operation'] as EvaluatedOperation;
    if (!operations.has(operation)) throw new RulesEvaluationError(`operation must be one of ${[...operations].join(', ')}`);
    return raw as unknown as RulesEvaluationRequest;
  }
}
