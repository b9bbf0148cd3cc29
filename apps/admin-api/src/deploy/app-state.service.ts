import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Subjects } from '@tessera/contracts';
import { MessageBus } from '@tessera/messaging';
import {
  emptyApp,
  formatViolations,
  hostedFiles,
  isHostingContentPath,
  keepLinkedClusters,
  readAppFiles,
  stringifyJson,
  validateApp,
  writeAppFiles,
  type AppConfig,
  type AppFiles,
  type ConfigViolation,
} from '@tessera/app-config';
import {
  applyDeclaredIndexes,
  AppRegistry,
  DataSources,
  DeclaredIndexError,
  DEPLOYMENT_FOLLOW_WAIT_MS,
  DeploymentFollowers,
  DeploymentStore,
  HostingStore,
  SecretStore,
  SyncStateStore,
  type AppRecord,
  type DeploymentRecord,
  type HostedFileInput,
  type SyncState,
} from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { diffAppFiles } from '../common/file-diff';
import { hostingDiffLines } from '../hosting/hosting-diff';
import { checkSyncSource, locateSync, planSyncTransition } from './sync-transition';

/** Where a deployment came from: app creation, an import or push of files, or an edit through an endpoint. */
const SETTINGS_FILE = 'config.json';

export type DeployOrigin = 'create' | 'import' | 'edit';

export interface PreparedDeployment {
  record: AppRecord;
  /** The configuration that will go live, in the current layout, without secret values. */
  app: AppConfig;
  files: AppFiles;
  /** One string per changed file (see diffAppFiles). */
  diff: string[];
  /** Accepted as App Services accepts it, worth telling the user (a function given the default config). */
  warnings: ConfigViolation[];
  /** Secret values carried by the incoming files (secrets.json), stored apart from the configuration. */
  secretValues: Record<string, string>;
  syncState: SyncState;
  syncChanged: boolean;
  /** The hosted files the incoming directory carries (hosting/metadata.json, hosting/files): they replace the app's. */
  hosting?: HostedFileInput[];
  /** The configuration live before this one (its declared indexes that this one drops are dropped). */
  previousApp: AppConfig;
}

/**
 * The configuration an app runs with, and the one gate every change goes through: whatever the source
 * (creation, import, push, PATCH of a service), the whole app is read, validated and checked against the
 * sync state machine before anything is written. A refused change leaves the app exactly as it was.
 */
@Injectable()
export class AppStateService {
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly logger = new Logger('AppState');

  constructor(
    private readonly apps: AppRegistry,
    private readonly deployments: DeploymentStore,
    private readonly secrets: SecretStore,
    private readonly syncStates: SyncStateStore,
    private readonly hostingStore: HostingStore,
    private readonly dataSources: DataSources,
    @Inject(SETTINGS) private readonly settings: Settings,
    @Optional() private readonly bus?: MessageBus,
    @Optional() private readonly followers?: DeploymentFollowers,
  ) {}

  /** The app, which must belong to the group. */
  async app(groupId: string, appId: string): Promise<AppRecord> {
    const record = await this.apps.get(appId);
    if (record.group_id !== groupId) throw new AdminApiError(AdminApiErrorCode.GroupNotFound, `app not found: '${appId}'`);
    return record;
  }

  /** The live files: the current deployment, or an empty app when there is none yet. */
  async liveFiles(record: AppRecord): Promise<AppFiles> {
    const current = await this.deployments.current(record._id);
    if (current) return withClientAppId(current.files, record.client_app_id);
    const app = emptyApp(record.name);
    app.settings.app_id = record.client_app_id;
    return writeAppFiles(app);
  }

  async liveApp(record: AppRecord): Promise<AppConfig> {
    return readAppFiles(await this.liveFiles(record)).app;
  }

  /** Checks a proposed app directory (any layout) against everything; throws AdminApiError listing every problem. */
  async prepare(record: AppRecord, incoming: AppFiles, origin: DeployOrigin, base?: AppFiles): Promise<PreparedDeployment> {
    const loaded = readAppFiles(incoming);
    const app = loaded.app;
    app.settings.name = record.name;
    app.settings.app_id = record.client_app_id;

    const secretValues: Record<string, string> = {};
    const violations: ConfigViolation[] = [...loaded.violations];
    if (app.secrets) app.secrets = flatSecrets(app, app.secrets);
    for (const [name, value] of Object.entries(app.secrets ?? {})) {
      if (typeof value === 'string' && value !== '') secretValues[name] = value;
      else if (typeof value !== 'string') violations.push({ file: 'secrets.json', path: name, rule: 'secret.value.type', message: `the value of secret "${name}" must be a string` });
    }
    const knownSecrets = Object.fromEntries((await this.secrets.list(record._id)).map((secret) => [secret.name, '']));
    app.secrets = { ...knownSecrets, ...app.secrets };
    const previousFiles = base ?? (await this.liveFiles(record));
    const previousApp = readAppFiles(previousFiles).app;
    // A cluster service that names no cluster (a Stitch template export) keeps the cluster the app links.
    const warnings = [...loaded.warnings, ...keepLinkedClusters(app, previousApp, loaded.fileOf)];
    // The refresh token lifetime and the IP access list are set through the admin API, apart from the files
    // App Services exported: a push whose config.json does not name them (an export, an older pull) keeps the app's.
    for (const key of ['refresh_token_expiration_seconds', 'ip_access_list'] as const) {
      const kept = previousApp.settings.security?.[key];
      if (kept !== undefined && app.settings.security?.[key] === undefined) app.settings.security = { ...app.settings.security, [key]: kept };
    }
    violations.push(...validateApp(app, { fileOf: loaded.fileOf, warnings }));
    delete app.secrets;

    const previous = locateSync(previousApp);
    const next = locateSync(app);
    violations.push(...checkSyncSource(app, next));
    const unique = dedupe(violations);
    if (unique.length > 0) throw new AdminApiError(AdminApiErrorCode.InvalidConfiguration, formatViolations(unique), unique);

    const current = await this.deployments.current(record._id);
    const transition = planSyncTransition(previous, next, await this.syncStates.get(record._id), {
      allowNewPartitionSync: this.settings.allowNewPartitionSync,
      firstImport: origin === 'import' && (!current || current.record.origin === 'create'),
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    if (!transition.ok) throw new AdminApiError(AdminApiErrorCode[transition.code], transition.message, transition.violations);

    // Hosted files live in HostingStore, apart from the configuration each deployment keeps whole. A
    // deployment stored before that carries them: unless this one brings its own, they move there now.
    const carried = app.hosting ?? (previousApp.hosting && (await this.hostingStore.list(record._id)).length === 0 ? previousApp.hosting : undefined);
    const hosting = carried ? hostedFiles(carried) : undefined;
    delete app.hosting;
    const files = writeAppFiles(app);
    const previousConfig = new Map([...previousFiles].filter(([path]) => !isHostingContentPath(path)));
    const diff = [...diffAppFiles(previousConfig, files), ...(hosting ? await hostingDiffLines(this.hostingStore, record._id, hosting) : [])];
    return { record, app, files, diff, warnings, secretValues, syncState: transition.state, syncChanged: transition.event !== 'none', previousApp, ...(hosting ? { hosting } : {}) };
  }

  /** Makes a prepared configuration live. `headers`: the correlation id and trace context its announcement carries. */
  async commit(prepared: PreparedDeployment, origin: DeployOrigin, userId: string | undefined, headers?: Readonly<Record<string, string>>, name?: string): Promise<DeploymentRecord> {
    const appId = prepared.record._id;
    // The declared indexes first: one that cannot be made (a unique index over duplicates) refuses the deploy.
    try {
      await applyDeclaredIndexes((cluster) => this.dataSources.forCluster(cluster), prepared.previousApp, prepared.app);
    } catch (error) {
      if (!(error instanceof DeclaredIndexError)) throw error;
      throw new AdminApiError(AdminApiErrorCode.InvalidConfiguration, `${error.message}; nothing was deployed`);
    }
    if (Object.keys(prepared.secretValues).length > 0) await this.secrets.upsert(appId, prepared.secretValues);
    if (prepared.hosting) await this.hostingStore.replaceAll(appId, prepared.hosting);
    const deployment = await this.deployments.deploy(appId, prepared.files, { origin, ...(userId ? { userId } : {}), ...(name ? { name } : {}) });
    if (prepared.syncChanged) await this.syncStates.save(appId, prepared.syncState);
    await this.announce(deployment, headers);
    return deployment;
  }

  /**
   * Tells every service that caches app configuration to reload (`apps.deployment.changed`). The
   * deployment is already live on disk; a lost announcement leaves caches stale, not the deploy undone.
   */
  private async announce(deployment: DeploymentRecord, headers: Readonly<Record<string, string>> | undefined): Promise<void> {
    if (this.bus) {
      try {
        await this.bus.emit(Subjects.AppsDeploymentChanged, { appId: deployment.app_id, deploymentId: deployment._id, version: deployment.version }, headers ? { headers } : {});
      } catch (error) {
        this.logger.warn({ err: error, appId: deployment.app_id }, 'could not announce a deployment: caches of other services may serve the previous one');
      }
    }
    // A write made as soon as the deploy is answered must fire the app's new triggers (see DeploymentFollowers).
    await this.followers?.deployed(deployment.app_id);
    // In distributed mode the change publishers run in the function runtime's processes: one of them opens
    // the app's new feeds before the deploy is answered (none running, or too slow: the deploy stands).
    if (this.bus && !this.bus.local) {
      await this.bus
        .request(Subjects.FunctionsChangeFeedsFollow, { appId: deployment.app_id }, { timeoutMs: DEPLOYMENT_FOLLOW_WAIT_MS + 1_000, ...(headers ? { headers } : {}) })
        .catch((error: unknown) => this.logger.debug({ err: error, appId: deployment.app_id }, 'no function runtime confirmed following the deployment'));
    }
  }

  /** Prepares and commits under the app's lock, so concurrent changes apply one after the other. `name`: the deployment's, if the caller gave one. */
  deploy(record: AppRecord, incoming: AppFiles, origin: DeployOrigin, userId: string | undefined, name?: string): Promise<{ prepared: PreparedDeployment; deployment: DeploymentRecord }> {
    return this.exclusive(record._id, async () => {
      const prepared = await this.prepare(record, incoming, origin);
      return { prepared, deployment: await this.commit(prepared, origin, userId, undefined, name) };
    });
  }

  /**
   * Changes the live model with `change` and deploys the result. `headers`: the correlation id and trace
   * context of the bus message that asked for the change, if one did (the announcement carries them on).
   */
  async edit(record: AppRecord, userId: string | undefined, change: (app: AppConfig) => void, headers?: Readonly<Record<string, string>>): Promise<PreparedDeployment> {
    return this.exclusive(record._id, async () => {
      const app = await this.liveApp(record);
      change(app);
      const prepared = await this.prepare(record, writeAppFiles(app), 'edit');
      await this.commit(prepared, 'edit', userId, headers);
      return prepared;
    });
  }

  exclusive<T>(appId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(appId) ?? Promise.resolve();
    const run = previous.then(work, work);
    const settled = run.catch(() => undefined);
    this.locks.set(appId, settled);
    void settled.then(() => {
      if (this.locks.get(appId) === settled) this.locks.delete(appId);
    });
    return run;
  }
}

/**
 * Every push writes the app's client id into config.json (prepare), but the example app deployed at first
 * start by an earlier release was stored without it: give those files the id a push would write, so that a
 * pull then a push (or a diff) finds no change.
 */
function withClientAppId(files: AppFiles, clientAppId: string): AppFiles {
  const config = files.get(SETTINGS_FILE);
  if (!config) return files;
  let settings: Record<string, unknown>;
  try {
    settings = JSON.parse(new TextDecoder().decode(config)) as Record<string, unknown>;
  } catch {
    return files;
  }
  if (settings['app_id'] === clientAppId) return files;
  return new Map(files).set(SETTINGS_FILE, new TextEncoder().encode(stringifyJson({ ...settings, app_id: clientAppId })));
}

function dedupe(violations: ConfigViolation[]): ConfigViolation[] {
  const seen = new Set<string>();
  return violations.filter((violation) => {
    const key = `${violation.file}\u0000${violation.path}\u0000${violation.rule}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * secrets.json as name -> value. realm-cli (and stitch-cli before it) wrote it nested, by owner and option:
 * `{ auth_providers: { <provider>: { <option>: value } }, services: { <service>: { <option>: value } } }`;
 * each option's value goes to the secret its owner's `secret_config` names for it (the option's own name
 * when none does). The validator has checked that nested values are strings.
 */
function flatSecrets(app: AppConfig, secrets: Record<string, unknown>): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(secrets)) {
    const owners = name === 'auth_providers' ? app.authProviders : name === 'services' ? app.services.map((service) => service.config) : undefined;
    if (!owners || typeof value !== 'object' || value === null || Array.isArray(value)) {
      flat[name] = value;
      continue;
    }
    for (const [ownerName, options] of Object.entries(value as Record<string, unknown>)) {
      if (typeof options !== 'object' || options === null) continue;
      const secretConfig = owners.find((owner) => owner.name === ownerName || owner.type === ownerName)?.secret_config ?? {};
      for (const [option, secretValue] of Object.entries(options as Record<string, unknown>)) {
        const named = secretConfig[option];
        flat[typeof named === 'string' && named !== '' ? named : option] = secretValue;
      }
    }
  }
  return flat;
}
