import { Module } from '@nestjs/common';
import { DataAccessModule } from '@tessera/data-access';
import { ClientApiModule } from './client-api/client-api.module';
import { DataApiModule } from './data-api/data-api.module';
import { EndpointsModule } from './endpoints/endpoints.module';
import { GraphqlModule } from './graphql/graphql.module';
import { HostingModule } from './hosting/hosting.module';
import { LocationController } from './location/location.controller';
import { RateLimitModule } from './rate-limit/rate-limit.module';

/**
 * The client-facing HTTP edge: client API v2.0 (auth, functions, remote data access), GraphQL, the Data
 * API under `/app/<client app id>/endpoint/`, webhooks and hosting, each app within its request budget (RateLimitModule). It needs the platform (PlatformModule) and, for functions, a MessageBus; data-source
 * calls run under the app's rules through libs/data-access.
 */
@Module({
  imports: [DataAccessModule, RateLimitModule, ClientApiModule, GraphqlModule, DataApiModule, EndpointsModule, HostingModule],
  controllers: [LocationController],
})
export class GraphqlGatewayModule {}
