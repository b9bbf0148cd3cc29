import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AppStateService } from '../deploy/app-state.service';
import { type ApiKeyView, ApiKeysService } from './api-keys.service';

/** `.../api_keys`: the app's server API keys, with App Services' statuses (create 201; delete, enable, disable 204). */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/api_keys')
@UseGuards(AdminAuthGuard)
export class ApiKeysController {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly state: AppStateService,
  ) {}

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<ApiKeyView[]> {
    requireGroup(request, groupId);
    return this.apiKeys.list(await this.state.app(groupId, appId));
  }

  @Post()
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: { name?: unknown } | undefined): Promise<ApiKeyView> {
    requireGroup(request, groupId);
    return this.apiKeys.create(await this.state.app(groupId, appId), body?.name);
  }

  @Get(':apiKeyId')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('apiKeyId') apiKeyId: string): Promise<ApiKeyView> {
    requireGroup(request, groupId);
    return this.apiKeys.get(await this.state.app(groupId, appId), apiKeyId);
  }

  @Delete(':apiKeyId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('apiKeyId') apiKeyId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.apiKeys.remove(await this.state.app(groupId, appId), apiKeyId);
  }

  @Put(':apiKeyId/enable')
  @HttpCode(204)
  async enable(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('apiKeyId') apiKeyId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.apiKeys.setDisabled(await this.state.app(groupId, appId), apiKeyId, false);
  }

  @Put(':apiKeyId/disable')
  @HttpCode(204)
  async disable(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('apiKeyId') apiKeyId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.apiKeys.setDisabled(await this.state.app(groupId, appId), apiKeyId, true);
  }
}
