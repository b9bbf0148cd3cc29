import { Body, Controller, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import { type SyncConnectedClient, type SyncPartitionHistory } from '@tessera/contracts';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { applyDevelopmentSchemas, type GeneratedSchemas, type SyncedObjectType } from './development-schemas';
import { type SyncProgress, SyncStatusService } from './sync-status.service';

/**
 * The app's sync endpoints: App Services' `sync/progress`, `sync/state`, `sync/config` and `sync/force_reset` (as realm-cli, the
 * UI and realm-core's test harness call them; `sync/data` is with the services), Tessera's `sync/clients` and
 * `sync/partitions` (gathered from every sync-service replica), and `sync/development_schemas`.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/sync')
@UseGuards(AdminAuthGuard)
export class SyncController {
  constructor(
    private readonly state: AppStateService,
    private readonly status: SyncStatusService,
  ) {}

  @Get('progress')
  async progress(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<SyncProgress> {
    requireGroup(request, groupId);
    return this.status.progress(await this.state.app(groupId, appId));
  }

  @Get('state')
  async syncState(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<{ state: string }> {
    requireGroup(request, groupId);
    return this.status.syncState(await this.state.app(groupId, appId));
  }

  @Get('config')
  async config(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<{ development_mode_enabled: boolean }> {
    requireGroup(request, groupId);
    return this.status.config(await this.state.app(groupId, appId));
  }

  @Put('config')
  @HttpCode(204)
  async setConfig(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    await this.status.setConfig(await this.state.app(groupId, appId), body, request.admin?._id);
  }

  @Put('force_reset')
  @HttpCode(204)
  async forceReset(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    await this.status.forceReset(await this.state.app(groupId, appId), body);
  }

  /** Connected clients on every live replica: user, partitions, connected since, replica. */
  @Get('clients')
  async clients(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<{ replicas: number; clients: SyncConnectedClient[]; truncated: boolean }> {
    requireGroup(request, groupId);
    const { replicas, clients, truncated } = await this.status.status(await this.state.app(groupId, appId));
    return { replicas, clients, truncated };
  }

  /** The history of each partition (every reset epoch): versions, bytes, compaction point, client files. */
  @Get('partitions')
  async partitions(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<{ partitions: SyncPartitionHistory[]; truncated: boolean }> {
    requireGroup(request, groupId);
    const { partitions, truncated } = await this.status.status(await this.state.app(groupId, appId));
    return { partitions, truncated };
  }

  /**
   * `POST .../sync/development_schemas` `{ types: [...] }`: the synced object types a client declared, made
   * into collection schemas while development mode is on. The sync service reports the types of clients
   * that connect in development mode; an operator may also send them.
   */
  @Post('development_schemas')
  @HttpCode(200)
  async developmentSchemas(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: { types?: unknown } | undefined): Promise<GeneratedSchemas> {
    requireGroup(request, groupId);
    if (!Array.isArray(body?.types)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the body must be { "types": [ { "name", "properties": { ... } } ] }');
    const types = body.types as SyncedObjectType[];
    let result: GeneratedSchemas = { created: [], extended: [] };
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      result = applyDevelopmentSchemas(app, types);
    });
    return result;
  }
}
