import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import type { AppFunction } from '@tessera/app-config';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

type FunctionBody = ({ name?: unknown; source?: unknown } & Record<string, unknown>) | undefined;

/** `.../functions` and `.../debug/execute_function`. */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId')
@UseGuards(AdminAuthGuard)
export class FunctionsController {
  constructor(private readonly state: AppStateService) {}

  @Get('functions')
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object[]> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const app = await this.state.liveApp(record);
    return app.functions.map((fn) => ({ _id: fn.config.id, name: fn.config.name, private: fn.config.private === true, last_modified: record.last_modified }));
  }

  @Get('functions/:functionId')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('functionId') functionId: string): Promise<object> {
    requireGroup(request, groupId);
    const fn = findFunction((await this.state.liveApp(await this.state.app(groupId, appId))).functions, functionId);
    const { id, ...config } = fn.config;
    return { _id: id, ...config, source: fn.source };
  }

  @Post('functions')
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: FunctionBody): Promise<object> {
    requireGroup(request, groupId);
    const { source, ...config } = body ?? {};
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      if (app.functions.some((fn) => fn.config.name === config.name)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `a function named "${String(config.name)}" already exists`);
      app.functions.push({ config: { ...config, name: config.name as string }, source: typeof source === 'string' ? source : '' });
    });
    return { _id: prepared.app.functions.find((fn) => fn.config.name === config.name)?.config.id, name: config.name };
  }

  @Put('functions/:functionId')
  @HttpCode(204)
  async update(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('functionId') functionId: string, @Body() body: FunctionBody): Promise<void> {
    requireGroup(request, groupId);
    const { source, _id: _ignored, ...config } = body ?? {};
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const fn = findFunction(app.functions, functionId);
      fn.config = { ...fn.config, ...config, id: fn.config.id, name: typeof config.name === 'string' ? config.name : fn.config.name };
      if (typeof source === 'string') fn.source = source;
    });
  }

  @Delete('functions/:functionId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('functionId') functionId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const fn = findFunction(app.functions, functionId);
      app.functions = app.functions.filter((candidate) => candidate !== fn);
    });
  }

  /**
   * realm-cli's `function run`. Functions execute in the function runtime, which this endpoint does not
   * reach yet: it checks the function exists and says so plainly rather than pretending to run it.
   */
  @Post('debug/execute_function')
  async execute(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: { name?: unknown } | undefined): Promise<never> {
    requireGroup(request, groupId);
    findFunction((await this.state.liveApp(await this.state.app(groupId, appId))).functions, typeof body?.name === 'string' ? body.name : '');
    throw new AdminApiError(AdminApiErrorCode.FunctionRuntimeUnavailable, 'running functions from the admin API is not available yet: the function runtime is not connected to the admin API');
  }
}

function findFunction(functions: AppFunction[], id: string): AppFunction {
  const fn = functions.find((candidate) => candidate.config.id === id || candidate.config.name === id);
  if (!fn) throw new AdminApiError(AdminApiErrorCode.FunctionNotFound, `function not found: '${id}'`);
  return fn;
}
