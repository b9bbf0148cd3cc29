import { emptyApp, readAppFiles, type AppConfig } from '@tessera/app-config';
import { TesseraError } from '@tessera/domain';
import { type AppRegistry, type AppRecord } from './app-registry';
import { type DeploymentRecord, type DeploymentStore } from './deployment-store';

/** An app with the configuration it runs with. */
export interface DeployedApp {
  record: AppRecord;
  deployment: DeploymentRecord | undefined;
  config: AppConfig;
}

export class AppNotDeployedError extends TesseraError {
  readonly errorCode = 'AppNotFound';
  readonly httpStatus = 404;
}

/**
 * The live configuration of every app, parsed once per deployment and cached. Services call
 * `invalidate(appId)` when they hear `apps.deployment.changed`, so every replica reloads after a deploy;
 * `reconcile()` compares the cache with the live stamps in the platform database, so a replica that missed
 * the event (its connection was down, or the event was never sent) converges too (decision 0023).
 */
export class DeployedApps {
  private readonly cache = new Map<string, Promise<DeployedApp>>();
  private readonly clientIds = new Map<string, string>();

  constructor(
    private readonly apps: AppRegistry,
    private readonly deployments: DeploymentStore,
  ) {}

  async byClientAppId(clientAppId: string): Promise<DeployedApp> {
    const known = this.clientIds.get(clientAppId);
    if (known) return this.byId(known);
    const record = await this.apps.getByClientAppId(clientAppId);
    this.clientIds.set(clientAppId, record._id);
    return this.byId(record._id);
  }

  /** The `_id` of an app this process already found by its client app id (and has not dropped since), without waiting. */
  knownIdOf(clientAppId: string): string | undefined {
    return this.clientIds.get(clientAppId);
  }

  byId(appId: string): Promise<DeployedApp> {
    let entry = this.cache.get(appId);
    if (!entry) {
      entry = this.load(appId);
      this.cache.set(appId, entry);
      entry.catch(() => this.cache.delete(appId));
    }
    return entry;
  }

  invalidate(appId: string): void {
    this.cache.delete(appId);
    for (const [clientId, id] of this.clientIds) if (id === appId) this.clientIds.delete(clientId);
  }

  /**
   * Drops every cached app whose live deployment is no longer the one cached (deployed again, or removed).
   * One indexed read of the cached apps' stamps; returns the ids it dropped.
   */
  async reconcile(): Promise<string[]> {
    const cached: [string, DeployedApp][] = [];
    for (const [appId, entry] of this.cache) {
      const loaded = await entry.catch(() => undefined);
      if (loaded && this.cache.get(appId) === entry) cached.push([appId, loaded]);
    }
    if (cached.length === 0) return [];
    const stamps = await this.deployments.liveStamps(cached.map(([appId]) => appId));
    const stale = cached.filter(([appId, loaded]) => stamps.get(appId)?.deploymentId !== loaded.deployment?._id).map(([appId]) => appId);
    for (const appId of stale) this.invalidate(appId);
    return stale;
  }

  private async load(appId: string): Promise<DeployedApp> {
    const record = await this.apps.get(appId);
    const current = await this.deployments.current(appId);
    if (!current) return { record, deployment: undefined, config: emptyApp(record.name) };
    // Deployments were validated before they were stored; what a read still reports cannot stop the app.
    const { app } = readAppFiles(current.files);
    return { record, deployment: current.record, config: app };
  }
}
