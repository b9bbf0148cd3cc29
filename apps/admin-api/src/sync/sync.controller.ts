import { Body, Controller, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { applyDevelopmentSchemas, type GeneratedSchemas, type SyncedObjectType } from './development-schemas';

/**
 * `POST .../sync/development_schemas` `{ types: [...] }`: the synced object types a client declared, made
 * into collection schemas while development mode is on. The sync service reports the types of clients
 * that connect in development mode; an operator may also send them.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/sync')
@UseGuards(AdminAuthGuard)
export class SyncController {
  constructor(private readonly state: AppStateService) {}

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
