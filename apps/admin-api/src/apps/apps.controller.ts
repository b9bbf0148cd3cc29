import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { AppRegistry, AppRegistryError, AppRegistryErrorCode, type AppRecord } from '@tessera/platform';
import { AdminAuthGuard } from '../auth/admin-auth.guard';

/** `/api/admin/v3.0/groups/<group>/apps`: the apps of a group. */
@Controller('api/admin/v3.0/groups/:groupId/apps')
@UseGuards(AdminAuthGuard)
export class AppsController {
  constructor(private readonly apps: AppRegistry) {}

  @Get()
  list(@Param('groupId') groupId: string): Promise<AppRecord[]> {
    return this.apps.list(groupId);
  }

  @Get(':appId')
  async get(@Param('groupId') groupId: string, @Param('appId') appId: string): Promise<AppRecord> {
    const app = await this.apps.get(appId);
    if (app.group_id !== groupId) throw new AppRegistryError(AppRegistryErrorCode.AppNotFound, `app not found: '${appId}'`);
    return app;
  }
}
