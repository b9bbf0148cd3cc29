import { Module } from '@nestjs/common';
import { LocationController } from './location/location.controller';

/** The client-facing HTTP edge: client API v2.0, GraphQL, webhooks and hosting. */
@Module({
  controllers: [LocationController],
})
export class GraphqlGatewayModule {}
