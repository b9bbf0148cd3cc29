import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Req, UseGuards } from '@nestjs/common';
import { newObjectIdHex } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { forwardersOf, type LogForwarder, logForwarderSchema, setForwarder } from './log-forwarder';

/**
 * `.../log_forwarders` (openapi-admin-v3.yaml): each change is a deployment of the app, whose forwarders are
 * its `log_forwarders/<name>.json` files, so pull, push and export carry them.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/log_forwarders')
@UseGuards(AdminAuthGuard)
export class LogForwardersController {
  constructor(private readonly state: AppStateService) {}

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<LogForwarder[]> {
    requireGroup(request, groupId);
    return forwardersOf(await this.state.liveApp(await this.state.app(groupId, appId)));
  }

  @Post()
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<LogForwarder> {
    requireGroup(request, groupId);
    const forwarder = { _id: newObjectIdHex(), ...parse(body) };
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      if (forwardersOf(app).some((existing) => existing.name === forwarder.name)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `a log forwarder named "${forwarder.name}" already exists`);
      setForwarder(app, forwarder.name, forwarder);
    });
    return forwarder;
  }

  @Get(':forwarderId')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('forwarderId') forwarderId: string): Promise<LogForwarder> {
    requireGroup(request, groupId);
    return find(forwardersOf(await this.state.liveApp(await this.state.app(groupId, appId))), forwarderId);
  }

  @Patch(':forwarderId')
  async update(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('forwarderId') forwarderId: string, @Body() body: unknown): Promise<LogForwarder> {
    requireGroup(request, groupId);
    return this.change(request, groupId, appId, forwarderId, (existing) => ({ _id: existing._id, ...parse(body) }));
  }

  @Delete(':forwarderId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('forwarderId') forwarderId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.change(request, groupId, appId, forwarderId, () => undefined);
  }

  @Put(':forwarderId/enable')
  @HttpCode(204)
  async enable(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('forwarderId') forwarderId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.change(request, groupId, appId, forwarderId, (existing) => ({ ...existing, disabled: false }));
  }

  @Put(':forwarderId/disable')
  @HttpCode(204)
  async disable(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('forwarderId') forwarderId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.change(request, groupId, appId, forwarderId, (existing) => ({ ...existing, disabled: true }));
  }

  /** Replaces (or with `undefined`, deletes) one forwarder in a new deployment; its result, or the deleted one. */
  private async change(request: AdminRequest, groupId: string, appId: string, forwarderId: string, next: (existing: LogForwarder) => LogForwarder | undefined): Promise<LogForwarder> {
    let result: LogForwarder | undefined;
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const forwarders = forwardersOf(app);
      const existing = find(forwarders, forwarderId);
      const updated = next(existing);
      if (updated && updated.name !== existing.name && forwarders.some((other) => other.name === updated.name)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `a log forwarder named "${updated.name}" already exists`);
      setForwarder(app, existing.name, updated);
      result = updated ?? existing;
    });
    return result!;
  }
}

function parse(body: unknown): Omit<LogForwarder, '_id'> {
  const parsed = logForwarderSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `invalid log forwarder: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

function find(forwarders: LogForwarder[], id: string): LogForwarder {
  const forwarder = forwarders.find((candidate) => candidate._id === id);
  if (!forwarder) throw new AdminApiError(AdminApiErrorCode.LogForwarderNotFound, `log forwarder not found: '${id}'`);
  return forwarder;
}
