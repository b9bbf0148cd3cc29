import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import type { Value } from '@tessera/app-config';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

type ValueBody = { name?: unknown; value?: unknown; from_secret?: unknown; private?: unknown } | undefined;

/** `.../values`: each change is a deployment of the whole app, validated first. */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/values')
@UseGuards(AdminAuthGuard)
export class ValuesController {
  constructor(private readonly state: AppStateService) {}

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object[]> {
    requireGroup(request, groupId);
    const app = await this.state.liveApp(await this.state.app(groupId, appId));
    return app.values.map((value) => ({ _id: value.id, name: value.name, private: value['private'] === true, from_secret: value.from_secret === true }));
  }

  @Get(':valueId')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('valueId') valueId: string): Promise<object> {
    requireGroup(request, groupId);
    const value = findValue((await this.state.liveApp(await this.state.app(groupId, appId))).values, valueId);
    return { _id: value.id, name: value.name, private: value['private'] === true, from_secret: value.from_secret === true, value: value.value };
  }

  @Post()
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: ValueBody): Promise<object> {
    requireGroup(request, groupId);
    const name = body?.name;
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      if (app.values.some((value) => value.name === name)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `a value named "${String(name)}" already exists`);
      app.values.push(toValue(body));
    });
    const created = prepared.app.values.find((value) => value.name === name);
    return { _id: created?.id, name };
  }

  @Put(':valueId')
  @HttpCode(204)
  async update(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('valueId') valueId: string, @Body() body: ValueBody): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const existing = findValue(app.values, valueId);
      Object.assign(existing, toValue({ name: existing.name, ...body }));
    });
  }

  @Delete(':valueId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('valueId') valueId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const existing = findValue(app.values, valueId);
      app.values = app.values.filter((value) => value !== existing);
    });
  }
}

function findValue(values: Value[], id: string): Value {
  const value = values.find((candidate) => candidate.id === id || candidate.name === id);
  if (!value) throw new AdminApiError(AdminApiErrorCode.ValueNotFound, `value not found: '${id}'`);
  return value;
}

function toValue(body: ValueBody): Value {
  return {
    name: body?.name as string,
    value: body?.value,
    ...(body?.from_secret !== undefined ? { from_secret: body.from_secret as boolean } : {}),
    ...(body?.private !== undefined ? { private: body.private } : {}),
  };
}
