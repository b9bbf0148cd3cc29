import { Module } from '@nestjs/common';
import { DataAccess, DataAccessModule } from '@tessera/data-access';
import { DataSources, DependencyStore, DeployedApps, LogStore } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import { ChangePublisher } from '../change-events/change-publisher';
import { FunctionRuntimeModule } from '../function-runtime.module';
import { NodeHttpPort } from '../ports/http.port';
import { FunctionsExecutionHandler } from './functions-execution.handler';
import { PlatformExecutionLogStore } from './platform-execution-logs';
import { AuthenticationTriggerHandler } from '../triggers/authentication-trigger.handler';
import { DatabaseTriggerConsumer } from '../triggers/database-trigger.consumer';
import { DatabaseTriggerRunner } from '../triggers/database-trigger-runner';
import { ScheduledTriggers } from '../triggers/scheduled-triggers';
import { TriggerClaims } from '../triggers/trigger-claims';
import { DeployedFunctionsPort, DeployedValuesPort, PlatformDependenciesPort, PlatformUsersPort, RulesDataAccessPort, rulesCanEvaluate } from './platform-ports';

/**
 * The function runtime as a service of the host: the engine wired to the platform (deployed functions,
 * values, data access under rules) and answering `functions.execution.run` on the transport; the change
 * publisher (linked data sources' changes onto the durable stream) and the database triggers consuming it.
 */
@Module({
  imports: [
    DataAccessModule,
    FunctionRuntimeModule.registerAsync({
      imports: [DataAccessModule],
      inject: [DeployedApps, DataSources, LogStore, DataAccess, SETTINGS, DependencyStore],
      useFactory: (apps: DeployedApps, dataSources: DataSources, logs: LogStore, dataAccess: DataAccess, settings: Settings, dependencyStore: DependencyStore) => ({
        options: { timeLimitMs: settings.functionTimeLimitMs },
        dependencies: {
          functions: new DeployedFunctionsPort(apps),
          values: new DeployedValuesPort(apps),
          dataAccess: new RulesDataAccessPort(apps, dataAccess),
          http: new NodeHttpPort({ allow: settings.functionHttpAllow }),
          logs: new PlatformExecutionLogStore(logs),
          canEvaluate: rulesCanEvaluate,
          users: new PlatformUsersPort(dataSources),
          dependencies: new PlatformDependenciesPort(dependencyStore),
        },
      }),
    }),
  ],
  controllers: [FunctionsExecutionHandler],
  providers: [ChangePublisher, TriggerClaims, DatabaseTriggerRunner, DatabaseTriggerConsumer, AuthenticationTriggerHandler, ScheduledTriggers],
})
export class FunctionRuntimeServiceModule {}
