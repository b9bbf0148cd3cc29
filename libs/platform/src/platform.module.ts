import { type DynamicModule, Global, Module } from '@nestjs/common';
import { SETTINGS, type Settings } from '@tessera/settings';
import { FileAdminUserStore } from './admin-users';
import { AppRegistry, FileAppRegistry } from './app-registry';
import { DeployedApps } from './deployed-apps';
import { FileDeploymentStore } from './deployment-store';
import { SigningKeyStore } from './signing-keys';

/** Provides the settings and the platform stores to every service module of a process. */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(settings: Settings): DynamicModule {
    const apps = new FileAppRegistry(settings.dataDir);
    const deployments = new FileDeploymentStore(settings.dataDir);
    return {
      module: PlatformModule,
      providers: [
        { provide: SETTINGS, useValue: settings },
        { provide: AppRegistry, useValue: apps },
        { provide: FileDeploymentStore, useValue: deployments },
        { provide: DeployedApps, useValue: new DeployedApps(apps, deployments) },
        { provide: FileAdminUserStore, useValue: new FileAdminUserStore(settings.dataDir) },
        { provide: SigningKeyStore, useValue: new SigningKeyStore(settings.dataDir) },
      ],
      exports: [SETTINGS, AppRegistry, FileDeploymentStore, DeployedApps, FileAdminUserStore, SigningKeyStore],
    };
  }
}
