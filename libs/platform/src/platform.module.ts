import { AuthEvents } from './auth-events';
import { type DynamicModule, Global, Injectable, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { LoginRateLimiter } from '@tessera/credentials';
import { isDuplicateKeyError } from '@tessera/datastore';
import { SETTINGS, type Settings } from '@tessera/settings';
import { AdminApiKeyStore } from './admin-api-keys';
import { AdminUserStore } from './admin-users';
import { AppRegistry, DatastoreAppRegistry } from './app-registry';
import { DataSources } from './data-sources';
import { DeployedApps } from './deployed-apps';
import { DeploymentStore } from './deployment-store';
import { DraftStore } from './draft-store';
import { DependencyStore } from './dependency-store';
import { HostingStore } from './hosting-store';
import { DatastoreLogStore, LogStore } from './log-store';
import { PlatformDatabase } from './platform-database';
import { SecretStore } from './secret-store';
import { SecretsCipher } from './secrets-cipher';
import { SigningKeyStore } from './signing-keys';
import { SyncStateStore } from './sync-state-store';
import { DeploymentFollowers } from './deployment-followers';

/** How often a distributed process compares its cached deployments with the live stamps (decision 0023). */
export const DEPLOYMENT_RECHECK_INTERVAL_MS = 15_000;

/**
 * Keeps this process's deployed configuration converging on the live one: `reconcile()` on demand (the host
 * calls it when its broker connection comes back) and, in distributed mode, every few seconds, for an
 * `apps.deployment.changed` that never reached this process.
 */
@Injectable()
export class DeploymentReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('DeployedApps');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly apps: DeployedApps,
    private readonly intervalMs: number | undefined,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.intervalMs) return;
    this.timer = setInterval(() => void this.reconcile('periodic check'), this.intervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Reloads every cached app whose live deployment changed; one check at a time, failures only logged. */
  reconcile(reason: string): Promise<void> {
    this.running ??= (async () => {
      try {
        const reloaded = await this.apps.reconcile();
        if (reloaded.length > 0) this.logger.log({ apps: reloaded, reason }, `reloading ${reloaded.length} app(s) whose deployment changed`);
      } catch (error) {
        this.logger.warn({ err: error, reason }, 'could not compare cached deployments with the live ones');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }
}

/** Closes the data-source clients (flushing embedded logs) when the process shuts down. */
@Injectable()
class DataSourcesLifecycle implements OnApplicationShutdown {
  constructor(private readonly dataSources: DataSources) {}

  async onApplicationShutdown(): Promise<void> {
    await this.dataSources.closeAll();
  }
}

/**
 * Keeps what the platform stores secret encrypted at rest, once at boot, before any request: checks the
 * secrets key opens what is stored (a wrong key stops the process with a message naming the setting),
 * seals what an earlier release stored in clear and reseals what an older key sealed (rotation).
 */
@Injectable()
export class SecretsAtRest implements OnApplicationBootstrap {
  private readonly logger = new Logger('SecretsAtRest');

  constructor(
    private readonly db: PlatformDatabase,
    private readonly cipher: SecretsCipher,
    private readonly secrets: SecretStore,
    private readonly signingKeys: SigningKeyStore,
    private readonly enabled: boolean,
  ) {}

  onApplicationBootstrap(): Promise<void> {
    return this.sealStored();
  }

  /** Also run after the one-time import of an earlier release's files, which wrote their secrets in clear. */
  async sealStored(): Promise<void> {
    if (!this.enabled) return;
    await this.checkKey();
    const secrets = await this.secrets.sealStored();
    const keys = await this.signingKeys.sealStored();
    if (secrets + keys > 0) this.logger.log({ secrets, signingKeys: keys, keyId: this.cipher.currentKeyId }, `encrypted ${secrets} secret(s) and ${keys} signing key(s) at rest with key id ${this.cipher.currentKeyId}`);
  }

  /** A sealed marker in `meta`: a wrong key is caught at boot even before any secret exists. */
  private async checkKey(): Promise<void> {
    const meta = await this.db.collection('meta');
    const context = 'meta:secrets_key_check';
    let marker = await meta.findOne({ _id: 'secrets_key_check' });
    if (!marker) {
      try {
        await meta.insertOne({ _id: 'secrets_key_check', sealed: { ...this.cipher.sealText('tessera', context) } });
        return;
      } catch (error) {
        // Another replica wrote it first: it must open with this process's key too.
        if (!isDuplicateKeyError(error)) throw error;
        marker = await meta.findOne({ _id: 'secrets_key_check' });
      }
    }
    this.cipher.openText(marker?.['sealed'], context);
    if (this.cipher.isStale(marker?.['sealed'])) await meta.updateOne({ _id: 'secrets_key_check' }, { $set: { sealed: { ...this.cipher.sealText('tessera', context) } } });
  }
}

/**
 * Provides the settings and the platform stores to every service module of a process. Every store keeps
 * its state in the platform cluster (`tessera-platform`), so every process of a distributed deployment
 * sees the same apps, deployments, administrators, secrets, logs and keys.
 */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(settings: Settings, options: { deploymentRecheckIntervalMs?: number } = {}): DynamicModule {
    const dataSources = new DataSources(settings);
    const db = new PlatformDatabase(dataSources.platform());
    const apps = new DatastoreAppRegistry(db);
    const deployments = new DeploymentStore(db);
    const deployedApps = new DeployedApps(apps, deployments);
    // A process running only the datastore service keeps no secrets, and in distributed mode has no key.
    const keepsSecrets = settings.services.some((service) => service !== 'datastore');
    const cipher = keepsSecrets ? SecretsCipher.fromSettings(settings) : SecretsCipher.unavailable('this process runs only the datastore service');
    const secrets = new SecretStore(db, cipher);
    const signingKeys = new SigningKeyStore(db, cipher, settings.signingKey);
    const recheck = options.deploymentRecheckIntervalMs ?? (settings.mode === 'distributed' ? DEPLOYMENT_RECHECK_INTERVAL_MS : undefined);
    return {
      module: PlatformModule,
      providers: [
        { provide: SETTINGS, useValue: settings },
        { provide: DataSources, useValue: dataSources },
        { provide: PlatformDatabase, useValue: db },
        { provide: AppRegistry, useValue: apps },
        { provide: DeploymentStore, useValue: deployments },
        { provide: DeployedApps, useValue: deployedApps },
        { provide: DeploymentFollowers, useValue: new DeploymentFollowers() },
        { provide: DeploymentReconciler, useValue: new DeploymentReconciler(deployedApps, recheck) },
        { provide: LogStore, useValue: new DatastoreLogStore(db) },
        { provide: AdminUserStore, useValue: new AdminUserStore(db) },
        { provide: AdminApiKeyStore, useValue: new AdminApiKeyStore(db) },
        { provide: DraftStore, useValue: new DraftStore(db) },
        { provide: HostingStore, useValue: new HostingStore(db) },
        { provide: DependencyStore, useValue: new DependencyStore(db) },
        { provide: SecretsCipher, useValue: cipher },
        { provide: SecretStore, useValue: secrets },
        { provide: SyncStateStore, useValue: new SyncStateStore(db) },
        { provide: SigningKeyStore, useValue: signingKeys },
        { provide: SecretsAtRest, useValue: new SecretsAtRest(db, cipher, secrets, signingKeys, keepsSecrets) },
        // One per process: the client API's providers and the admin API count failed logins in it.
        { provide: LoginRateLimiter, useValue: new LoginRateLimiter() },
        AuthEvents,
        DataSourcesLifecycle,
      ],
      exports: [
        SETTINGS,
        DataSources,
        PlatformDatabase,
        AppRegistry,
        DeploymentStore,
        DeployedApps,
        DeploymentFollowers,
        DeploymentReconciler,
        LogStore,
        AdminUserStore,
        AdminApiKeyStore,
        DraftStore,
        HostingStore,
        DependencyStore,
        SecretsCipher,
        SecretStore,
        SyncStateStore,
        SigningKeyStore,
        LoginRateLimiter,
        AuthEvents,
      ],
    };
  }
}
