import { Module } from '@nestjs/common';
import { HostingController } from './hosting.controller';
import { HostingDomains } from './hosting-domains';
import { HostingEdge } from './hosting-edge';
import { HostingMetrics } from './hosting-metrics';
import { HostingService } from './hosting.service';

/** Static hosting (spec 2.10): an app's hosted files at `/hosting/<client app id>/` and at `/` of its own domains. */
@Module({
  controllers: [HostingController],
  providers: [HostingService, HostingDomains, HostingEdge, HostingMetrics],
})
export class HostingModule {}
