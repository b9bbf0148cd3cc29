import { Body, Controller, Get, HttpCode, Param, Patch, Query, Req, UseGuards } from '@nestjs/common';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AppStateService } from '../deploy/app-state.service';
import { ServicesService, type ServiceSummary } from './services.service';

/** `.../services`, `.../services/<id>/config` and `.../sync/data`. */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId')
@UseGuards(AdminAuthGuard)
export class ServicesController {
  constructor(
    private readonly services: ServicesService,
    private readonly state: AppStateService,
  ) {}

  @Get('services')
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<ServiceSummary[]> {
    requireGroup(request, groupId);
    return this.services.list(await this.state.app(groupId, appId));
  }

  @Get('services/:serviceId')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string): Promise<object> {
    requireGroup(request, groupId);
    return this.services.get(await this.state.app(groupId, appId), serviceId);
  }

  @Get('services/:serviceId/config')
  async config(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string): Promise<object> {
    requireGroup(request, groupId);
    return this.services.config(await this.state.app(groupId, appId), serviceId);
  }

  /** Spec 4.2: answers with the updated configuration. */
  @Patch('services/:serviceId/config')
  @HttpCode(200)
  async patchConfig(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    return this.services.patchConfig(await this.state.app(groupId, appId), serviceId, body, request.admin?._id);
  }

  @Get('sync/data')
  async syncData(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('service_id') serviceId: string | undefined): Promise<object> {
    requireGroup(request, groupId);
    return this.services.syncData(await this.state.app(groupId, appId), serviceId);
  }
}
