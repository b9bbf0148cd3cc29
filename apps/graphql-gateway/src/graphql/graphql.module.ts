import { Module } from '@nestjs/common';
import { DataAccess, UserTransactions } from '@tessera/data-access';
import { FunctionCalls } from '@tessera/messaging';
import { GraphqlApps } from './graphql-apps.service';
import { ClientApiGraphqlAuthenticator, GraphqlAuthenticator } from './graphql-authenticator';
import { GraphqlCommandsHandler } from './graphql-commands.handler';
import { GraphqlController } from './graphql.controller';
import { GraphqlExecutor } from './graphql-executor';

/**
 * The client GraphQL endpoint (spec 4.1): generated schema per app deployment, executed as the calling
 * user through the rules-enforcing data access; custom resolvers run functions over the message bus.
 * Needs the platform (DeployedApps, DataSources) and the client API's AuthService in the module graph.
 */
@Module({
  controllers: [GraphqlController, GraphqlCommandsHandler],
  providers: [
    GraphqlApps,
    GraphqlExecutor,
    FunctionCalls,
    { provide: UserTransactions, useFactory: (dataAccess: DataAccess) => new UserTransactions(dataAccess), inject: [DataAccess] },
    { provide: GraphqlAuthenticator, useClass: ClientApiGraphqlAuthenticator },
  ],
})
export class GraphqlModule {}
