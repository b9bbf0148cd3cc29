import { Module } from '@nestjs/common';
import { AppRequestLimits } from './app-request-limits';

/** Per-app request budgets of the client-facing HTTP surfaces (exported for HostingEdge, which admits sites served at their own domains). */
@Module({
  providers: [AppRequestLimits],
  exports: [AppRequestLimits],
})
export class RateLimitModule {}
