/**
 * The runtime's ports backed by the platform: deployed functions and values from the live deployment,
 * data access through @tessera/data-access (rules for user callers), can_evaluate through @tessera/rules.
 */
import { appEnvironment, dataApiConfigOf, importsAsRequires } from '@tessera/app-config';
import { type CallerUser, callerUserOf, ruleUserOf } from '@tessera/contracts';
import type { DataAccess, DataAccessRequest } from '@tessera/data-access';
import { AppUserStore, type DataSources, type DependencyStore, type DeployedApp, type DeployedApps } from '@tessera/platform';
import { evaluateExpression } from '@tessera/rules';
import type { FunctionConfig } from '../config/function-config';
import type { CanEvaluateEvaluator } from '../function-runtime.options';
import type { AppFunctions, AppFunctionsPort, DeployedFunction, HttpServiceRules } from '../ports/app-functions.port';
import type { DataAccessCall, DataAccessPort, DataSessionPort } from '../ports/data-access.port';
import type { UsersPort } from '../ports/identity';
import type { DependenciesPort } from '../sandbox/dependencies/dependencies.port';
import type { AppValues, ValuesPort } from '../ports/values.port';

export class DeployedFunctionsPort implements AppFunctionsPort {
  constructor(private readonly apps: DeployedApps) {}

  async getFunctions(appId: string): Promise<AppFunctions | null> {
    let deployed;
    try {
      deployed = await this.apps.byId(appId);
    } catch {
      return null;
    }
    // Sources that open with ES imports (App Services compiled them with Babel) get the require calls Babel made.
    const functions = new Map<string, DeployedFunction>();
    for (const fn of deployed.config.functions) functions.set(fn.config.name, { config: fn.config as FunctionConfig, source: importsAsRequires(fn.source) });
    const webhooks = new Map<string, DeployedFunction>();
    const httpServices = new Map<string, HttpServiceRules>();
    for (const service of deployed.config.services) {
      for (const hook of service.webhooks) webhooks.set(`${service.config.name}/${hook.config.name}`, { config: hook.config as FunctionConfig, source: importsAsRequires(hook.source) });
      if (service.config.type === 'http') {
        httpServices.set(service.config.name, { rules: service.rules.map((rule) => ({ name: rule.name, actions: Array.isArray(rule.actions) ? rule.actions : [], ...(rule.when ? { when: rule.when as Record<string, unknown> } : {}) })) });
      }
    }
    const dataApi = dataApiConfigOf(deployed.config);
    const script = dataApi && 'config' in dataApi ? dataApi.config.run_as_user_id_script_source : '';
    return { version: deployed.deployment?._id ?? 'undeployed', functions, webhooks, httpServices, ...(script !== '' ? { dataApiRunAs: dataApiRunAsFunction(script) } : {}) };
  }
}

/** The Data API's script as the run-as setting of a function that answers the id of the user it runs as. */
export function dataApiRunAsFunction(script: string): DeployedFunction {
  return { config: { name: 'data_api', run_as_user_id_script_source: script }, source: 'exports = function () { return context.user.id; };' };
}

export class DeployedValuesPort implements ValuesPort {
  constructor(private readonly apps: DeployedApps) {}

  async getValues(appId: string): Promise<AppValues> {
    const { config } = await this.apps.byId(appId);
    const secrets = (config.secrets ?? {}) as { values?: Record<string, unknown> };
    const values: Record<string, unknown> = {};
    for (const value of config.values) {
      values[value.name] = value.from_secret ? secrets.values?.[String(value.value)] : value.value;
    }
    // context.environment: the tag config.json selects and that environment's values (environments/<tag>.json).
    return { values, environment: appEnvironment(config) };
  }
}

export class RulesDataAccessPort implements DataAccessPort {
  constructor(
    private readonly apps: DeployedApps,
    private readonly dataAccess: DataAccess,
  ) {}

  async execute(call: DataAccessCall): Promise<unknown> {
    return this.dataAccess.execute(requestOf(await this.apps.byId(call.appId), call));
  }

  async startSession(scope: Pick<DataAccessCall, 'appId' | 'service' | 'caller'>): Promise<DataSessionPort> {
    const session = this.dataAccess.startSession({ app: dataAccessAppOf(await this.apps.byId(scope.appId)), service: scope.service, caller: callerOf(scope.caller) });
    return {
      execute: async (call, begin) => {
        const request = requestOf(await this.apps.byId(call.appId), call);
        if (begin) await session.startTransaction();
        return session.execute(request);
      },
      commitTransaction: () => session.commitTransaction(),
      abortTransaction: () => session.abortTransaction(),
      end: () => session.end(),
    };
  }
}

function dataAccessAppOf(deployed: DeployedApp): DataAccessRequest['app'] {
  return { id: deployed.record._id, deploymentId: deployed.deployment?._id, config: deployed.config };
}

/** The data-access request of a function's operation on the app as deployed (no await: every data operation makes one). */
function requestOf(deployed: DeployedApp, call: DataAccessCall): DataAccessRequest {
  return {
    app: dataAccessAppOf(deployed),
    service: call.service,
    action: call.action,
    ...(call.database ? { database: call.database } : {}),
    ...(call.collection ? { collection: call.collection } : {}),
    args: (call.arguments[0] ?? {}) as Record<string, unknown>,
    caller: callerOf(call.caller),
    ...(call.headers ? { headers: call.headers } : {}),
  };
}

function callerOf(caller: DataAccessCall['caller']): DataAccessRequest['caller'] {
  return caller.kind === 'system' ? { kind: 'system' } : { kind: 'user', user: ruleUserOf(caller.user) };
}

/** can_evaluate: a rule expression over %%user, %%args and %%request. */
export const rulesCanEvaluate: CanEvaluateEvaluator = async (expression, input) => {
  const value = await evaluateExpression(expression, {
    ...(input.user ? { user: ruleUserOf(input.user) } : {}),
    args: input.arguments,
    ...(input.request ? { request: input.request } : {}),
  });
  return value === true;
};

/** `run_as_user_id` and `run_as_user_id_script_source` users, from the app's user store. */
export class PlatformUsersPort implements UsersPort {
  constructor(private readonly dataSources: DataSources) {}

  async findUser(appId: string, userId: string): Promise<CallerUser | null> {
    const user = await new AppUserStore(this.dataSources.platform(), appId).findUser(userId);
    return user && !user.disabled ? callerUserOf(user) : null;
  }
}

/** The dependencies the admin API stored for the app (one read per sandbox pool, that is per deployment). */
export class PlatformDependenciesPort implements DependenciesPort {
  constructor(private readonly store: DependencyStore) {}

  getBundle(appId: string): Promise<string | undefined> {
    return this.store.bundle(appId);
  }
}
