import { Global, Module } from '@nestjs/common';
import { Subjects } from '@tessera/contracts';
import { decodeEjson, encodeEjson, MessageBus } from '@tessera/messaging';
import { DataSources } from '@tessera/platform';
import { DataAccess } from './data-access.service';
import { DataAccessError, DataAccessErrorCode } from './data-access.error';

/**
 * One DataAccess per process, shared by the client API, GraphQL and the function runtime, so compiled rules
 * are cached once. `%function` in rules runs the app function as system over the bus.
 */
@Global()
@Module({
  providers: [
    {
      provide: DataAccess,
      inject: [DataSources, MessageBus],
      useFactory: (dataSources: DataSources, bus: MessageBus) =>
        new DataAccess(dataSources, {
          callFunction: async (appId, name, args) => {
            const response = await bus.request(Subjects.FunctionsExecutionRun, {
              appId,
              functionName: name,
              args: args.map((arg) => encodeEjson(arg) as never),
              caller: { type: 'system' },
              metadata: { origin: 'rule' },
            });
            if (!response.ok) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `rule function ${name} failed: ${response.error.message}`);
            return decodeEjson(response.result, { relaxed: true });
          },
        }),
    },
  ],
  exports: [DataAccess],
})
export class DataAccessModule {}
