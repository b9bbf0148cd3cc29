import { Module } from '@nestjs/common';
import { FunctionCalls } from '@tessera/messaging';
import { DataSources } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import { ApiKeysService } from './auth/api-keys.service';
import { ApiKeysController, AuthController, UserpassController } from './auth/auth.controller';
import { AuthService } from './auth/auth.service';
import { Mailer, OutboxFileMailer } from './auth/mailer';
import { RegistrationCommandsHandler } from './auth/registration-commands.handler';
import { OAuthLogins } from './auth/oauth-logins';
import { OAuthRedirectController } from './auth/oauth-redirect.controller';
import { ProviderLogins } from './auth/provider-logins';
import { UserpassService } from './auth/userpass.service';
import { ClientApps } from './client-apps.service';
import { LenientJsonBodyParser } from './ejson-body';
import { ClientApiAccessList } from './edge/client-api-access-list';
import { ClientApiCors } from './edge/client-api-cors';
import { FunctionsController } from './functions/functions.controller';
import { FunctionsService } from './functions/functions.service';
import { RemoteDataAccess } from './functions/remote-data-access.port';
import { RulesRemoteDataAccess } from './functions/rules-data-access';
import { DataAccess } from '@tessera/data-access';
import { PushController } from './push/push.controller';

/**
 * The client API v2.0 except the location endpoint: auth providers, sessions, API keys, function calls,
 * the data-source service (under the app's rules, through libs/data-access) and watch streams. Needs the
 * platform (global PlatformModule); function calls need a global MessageBus, without which they answer
 * 503 and everything else works.
 */
@Module({
  controllers: [AuthController, OAuthRedirectController, UserpassController, ApiKeysController, FunctionsController, PushController, RegistrationCommandsHandler],
  providers: [
    ClientApps,
    AuthService,
    ProviderLogins,
    OAuthLogins,
    UserpassService,
    ApiKeysService,
    FunctionCalls,
    FunctionsService,
    LenientJsonBodyParser,
    ClientApiCors,
    ClientApiAccessList,
    { provide: RemoteDataAccess, useFactory: (dataSources: DataSources, dataAccess: DataAccess) => new RulesRemoteDataAccess(dataSources, dataAccess), inject: [DataSources, DataAccess] },
    { provide: Mailer, useFactory: (settings: Settings) => new OutboxFileMailer(settings.dataDir), inject: [SETTINGS] },
  ],
  exports: [ClientApps, AuthService, RemoteDataAccess],
})
export class ClientApiModule {}
