import { Module } from '@nestjs/common';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { HostingController } from './hosting.controller';
import { HostingDomains } from './hosting-domains';
import { HostingEdge } from './hosting-edge';
import { HostingMetrics } from './hosting-metrics';
import { HostingService } from './hosting.service';

/** Static hosting (spec 2.10): an app's hosted files at `/hosting/<client app id>/` and at `/` of its own domains. */
@Module({
  imports: [RateLimitModule],
  controllers: [HostingController],
  providers: [HostingService, HostingDomains, HostingEdge, HostingMetrics],
})
export class HostingModule {}
