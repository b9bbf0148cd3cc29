import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import type { Trigger } from '@tessera/app-config';
import { DataSources, type TriggerState, TriggerStates } from '@tessera/platform';
import { z } from 'zod';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

type TriggerBody = (Partial<Trigger> & { _id?: unknown }) | undefined;

const ResumeBodySchema = z.object({ disable_token: z.boolean().optional() }).passthrough();

/**
 * `.../triggers` (spec 2.9): each change is a validated deployment of the whole app. A trigger's runtime
 * state (suspended with an error, resuming) lives in the platform database (TriggerStates), written by the
 * function runtime; the trigger documents show it as App Services did (`error`, `last_modified`).
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/triggers')
@UseGuards(AdminAuthGuard)
export class TriggersController {
  private readonly states: TriggerStates;

  constructor(
    private readonly state: AppStateService,
    dataSources: DataSources,
  ) {
    this.states = new TriggerStates(dataSources.platform());
  }

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object[]> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const app = await this.state.liveApp(record);
    const states = new Map((await this.states.list(record._id)).map((found) => [found.trigger, found]));
    return app.triggers.map((trigger) => toWire(trigger, states.get(trigger.name)));
  }

  @Get(':triggerId')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('triggerId') triggerId: string): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const trigger = findTrigger((await this.state.liveApp(record)).triggers, triggerId);
    return toWire(trigger, await this.states.get(record._id, trigger.name));
  }

  /**
   * Resumes a suspended database trigger from the change that failed (its backlog), or from now with
   * `disable_token: true`. One that is not suspended is left as it is.
   */
  @Put(':triggerId/resume')
  @HttpCode(204)
  async resume(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('triggerId') triggerId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    const parsed = ResumeBodySchema.safeParse(body ?? {});
    if (!parsed.success) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'disable_token must be a boolean');
    const record = await this.state.app(groupId, appId);
    const trigger = findTrigger((await this.state.liveApp(record)).triggers, triggerId);
    if (trigger.type !== 'DATABASE') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `only database triggers can be resumed; "${trigger.name}" is a ${trigger.type} trigger`);
    await this.states.requestResume(record._id, trigger.name, parsed.data.disable_token === true ? 'now' : 'position');
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

function toWire(trigger: Trigger, state?: TriggerState): object {
  const { id, ...rest } = trigger;
  const suspended = state?.status === 'suspended' || state?.status === 'resuming';
  return {
    _id: id,
    ...rest,
    disabled: trigger.disabled === true,
    ...(suspended && state.error ? { error: state.error } : {}),
    ...(state ? { last_modified: Math.floor(new Date(state.last_modified).getTime() / 1000) } : {}),
  };
}
