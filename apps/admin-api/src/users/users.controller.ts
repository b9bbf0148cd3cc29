import { All, Controller, Param, Req, UseGuards } from '@nestjs/common';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

/**
 * `.../users`: app users live in the client API's user store, which the admin API cannot reach yet (it
 * is private to the graphql-gateway app). Until it moves to a shared lib, every user call says so with
 * 501 rather than answering with an empty list.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId')
@UseGuards(AdminAuthGuard)
export class UsersController {
  constructor(private readonly state: AppStateService) {}

  @All(['users', 'users/*', 'user_registrations/*'])
  async users(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<never> {
    requireGroup(request, groupId);
    await this.state.app(groupId, appId);
    throw new AdminApiError(AdminApiErrorCode.NotImplemented, 'app user administration is not available yet: the client user store lives in the client API and is not shared with the admin API');
  }
}
