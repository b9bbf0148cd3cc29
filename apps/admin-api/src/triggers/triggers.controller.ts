import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import type { Trigger } from '@tessera/app-config';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

type TriggerBody = (Partial<Trigger> & { _id?: unknown }) | undefined;

/** `.../triggers` (spec 2.9): each change is a validated deployment of the whole app. */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/triggers')
@UseGuards(AdminAuthGuard)
export class TriggersController {
  constructor(private readonly state: AppStateService) {}

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object[]> {
    requireGroup(request, groupId);
    const app = await this.state.liveApp(await this.state.app(groupId, appId));
    return app.triggers.map(toWire);
  }

  @Get(':triggerId')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('triggerId') triggerId: string): Promise<object> {
    requireGroup(request, groupId);
    return toWire(findTrigger((await this.state.liveApp(await this.state.app(groupId, appId))).triggers, triggerId));
  }

  @Post()
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: TriggerBody): Promise<object> {
    requireGroup(request, groupId);
    const { _id: _wireId, id: _id, ...trigger } = body ?? {};
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      if (app.triggers.some((existing) => existing.name === trigger.name)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `a trigger named "${String(trigger.name)}" already exists`);
      app.triggers.push(trigger as Trigger);
    });
    return toWire(findTrigger(prepared.app.triggers, String(trigger.name)));
  }

  @Put(':triggerId')
  @HttpCode(204)
  async update(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('triggerId') triggerId: string, @Body() body: TriggerBody): Promise<void> {
    requireGroup(request, groupId);
    const { _id: _wireId, id: _id, ...change } = body ?? {};
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      Object.assign(findTrigger(app.triggers, triggerId), change);
    });
  }

  @Delete(':triggerId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('triggerId') triggerId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const trigger = findTrigger(app.triggers, triggerId);
      app.triggers = app.triggers.filter((candidate) => candidate !== trigger);
    });
  }
}

function findTrigger(triggers: Trigger[], id: string): Trigger {
  const trigger = triggers.find((candidate) => candidate.id === id) ?? triggers.find((candidate) => candidate.name === id);
  if (!trigger) throw new AdminApiError(AdminApiErrorCode.TriggerNotFound, `trigger not found: '${id}'`);
  return trigger;
}

function toWire(trigger: Trigger): object {
  const { id, ...rest } = trigger;
  return { _id: id, ...rest, disabled: trigger.disabled === true };
}
