import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import type { AppRecord } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { AppsService } from './apps.service';

/** `/api/admin/v3.0/groups/<group>/apps`: the apps of a group. */
@Controller('api/admin/v3.0/groups/:groupId/apps')
@UseGuards(AdminAuthGuard)
export class AppsController {
  constructor(
    private readonly apps: AppsService,
    private readonly state: AppStateService,
  ) {}

  @Get()
  list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Query('product') product: string | string[] | undefined): Promise<AppRecord[]> {
    requireGroup(request, groupId);
    const products = (Array.isArray(product) ? product : [product ?? ''])
      .flatMap((value) => value.split(','))
      .map((value) => value.trim())
      .filter(Boolean);
    return this.apps.list(groupId, products);
  }

  @Post()
  @HttpCode(201)
  create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Body() body: unknown, @Query('product') product: string | undefined): Promise<AppRecord> {
    requireGroup(request, groupId);
    return this.apps.create(groupId, (typeof body === 'object' && body !== null ? body : {}), product, request.admin?._id);
  }

  @Get(':appId')
  get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<AppRecord> {
    requireGroup(request, groupId);
    return this.state.app(groupId, appId);
  }

  @Delete(':appId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.apps.remove(groupId, appId);
  }

  @Get(':appId/description')
  describe(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object> {
    requireGroup(request, groupId);
    return this.apps.describe(groupId, appId, `${request.protocol}://${request.host}/api/admin/v3.0`);
  }
}

/** 404 unless the admin manages the group (realm-cli: "group could not be found"). */
export function requireGroup(request: AdminRequest, groupId: string): void {
  if (!request.admin?.groupIds.includes(groupId)) throw new AdminApiError(AdminApiErrorCode.GroupNotFound, `group could not be found: '${groupId}'`);
}
