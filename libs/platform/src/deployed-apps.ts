import { emptyApp, readAppFiles, type AppConfig } from '@tessera/app-config';
import { TesseraError } from '@tessera/domain';
import { type AppRegistry, type AppRecord } from './app-registry';
import { type FileDeploymentStore, type DeploymentRecord } from './deployment-store';

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
 * `invalidate(appId)` when they hear `apps.deployment.changed`, so every replica reloads after a deploy.
 */
export class DeployedApps {
  private readonly cache = new Map<string, Promise<DeployedApp>>();
  private readonly clientIds = new Map<string, string>();

  constructor(
    private readonly apps: AppRegistry,
    private readonly deployments: FileDeploymentStore,
  ) {}

  async byClientAppId(clientAppId: string): Promise<DeployedApp> {
    const known = this.clientIds.get(clientAppId);
    if (known) return this.byId(known);
    const record = await this.apps.getByClientAppId(clientAppId);
    this.clientIds.set(clientAppId, record._id);
    return this.byId(record._id);
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

  private async load(appId: string): Promise<DeployedApp> {
    const record = await this.apps.get(appId);
    const current = await this.deployments.current(appId);
    if (!current) return { record, deployment: undefined, config: emptyApp(record.name) };
    // Deployments were validated before they were stored; what a read still reports cannot stop the app.
    const { app } = readAppFiles(current.files);
    return { record, deployment: current.record, config: app };
  }
}
