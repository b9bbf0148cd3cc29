import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req, UseGuards } from '@nestjs/common';
import { FunctionCalls } from '@tessera/messaging';
import type { AppFunction } from '@tessera/app-config';
import type { UnsavedSource } from '@tessera/contracts';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

/** What a debug run answers: the result (canonical EJSON), the function's log lines, how long it took. */
type DebugRun = { result: unknown; logs: string[]; error_logs: string[]; stats: { execution_time: string } };

type FunctionBody = ({ name?: unknown; source?: unknown } & Record<string, unknown>) | undefined;

/** `.../functions`, `.../debug/execute_function` and `.../debug/execute_function_source` (through the function runtime on the message bus). */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId')
@UseGuards(AdminAuthGuard)
export class FunctionsController {
  constructor(
    private readonly state: AppStateService,
    private readonly functions: FunctionCalls,
  ) {}

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
   * realm-cli's `function run`: runs a function in the function runtime as the system user
   * (`run_as_system=true`) or as an app user (`user_id=`), and answers with its result and logs.
   */
  @Post('debug/execute_function')
  @HttpCode(200)
  async execute(
    @Req() request: AdminRequest,
    @Param('groupId') groupId: string,
    @Param('appId') appId: string,
    @Query('user_id') userId: string | undefined,
    @Body() body: { name?: unknown; arguments?: unknown } | undefined,
  ): Promise<DebugRun> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const name = typeof body?.name === 'string' ? body.name : '';
    findFunction((await this.state.liveApp(record)).functions, name);
    const args = body?.arguments ?? [];
    if (!Array.isArray(args)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'arguments must be an array');
    return this.debugRun(record._id, name, args, userId);
  }

  /**
   * The console's "Run" of source not yet saved (`debug/execute_function_source`): runs `source` as the system
   * user (`run_as_system=true`) or as an app user (`user_id=`), after `eval_source` (a can_evaluate expression,
   * JSON text; blank allows) lets it, and answers with its result and logs. Nothing is deployed.
   */
  @Post('debug/execute_function_source')
  @HttpCode(200)
  async executeSource(
    @Req() request: AdminRequest,
    @Param('groupId') groupId: string,
    @Param('appId') appId: string,
    @Query('user_id') userId: string | undefined,
    @Query('run_as_system') runAsSystem: string | undefined,
    @Body() body: { source?: unknown; eval_source?: unknown } | undefined,
  ): Promise<DebugRun> {
    requireGroup(request, groupId);
    const system = runAsSystem === 'true';
    if (runAsSystem !== undefined && runAsSystem !== 'true' && runAsSystem !== 'false') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'run_as_system must be true or false');
    if (system === Boolean(userId)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'either user_id or run_as_system=true is required, and not both');
    const source = body?.source;
    if (typeof source !== 'string' || source.trim() === '') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'source is required: the function source to run');
    if (source.length > 1_000_000) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'source is longer than 1,000,000 characters');
    const canEvaluate = parseEvalSource(body?.eval_source);
    const record = await this.state.app(groupId, appId);
    return this.debugRun(record._id, 'debug_source', [], userId, { text: source, ...(canEvaluate ? { canEvaluate } : {}) });
  }

  /** One debug run in the function runtime, as the user `userId` or else the system, answered as App Services did. */
  private async debugRun(appId: string, functionName: string, args: unknown[], userId: string | undefined, source?: UnsavedSource): Promise<DebugRun> {
    const started = Date.now();
    const { result, logs } = await this.functions.run({
      appId,
      functionName,
      ...(source ? { source } : {}),
      args,
      caller: userId ? { type: 'user', user: { id: userId } } : { type: 'system' },
      runAs: userId ? { userId } : { system: true },
      metadata: { origin: 'admin' },
    });
    return { result, logs, error_logs: [], stats: { execution_time: `${Date.now() - started}ms` } };
  }
}

/** `eval_source`: blank (or absent) allows the run; otherwise JSON text of an expression object. */
function parseEvalSource(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return undefined;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'eval_source must be JSON text of an expression object');
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'eval_source must be an expression object');
  return Object.keys(parsed).length === 0 ? undefined : (parsed as Record<string, unknown>);
}

function findFunction(functions: AppFunction[], id: string): AppFunction {
  const fn = functions.find((candidate) => candidate.config.id === id || candidate.config.name === id);
  if (!fn) throw new AdminApiError(AdminApiErrorCode.FunctionNotFound, `function not found: '${id}'`);
  return fn;
}
