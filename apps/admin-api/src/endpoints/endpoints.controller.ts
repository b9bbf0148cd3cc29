import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import { type AppConfig, HTTPS_ENDPOINTS_FILE, type HttpsEndpointConfig, httpsEndpoints, httpsEndpointsProblems, stableId } from '@tessera/app-config';
import { SecretStore } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

type EndpointBody = Record<string, unknown> | undefined;

/** The fields of an endpoint the admin API takes and gives besides its ids (names resolve from `function_id` / `secret_id`). */
const FIELDS = ['route', 'http_method', 'validation_method', 'respond_result', 'fetch_custom_user_data', 'create_user_on_auth', 'return_type', 'disabled'] as const;

/**
 * `.../endpoints` (custom HTTPS endpoints, as the admin OpenAPI spec shapes them): the endpoints live in
 * http_endpoints/config.json, so each change is a validated deployment of the whole app, as an edit of the
 * exported file would be. Functions and secrets are named by id or by name.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/endpoints')
@UseGuards(AdminAuthGuard)
export class EndpointsController {
  constructor(
    private readonly state: AppStateService,
    private readonly secrets: SecretStore,
  ) {}

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object[]> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const app = await this.state.liveApp(record);
    const secrets = await this.secrets.list(record._id);
    return httpsEndpoints(app).map((endpoint) => toWire(app, endpoint, secrets));
  }

  @Get(':endpointId')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('endpointId') endpointId: string): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const app = await this.state.liveApp(record);
    return toWire(app, find(app, endpointId).endpoint, await this.secrets.list(record._id));
  }

  @Post()
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: EndpointBody): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const secrets = await this.secrets.list(record._id);
    let created: HttpsEndpointConfig | undefined;
    const prepared = await this.state.edit(record, request.admin?._id, (app) => {
      const endpoint = fromWire(app, body, secrets);
      created = { ...endpoint, id: endpointId(app, endpoint) };
      save(app, [...httpsEndpoints(app), created]);
    });
    return toWire(prepared.app, created as HttpsEndpointConfig, secrets);
  }

  @Put(':endpointId')
  async update(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('endpointId') endpointIdParam: string, @Body() body: EndpointBody): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const secrets = await this.secrets.list(record._id);
    let updated: HttpsEndpointConfig | undefined;
    const prepared = await this.state.edit(record, request.admin?._id, (app) => {
      const { endpoint, index } = find(app, endpointIdParam);
      updated = { ...fromWire(app, body, secrets), id: endpointId(app, endpoint) };
      const all = httpsEndpoints(app);
      all[index] = updated;
      save(app, all);
    });
    return toWire(prepared.app, updated as HttpsEndpointConfig, secrets);
  }

  @Delete(':endpointId')
  @HttpCode(200)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('endpointId') endpointIdParam: string): Promise<object> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const { index } = find(app, endpointIdParam);
      save(app, httpsEndpoints(app).filter((_endpoint, i) => i !== index));
    });
    return {};
  }
}

/** An endpoint's `_id`: the one it was given, or a stable one from its method and route (exports carry none). */
function endpointId(app: AppConfig, endpoint: HttpsEndpointConfig): string {
  return typeof endpoint.id === 'string' && endpoint.id !== '' ? endpoint.id : stableId(app.settings.name, 'endpoint', `${endpoint.http_method} ${endpoint.route}`);
}

function find(app: AppConfig, id: string): { endpoint: HttpsEndpointConfig; index: number } {
  const all = httpsEndpoints(app);
  const index = all.findIndex((endpoint) => endpointId(app, endpoint) === id);
  const endpoint = all[index];
  if (!endpoint) throw new AdminApiError(AdminApiErrorCode.EndpointNotFound, `endpoint not found: '${id}'`);
  return { endpoint, index };
}

function save(app: AppConfig, endpoints: HttpsEndpointConfig[]): void {
  const problems = httpsEndpointsProblems(endpoints, new Set(app.functions.map((fn) => fn.config.name)));
  if (problems.length > 0) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, problems.map((problem) => problem.message).join('; '));
  app.extraFiles.set(HTTPS_ENDPOINTS_FILE, new TextEncoder().encode(`${JSON.stringify(endpoints, null, 4)}\n`));
}

function fromWire(app: AppConfig, body: EndpointBody, secrets: Array<{ _id: string; name: string }>): HttpsEndpointConfig {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the request body must be an endpoint object');
  const fn = app.functions.find((candidate) => candidate.config.name === body['function_name'] || (candidate.config.id !== undefined && candidate.config.id === body['function_id']));
  if (!fn) throw new AdminApiError(AdminApiErrorCode.FunctionNotFound, `function not found: ${JSON.stringify(body['function_name'] ?? body['function_id'] ?? '')}`);
  const secret = typeof body['secret_name'] === 'string' ? body['secret_name'] : secrets.find((candidate) => candidate._id === body['secret_id'])?.name;
  if (body['secret_id'] !== undefined && secret === undefined) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `secret not found: ${JSON.stringify(body['secret_id'])}`);
  const endpoint: HttpsEndpointConfig = { route: body['route'] as string, http_method: body['http_method'] as string, function_name: fn.config.name };
  for (const field of FIELDS) if (body[field] !== undefined) (endpoint as Record<string, unknown>)[field] = body[field];
  if (secret !== undefined) endpoint.secret_name = secret;
  return endpoint;
}

function toWire(app: AppConfig, endpoint: HttpsEndpointConfig, secrets: Array<{ _id: string; name: string }>): object {
  const fn = app.functions.find((candidate) => candidate.config.name === endpoint.function_name);
  const secret = secrets.find((candidate) => candidate.name === endpoint.secret_name);
  return {
    _id: endpointId(app, endpoint),
    route: endpoint.route,
    http_method: endpoint.http_method,
    function_name: endpoint.function_name,
    ...(fn?.config.id ? { function_id: fn.config.id } : {}),
    validation_method: endpoint.validation_method ?? 'NO_VALIDATION',
    ...(endpoint.secret_name ? { secret_name: endpoint.secret_name } : {}),
    ...(secret ? { secret_id: secret._id } : {}),
    respond_result: endpoint.respond_result === true,
    fetch_custom_user_data: endpoint.fetch_custom_user_data === true,
    create_user_on_auth: endpoint.create_user_on_auth === true,
    return_type: endpoint.return_type ?? 'JSON',
    disabled: endpoint.disabled === true,
  };
}
