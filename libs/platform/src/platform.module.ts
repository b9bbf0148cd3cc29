import { type DynamicModule, Global, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { SETTINGS, type Settings } from '@tessera/settings';
import { FileAdminUserStore } from './admin-users';
import { AppRegistry, FileAppRegistry } from './app-registry';
import { DataSources } from './data-sources';
import { DeployedApps } from './deployed-apps';
import { FileDeploymentStore } from './deployment-store';
import { FileLogStore, LogStore } from './log-store';
import { SigningKeyStore } from './signing-keys';

/** Closes the data-source clients (flushing embedded logs) when the process shuts down. */
@Injectable()
class DataSourcesLifecycle implements OnApplicationShutdown {
  constructor(private readonly dataSources: DataSources) {}

  async onApplicationShutdown(): Promise<void> {
    await this.dataSources.closeAll();
  }
}

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
        { provide: DataSources, useValue: new DataSources(settings) },
        { provide: LogStore, useValue: new FileLogStore(settings.dataDir) },
        DataSourcesLifecycle,
        { provide: FileAdminUserStore, useValue: new FileAdminUserStore(settings.dataDir) },
        { provide: SigningKeyStore, useValue: new SigningKeyStore(settings.dataDir, settings.signingKey) },
      ],
      exports: [SETTINGS, AppRegistry, FileDeploymentStore, DeployedApps, DataSources, LogStore, FileAdminUserStore, SigningKeyStore],
    };
  }
}
