import { Module } from '@nestjs/common';
import { FileSecretStore } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import { ApiKeysService } from './client-api/auth/api-keys.service';
import { ApiKeysController, AuthController, UserpassController } from './client-api/auth/auth.controller';
import { AuthService } from './client-api/auth/auth.service';
import { Mailer, OutboxFileMailer } from './client-api/auth/mailer';
import { ProviderLogins } from './client-api/auth/provider-logins';
import { UserpassService } from './client-api/auth/userpass.service';
import { ClientApps } from './client-api/client-apps.service';
import { LenientJsonBodyParser } from './client-api/ejson-body';
import { LoginRateLimiter } from './client-api/edge/login-rate-limiter';
import { FunctionInvoker } from './client-api/functions/function-invoker';
import { FunctionsController } from './client-api/functions/functions.controller';
import { FunctionsService } from './client-api/functions/functions.service';
import { LocationController } from './location/location.controller';

/**
 * The client-facing HTTP edge: client API v2.0 (auth, functions, remote data access), GraphQL, webhooks
 * and hosting. It needs the platform (PlatformModule) and, for functions, a MessageBus; the data-source
 * service needs a RemoteDataAccess provider from the host.
 */
@Module({
  controllers: [LocationController, AuthController, UserpassController, ApiKeysController, FunctionsController],
  providers: [
    ClientApps,
    AuthService,
    ProviderLogins,
    UserpassService,
    ApiKeysService,
    FunctionInvoker,
    FunctionsService,
    LenientJsonBodyParser,
    { provide: LoginRateLimiter, useValue: new LoginRateLimiter() },
    { provide: FileSecretStore, useFactory: (settings: Settings) => new FileSecretStore(settings.dataDir), inject: [SETTINGS] },
    { provide: Mailer, useFactory: (settings: Settings) => new OutboxFileMailer(settings.dataDir), inject: [SETTINGS] },
  ],
})
export class GraphqlGatewayModule {}
