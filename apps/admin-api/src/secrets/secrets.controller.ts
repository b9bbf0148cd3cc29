import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import { SecretStore, type SecretSummary } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AppStateService } from '../deploy/app-state.service';

type SecretBody = { name?: unknown; value?: unknown } | undefined;

/** `.../secrets`: values are written here and never read back through the API. */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/secrets')
@UseGuards(AdminAuthGuard)
export class SecretsController {
  constructor(
    private readonly secrets: SecretStore,
    private readonly state: AppStateService,
  ) {}

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<SecretSummary[]> {
    requireGroup(request, groupId);
    return this.secrets.list((await this.state.app(groupId, appId))._id);
  }

  @Post()
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: SecretBody): Promise<SecretSummary> {
    requireGroup(request, groupId);
    return this.secrets.create((await this.state.app(groupId, appId))._id, body?.name, body?.value);
  }

  @Put(':secretId')
  @HttpCode(204)
  async update(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('secretId') secretId: string, @Body() body: SecretBody): Promise<void> {
    requireGroup(request, groupId);
    await this.secrets.update((await this.state.app(groupId, appId))._id, secretId, { name: body?.name, value: body?.value });
  }

  @Delete(':secretId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('secretId') secretId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.secrets.remove((await this.state.app(groupId, appId))._id, secretId);
  }
}
