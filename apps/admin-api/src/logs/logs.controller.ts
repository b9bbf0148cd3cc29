import { Controller, Get, Param, Query, Req, UseGuards } from '@nestjs/common';
import { LogStore, type LogEntry } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

/** `.../logs`: what the function runtime, triggers and sync wrote to the app's LogStore. */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/logs')
@UseGuards(AdminAuthGuard)
export class LogsController {
  constructor(
    private readonly logs: LogStore,
    private readonly state: AppStateService,
  ) {}

  @Get()
  async list(
    @Req() request: AdminRequest,
    @Param('groupId') groupId: string,
    @Param('appId') appId: string,
    @Query() query: Record<string, string | undefined>,
  ): Promise<{ logs: LogEntry[] }> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const limit = query['limit'] === undefined ? undefined : Number(query['limit']);
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'limit must be a positive integer');
    const logs = await this.logs.list(record._id, {
      ...(query['type'] ? { types: query['type'].split(',') } : {}),
      errorsOnly: query['errors_only'] === 'true',
      ...(query['co_id'] ? { coId: query['co_id'] } : {}),
      ...(query['start_date'] ? { start: date(query['start_date'], 'start_date') } : {}),
      ...(query['end_date'] ? { end: date(query['end_date'], 'end_date') } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
    return { logs };
  }
}

function date(text: string, name: string): Date {
  const value = new Date(text);
  if (Number.isNaN(value.getTime())) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${name} must be an RFC 3339 date`);
  return value;
}
