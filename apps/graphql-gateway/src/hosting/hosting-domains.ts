import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { hostingSettings } from '@tessera/app-config';
import { AppRegistry, DeployedApps, DeploymentStore } from '@tessera/platform';

/** How often the domain table is compared with the live deployments (a new custom domain serves after at most this). */
export const HOSTING_DOMAINS_REFRESH_MS = 2_000;

/**
 * Which app a request's host name belongs to: the `custom_domain` and `app_default_domain` of every app
 * with hosting enabled. Looked up synchronously on every request (most requests are for the API's own host
 * and must not wait), refreshed in the background from the live deployment stamps: one read of the app
 * registry and one of the stamps per refresh, and the configuration of an app only when it changed.
 */
@Injectable()
export class HostingDomains implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Hosting');
  private domains = new Map<string, string>();
  /** Per app: the deployment its domains were read from, and those domains. */
  private readonly known = new Map<string, { deploymentId: string; domains: string[] }>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly apps: AppRegistry,
    private readonly deployments: DeploymentStore,
    private readonly deployed: DeployedApps,
  ) {}

  onApplicationBootstrap(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), HOSTING_DOMAINS_REFRESH_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The id of the app hosting at `hostname` (no port, any case), or undefined. */
  appFor(hostname: string): string | undefined {
    return this.domains.size === 0 ? undefined : this.domains.get(hostname.toLowerCase());
  }

  /** One comparison with the live deployments at a time; a failure is logged and the table kept. */
  refresh(): Promise<void> {
    this.running ??= this.reload()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not refresh the hosting domains'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async reload(): Promise<void> {
    const records = await this.apps.list();
    const stamps = await this.deployments.liveStamps(records.map((record) => record._id));
    const ids = new Set(records.map((record) => record._id));
    for (const appId of this.known.keys()) if (!ids.has(appId)) this.known.delete(appId);
    for (const record of records) {
      const deploymentId = stamps.get(record._id)?.deploymentId ?? '';
      if (this.known.get(record._id)?.deploymentId === deploymentId) continue;
      let app = await this.deployed.byId(record._id);
      // This process has not heard of the deployment yet: read it now rather than keep the cached one.
      if ((app.deployment?._id ?? '') !== deploymentId) {
        this.deployed.invalidate(record._id);
        app = await this.deployed.byId(record._id);
      }
      const settings = hostingSettings(app.config.settings.hosting);
      const domains = settings.enabled ? [settings.customDomain, settings.appDefaultDomain].filter((domain): domain is string => domain !== undefined) : [];
      this.known.set(record._id, { deploymentId: app.deployment?._id ?? '', domains });
    }
    const next = new Map<string, string>();
    for (const [appId, entry] of [...this.known].sort(([a], [b]) => (a < b ? -1 : 1))) {
      for (const domain of entry.domains) {
        const holder = next.get(domain);
        if (holder && holder !== appId) this.logger.warn({ domain, apps: [holder, appId] }, `two apps host at ${domain}: serving app ${holder}`);
        else next.set(domain, appId);
      }
    }
    this.domains = next;
  }
}
