/**
 * What a sync session needs to know about its app, read fresh where App Services read it fresh: the sync
 * mode of the live deployment, the reset epoch (how many times sync was terminated and enabled again), and
 * the evaluation context of the partition permissions with the user loaded at each BIND. It caches only
 * what a deployment fixes, and forgets it when a deployment changes.
 */
import { Injectable } from '@nestjs/common';
import { appEnvironment } from '@tessera/app-config';
import { Subjects } from '@tessera/contracts';
import { decodeEjson, encodeEjson, MessageBus } from '@tessera/messaging';
import { AppUserStore, DataSources, DeployedApps, readCustomUserData, SyncStateStore } from '@tessera/platform';
import { type EvaluationContext, type RuleFunctionCaller } from '@tessera/rules';
import { type SyncMode, syncModeOf } from '../sessions/sync-config';
import { syncRuleUser } from '../users/sync-user';

export interface SyncAppView {
  mode: SyncMode;
  /** Increases at each re-enable after a terminate: histories of an earlier epoch are gone for clients. */
  epoch: number;
}

/** The permission context of a BIND, or why the user may not sync at all any more. */
export type PermissionScope = { ok: true; context: EvaluationContext } | { ok: false; reason: 'user deleted' | 'user disabled' };

/** What one deployment fixes for sessions: the reset epoch, `%%values` and `%%environment`. */
interface DeploymentScope {
  deploymentId: string | undefined;
  epoch: number;
  values: Record<string, unknown>;
  environment: { tag?: string; values?: Record<string, unknown> };
}

@Injectable()
export class SyncApps {
  private readonly cached = new Map<string, Promise<DeploymentScope>>();
  private readonly users = new Map<string, AppUserStore>();

  constructor(
    private readonly deployed: DeployedApps,
    private readonly states: SyncStateStore,
    private readonly dataSources: DataSources,
    private readonly bus: MessageBus,
  ) {}

  async view(appId: string): Promise<SyncAppView> {
    const app = await this.deployed.byId(appId);
    return { mode: syncModeOf(app.config), epoch: (await this.deploymentScope(appId, app.deployment?._id)).epoch };
  }

  /** `%%user` (loaded now, custom data included), `%%values`, `%%environment` and `%function` for one BIND. */
  async permissionScope(appId: string, userId: string): Promise<PermissionScope> {
    const user = await (await this.userStore(appId)).findUser(userId);
    if (!user) return { ok: false, reason: 'user deleted' };
    if (user.disabled) return { ok: false, reason: 'user disabled' };
    const app = await this.deployed.byId(appId);
    const scope = await this.deploymentScope(appId, app.deployment?._id);
    const custom = await readCustomUserData(app.config, this.dataSources, user._id);
    return {
      ok: true,
      context: { user: syncRuleUser(user, custom), values: scope.values, environment: scope.environment, callFunction: this.functionCaller(appId) },
    };
  }

  /** A deployment changed: what was read from the previous one (and the reset epoch) is read again. */
  forget(appId: string): void {
    this.cached.delete(appId);
    this.deployed.invalidate(appId);
  }

  async userStore(appId: string): Promise<AppUserStore> {
    let users = this.users.get(appId);
    if (!users) {
      users = new AppUserStore(this.dataSources.platform(), appId);
      this.users.set(appId, users);
    }
    await users.init();
    return users;
  }

  /**
   * The scope of the app's live deployment. Read again when the deployment differs from the cached one, so
   * a replica that missed `apps.deployment.changed` follows once DeployedApps has reconciled.
   */
  private async deploymentScope(appId: string, deploymentId: string | undefined): Promise<DeploymentScope> {
    let scope = this.cached.get(appId);
    if (scope && (await scope.catch(() => undefined))?.deploymentId !== deploymentId) scope = undefined;
    if (!scope) {
      scope = this.readScope(appId);
      this.cached.set(appId, scope);
      scope.catch(() => this.cached.delete(appId));
    }
    return scope;
  }

  private async readScope(appId: string): Promise<DeploymentScope> {
    const [app, state] = await Promise.all([this.deployed.byId(appId), this.states.get(appId)]);
    const values: Record<string, unknown> = {};
    // Values read from secrets are not exposed to rules (the data-access API's rules do the same).
    for (const value of app.config.values) if (!value.from_secret) values[value.name] = value.value;
    return { deploymentId: app.deployment?._id, epoch: state.resetEpoch, values, environment: appEnvironment(app.config) };
  }

  /** `%function` in a permission runs the app function as system, as rules of the data-access API do. */
  private functionCaller(appId: string): RuleFunctionCaller {
    return async (name, args) => {
      const response = await this.bus.request(Subjects.FunctionsExecutionRun, {
        appId,
        functionName: name,
        args: args.map((arg) => encodeEjson(arg) as never),
        caller: { type: 'system' },
        metadata: { origin: 'rule' },
      });
      if (!response.ok) throw new Error(`rule function ${name} failed: ${response.error.message}`);
      return decodeEjson(response.result, { relaxed: true });
    };
  }
}
