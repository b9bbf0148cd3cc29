import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadValidApp, readDirectoryFiles, writeAppFiles, type AppConfig } from '@tessera/app-config';
import { AppRegistryError, AppRegistryErrorCode, applyDeclaredIndexes, importFilePlatformState, type AdminUserStore, type AppRecord, type AppRegistry, type DataSources, type DeploymentStore, type FileImportSummary, type PlatformDatabase, type SecretsAtRest } from '@tessera/platform';
import type { Settings } from '@tessera/settings';

export interface BootstrapResult {
  groupId: string;
  adminUsername: string;
  generatedAdminPassword?: string;
  /** The example app, when this start created it. */
  createdExample?: AppRecord;
  /** What this start imported from the files an earlier release kept the platform state in. */
  imported?: FileImportSummary;
  apps: AppRecord[];
}

/**
 * The example app, read and validated before the process opens any state: an invalid example stops the
 * start with every violation listed (AppConfigError) and nothing written. Undefined when none is
 * configured or its directory does not exist (then only an empty platform, which needs it, fails).
 */
export async function loadExampleApp(settings: Settings): Promise<AppConfig | undefined> {
  if (!settings.exampleAppDir || !existsSync(resolve(settings.exampleAppDir))) return undefined;
  return loadValidApp(await readDirectoryFiles(resolve(settings.exampleAppDir))).app;
}

/** The example app an empty platform starts with; a missing directory is a bad setting, said as one. */
async function readExampleApp(dir: string): Promise<AppConfig> {
  if (!existsSync(resolve(dir))) {
    throw new Error(`TESSERA_EXAMPLE_APP: no app directory at ${resolve(dir)} to create the first app from; name an app directory, or set it to none to start with no app`);
  }
  return loadValidApp(await readDirectoryFiles(resolve(dir))).app;
}

/**
 * First-start work: the state an earlier release kept in files moves into the platform database, then the
 * admin user and group, and on an empty platform the example app, created and deployed from
 * `examples/todo` so a newcomer sees a working app at once.
 */
export async function bootstrapPlatform(
  settings: Settings,
  stores: { db: PlatformDatabase; admins: AdminUserStore; apps: AppRegistry; deployments: DeploymentStore; secretsAtRest: SecretsAtRest; dataSources: DataSources },
  loadedExample: AppConfig | undefined,
): Promise<BootstrapResult> {
  const imported = await importFilePlatformState(settings.dataDir, stores.db);
  if (imported) await stores.secretsAtRest.sealStored();
  let apps = await stores.apps.list();
  const example = apps.length === 0 && settings.exampleAppDir ? (loadedExample ?? (await readExampleApp(settings.exampleAppDir))) : undefined;
  const admin = await stores.admins.bootstrap(settings.admin.username, settings.admin.password);
  let createdExample: AppRecord | undefined;
  if (example) {
    try {
      createdExample = await stores.apps.create({ name: example.settings.name, groupId: admin.groupId });
      // As every push does, so that the first pull then push of the example finds nothing to change.
      // Its declared indexes first, as a push makes them.
      await applyDeclaredIndexes((cluster) => stores.dataSources.forCluster(cluster), undefined, example);
      await stores.deployments.deploy(createdExample._id, writeAppFiles({ ...example, settings: { ...example.settings, app_id: createdExample.client_app_id } }), { origin: 'example' });
    } catch (error) {
      // Another admin API replica starting at the same time created it.
      if (!(error instanceof AppRegistryError && error.errorCode === AppRegistryErrorCode.AppExists)) throw error;
    }
    apps = await stores.apps.list();
  }
  return {
    groupId: admin.groupId,
    adminUsername: admin.username,
    ...(admin.generatedPassword ? { generatedAdminPassword: admin.generatedPassword } : {}),
    ...(createdExample ? { createdExample } : {}),
    ...(imported ? { imported } : {}),
    apps,
  };
}
