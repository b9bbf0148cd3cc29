import { resolve } from 'node:path';
import { loadValidApp, readDirectoryFiles, writeAppFiles } from '@tessera/app-config';
import { type AppRegistry, type FileAdminUserStore, type FileDeploymentStore, type AppRecord } from '@tessera/platform';
import type { Settings } from '@tessera/settings';

export interface BootstrapResult {
  groupId: string;
  adminUsername: string;
  generatedAdminPassword?: string;
  /** The example app, when this start created it. */
  createdExample?: AppRecord;
  apps: AppRecord[];
}

/**
 * First-start work: the admin user and group, and on an empty data directory the example app, created
 * and deployed from `examples/todo` so a newcomer sees a working app at once.
 */
export async function bootstrapPlatform(
  settings: Settings,
  stores: { admins: FileAdminUserStore; apps: AppRegistry; deployments: FileDeploymentStore },
): Promise<BootstrapResult> {
  let apps = await stores.apps.list();
  // An invalid example stops the start with every violation listed (AppConfigError) before any state is written.
  const example = apps.length === 0 && settings.exampleAppDir ? loadValidApp(await readDirectoryFiles(resolve(settings.exampleAppDir))).app : undefined;
  const admin = await stores.admins.bootstrap(settings.admin.username, settings.admin.password);
  let createdExample: AppRecord | undefined;
  if (example) {
    createdExample = await stores.apps.create({ name: example.settings.name, groupId: admin.groupId });
    await stores.deployments.deploy(createdExample._id, writeAppFiles(example), { origin: 'example' });
    apps = [createdExample];
  }
  return {
    groupId: admin.groupId,
    adminUsername: admin.username,
    ...(admin.generatedPassword ? { generatedAdminPassword: admin.generatedPassword } : {}),
    ...(createdExample ? { createdExample } : {}),
    apps,
  };
}
