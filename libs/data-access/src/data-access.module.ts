import { Global, Module } from '@nestjs/common';
import { FunctionCalls, MessageBus } from '@tessera/messaging';
import { DataSources } from '@tessera/platform';
import { DataAccess } from './data-access.service';

/**
 * One DataAccess per process, shared by the client API, GraphQL and the function runtime, so compiled rules
 * are cached once. `%function` in rules runs the app function as system over the bus; a failure becomes the
 * rules' RuleFunctionFailed, with the runtime's message as its reason.
 */
@Global()
@Module({
  providers: [
    {
      provide: DataAccess,
      inject: [DataSources, MessageBus],
      useFactory: (dataSources: DataSources, bus: MessageBus) => {
        const functions = new FunctionCalls(bus);
        return new DataAccess(dataSources, {
          callFunction: (appId, functionName, args, headers) =>
            functions.call({ appId, functionName, args, caller: { type: 'system' }, metadata: { origin: 'rule' } }, { relaxed: true, ...(headers ? { headers } : {}) }),
        });
      },
    },
  ],
  exports: [DataAccess],
})
export class DataAccessModule {}
