import { Injectable } from '@nestjs/common';
import { isDataSourceType } from '@tessera/app-config';
import { Subjects } from '@tessera/contracts';
import { TesseraError } from '@tessera/domain';
import { decodeEjson, encodeEjson, MessageBus } from '@tessera/messaging';
import { DeployedApps } from '@tessera/platform';
import { compilePartitionPermissions, compileRules, isRulesError, type DecisionTrace, type PartitionPermissionsConfig, type RuleFunctionCaller, type RuleSetConfig, type RuleUser } from '@tessera/rules';

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

/**
 * Explains a rule decision: given a user, an operation and a document (or a partition), which role applied,
 * which expression decided and which fields were withheld. Uses the app's deployed rules or inline ones.
 */
@Injectable()
export class RulesEvaluationService {
  constructor(
    private readonly apps: DeployedApps,
    private readonly bus: MessageBus,
  ) {}

  async evaluate(appId: string, body: unknown): Promise<RulesEvaluationResponse> {
    const request = this.parse(body);
    const deployed = await this.apps.byId(appId);
    const callFunction: RuleFunctionCaller = async (name, args) => {
      const response = await this.bus.request(Subjects.FunctionsExecutionRun, {
        appId: deployed.record._id,
        functionName: name,
        args: args.map((arg) => encodeEjson(arg) as never),
        caller: { type: 'system' },
        metadata: { origin: 'rule' },
      });
      if (!response.ok) throw new RulesEvaluationError(`%function ${name} failed: ${response.error.message}`);
      return decodeEjson(response.result, { relaxed: true });
    };
    const context = { user: request.user, callFunction, explain: true };
    try {
      if (request.operation === 'sync_read' || request.operation === 'sync_write') {
        const permissions = request.permissions ?? (deployed.config.sync?.partition?.permissions as PartitionPermissionsConfig | undefined);
        if (!permissions) throw new RulesEvaluationError('the app has no partition-based sync permissions; give "permissions" inline');
        const decision = await compilePartitionPermissions(permissions).evaluate({ ...context, partition: request.partition });
        const allowed = request.operation === 'sync_read' ? decision.read : decision.write;
        return { operation: request.operation, allowed, role: null, trace: decision.trace };
      }
      const rules = this.rulesFor(deployed.config, request);
      const access = rules.forRequest(context);
      const document = request.document ?? {};
      switch (request.operation) {
        case 'read': {
          const decision = await access.canRead(document);
          return { operation: 'read', allowed: decision.allowed, role: decision.role, document: decision.document ?? null, trace: decision.trace };
        }
        case 'insert':
        case 'update':
        case 'delete': {
          const decision =
            request.operation === 'insert'
              ? await access.checkInsert(document)
              : request.operation === 'update'
                ? await access.checkUpdate(request.previous ?? document, document)
                : await access.checkDelete(document);
          return {
            operation: request.operation,
            allowed: decision.allowed,
            role: decision.role,
            ...(decision.error ? { error: decision.error.toBody() } : {}),
            trace: decision.trace,
          };
        }
      }
    } catch (error) {
      if (isRulesError(error)) return { operation: request.operation, allowed: false, role: null, error: error.toBody(), trace: undefined };
      throw error;
    }
  }

  private rulesFor(config: Awaited<ReturnType<DeployedApps['byId']>>['config'], request: RulesEvaluationRequest) {
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
