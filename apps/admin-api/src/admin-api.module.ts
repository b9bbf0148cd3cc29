import { Module } from '@nestjs/common';
import { AppsController } from './apps/apps.controller';
import { AdminAuthController } from './auth/admin-auth.controller';
import { AdminAuthGuard } from './auth/admin-auth.guard';
import { AdminAuthService } from './auth/admin-auth.service';

/** The admin API v3.0. */
@Module({
  controllers: [AdminAuthController, AppsController],
  providers: [AdminAuthService, AdminAuthGuard],
})
export class AdminApiModule {}
