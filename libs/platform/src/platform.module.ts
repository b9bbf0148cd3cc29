import { type DynamicModule, Global, Module } from '@nestjs/common';
import { SETTINGS, type Settings } from '@tessera/settings';
import { FileAdminUserStore } from './admin-users';
import { AppRegistry, FileAppRegistry } from './app-registry';
import { FileDeploymentStore } from './deployment-store';
import { SigningKeyStore } from './signing-keys';

/** Provides the settings and the platform stores to every service module of a process. */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(settings: Settings): DynamicModule {
    return {
      module: PlatformModule,
      providers: [
        { provide: SETTINGS, useValue: settings },
        { provide: AppRegistry, useValue: new FileAppRegistry(settings.dataDir) },
        { provide: FileDeploymentStore, useValue: new FileDeploymentStore(settings.dataDir) },
        { provide: FileAdminUserStore, useValue: new FileAdminUserStore(settings.dataDir) },
        { provide: SigningKeyStore, useValue: new SigningKeyStore(settings.dataDir) },
      ],
      exports: [SETTINGS, AppRegistry, FileDeploymentStore, FileAdminUserStore, SigningKeyStore],
    };
  }
}
