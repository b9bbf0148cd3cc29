import { Module } from '@nestjs/common';
import { DataAccess } from '@tessera/data-access';
import { DataSources, DeployedApps } from '@tessera/platform';
import { InMemoryExecutionLogStore } from '../execution-logs/execution-log.store';
import { FunctionRuntimeModule } from '../function-runtime.module';
import { FetchHttpPort } from '../ports/http.port';
import { FunctionsExecutionHandler } from './functions-execution.handler';
import { DeployedFunctionsPort, DeployedValuesPort, RulesDataAccessPort, rulesCanEvaluate } from './platform-ports';

/**
 * The function runtime as a service of the host: the engine wired to the platform (deployed functions,
 * values, data access under rules) and answering `functions.execution.run` on the transport.
 */
@Module({
  imports: [
    FunctionRuntimeModule.registerAsync({
      inject: [DeployedApps, DataSources],
      useFactory: (apps: DeployedApps, dataSources: DataSources) => ({
        dependencies: {
          functions: new DeployedFunctionsPort(apps),
          values: new DeployedValuesPort(apps),
          dataAccess: new RulesDataAccessPort(apps, new DataAccess(dataSources)),
          http: new FetchHttpPort(),
          logs: new InMemoryExecutionLogStore(10_000),
          canEvaluate: rulesCanEvaluate,
        },
      }),
    }),
  ],
  controllers: [FunctionsExecutionHandler],
})
export class FunctionRuntimeServiceModule {}
