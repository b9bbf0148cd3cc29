import { Module } from '@nestjs/common';
import { FunctionCalls } from '@tessera/messaging';
import { FileTemplateStore } from '@tessera/platform';
import { SETTINGS } from '@tessera/settings';
import { AdminApiKeysController } from './admin-api-keys/admin-api-keys.controller';
import { ApiKeysController } from './api-keys/api-keys.controller';
import { ApiKeysService } from './api-keys/api-keys.service';
import { AppsController } from './apps/apps.controller';
import { AppsService } from './apps/apps.service';
import { AdminAuthController } from './auth/admin-auth.controller';
import { AdminAuthGuard } from './auth/admin-auth.guard';
import { AdminAuthService } from './auth/admin-auth.service';
import { ApiKeyLoginController } from './auth/api-key-login.controller';
import { ZipBodyParser } from './common/zip-body';
import { ConsoleController } from './console/console.controller';
import { ConsoleFiles } from './console/console-files';
import { AppStateService } from './deploy/app-state.service';
import { DependenciesController } from './dependencies/dependencies.controller';
import { DependenciesService } from './dependencies/dependencies.service';
import { DraftsController } from './drafts/drafts.controller';
import { FunctionsController } from './functions/functions.controller';
import { GraphqlSchemaController } from './graphql-schema/graphql-schema.controller';
import { HostingAssetsController } from './hosting/hosting-assets.controller';
import { HostingAssetsService } from './hosting/hosting-assets.service';
import { HostingBodyParser } from './hosting/hosting-body';
import { ImportExportController } from './import-export/import-export.controller';
import { ImportExportService } from './import-export/import-export.service';
import { LogForwardersController } from './log-forwarders/log-forwarders.controller';
import { LogForwardingWorker } from './log-forwarders/log-forwarding.worker';
import { LogsController } from './logs/logs.controller';
import { MetricsController } from './metrics/metrics.controller';
import { RulesEvaluationController } from './rules-evaluation/rules-evaluation.controller';
import { RulesEvaluationService } from './rules-evaluation/rules-evaluation.service';
import { SecretsController } from './secrets/secrets.controller';
import { AuthProvidersController } from './auth-providers/auth-providers.controller';
import { ServiceRulesController } from './services/service-rules.controller';
import { ServicesController } from './services/services.controller';
import { ServicesService } from './services/services.service';
import { StatusController } from './status/status.controller';
import { DevelopmentSchemaHandler } from './sync/development-schema.handler';
import { ClientSchemasController } from './sync/client-schemas.controller';
import { SyncController } from './sync/sync.controller';
import { SyncStatusService } from './sync/sync-status.service';
import { createTemplateStore } from './templates/template-catalog';
import { TemplatesController } from './templates/templates.controller';
import { TriggersController } from './triggers/triggers.controller';
import { UsersController } from './users/users.controller';
import { UserRegistrationsService } from './users/user-registrations.service';
import { UsersService } from './users/users.service';
import { ValuesController } from './values/values.controller';
import { DataApiConfigController } from './endpoints/data-api-config.controller';
import { EndpointsController } from './endpoints/endpoints.controller';
import { GraphqlConfigController } from './graphql-config/graphql-config.controller';
import { EnvironmentController } from './environment/environment.controller';
import { IncomingWebhooksController } from './incoming-webhooks/incoming-webhooks.controller';
import { AppMiscController } from './app-misc/app-misc.controller';
import { AccessListController } from './environment/access-list.controller';

/** The admin API v3.0. Its stores (apps, deployments, drafts, secrets, keys) come from the global PlatformModule. */
@Module({
  controllers: [
    DevelopmentSchemaHandler,
    AccessListController,
    ApiKeyLoginController,
    AdminAuthController,
    AdminApiKeysController,
    AppsController,
    ImportExportController,
    DraftsController,
    ServicesController,
    ServiceRulesController,
    AuthProvidersController,
    TriggersController,
    SyncController,
    ClientSchemasController,
    SecretsController,
    ValuesController,
    EndpointsController,
    DataApiConfigController,
    FunctionsController,
    TemplatesController,
    LogsController,
    LogForwardersController,
    MetricsController,
    UsersController,
    ApiKeysController,
    StatusController,
    RulesEvaluationController,
    GraphqlSchemaController,
    HostingAssetsController,
    DependenciesController,
    ConsoleController,
    GraphqlConfigController,
    EnvironmentController,
    IncomingWebhooksController,
    AppMiscController,
  ],
  providers: [
    AdminAuthService,
    AdminAuthGuard,
    ZipBodyParser,
    HostingBodyParser,
    HostingAssetsService,
    DependenciesService,
    AppStateService,
    AppsService,
    ImportExportService,
    ServicesService,
    UsersService,
    ApiKeysService,
    UserRegistrationsService,
    LogForwardingWorker,
    RulesEvaluationService,
    FunctionCalls,
    SyncStatusService,
    { provide: ConsoleFiles, useFactory: () => new ConsoleFiles() },
    { provide: FileTemplateStore, useFactory: createTemplateStore, inject: [SETTINGS] },
  ],
})
export class AdminApiModule {}
