import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Put, Req, UseGuards } from '@nestjs/common';
import { AppRegistry, DeploymentStore, type AppRecord, type DeploymentMigration } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import {
  findEnvironmentValue,
  isObject,
  listEnvironmentValues,
  parseEnvironment,
  parseEnvironmentValueBody,
  removeEnvironmentValue,
  writeEnvironmentValue,
  type EnvironmentValue,
} from './environment-values';
import { PROVIDER_REGIONS, type CloudProviderRegion } from './provider-regions';
import { locationOf, parseDeploymentSettings } from './deployment-settings';
import { parseAllowedOrigins, parseDeploymentConfig, parseRefreshTokenExpiration } from './security-settings';

/**
 * The app's environment, environment values, security settings and deployment configuration. Everything
 * the app's files hold changes through AppStateService.edit: a validated deployment of the whole app.
 */
@Controller('api/admin/v3.0')
@UseGuards(AdminAuthGuard)
export class EnvironmentController {
  constructor(
    private readonly state: AppStateService,
    private readonly deployments: DeploymentStore,
    private readonly registry: AppRegistry,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** The app's last deployment migration; 404 when it never had one. */
  @Get('groups/:groupId/apps/:appId/deployment_migration')
  async deploymentMigration(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<DeploymentMigration> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    if (!record.deployment_migration) throw new AdminApiError(AdminApiErrorCode.DeploymentMigrationNotFound, 'this app has had no deployment migration');
    return record.deployment_migration;
  }

  /**
   * Moves the app to another deployment model and provider region. Tessera serves every app from wherever it
   * runs, so nothing moves: the app's settings (its description and config.json) change at once, and the
   * migration is recorded as successful.
   */
  @Put('groups/:groupId/apps/:appId/deployment_migration')
  @HttpCode(204)
  async migrateDeployment(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    const to = parseDeploymentSettings(body);
    const record = await this.state.app(groupId, appId);
    const from = { deployment_model: record.deployment_model, provider_region: record.provider_region };
    if (from.deployment_model === to.deployment_model && from.provider_region === to.provider_region) {
      throw new AdminApiError(AdminApiErrorCode.BadRequest, `the app is already deployed ${to.deployment_model} in ${to.provider_region}: the migration would change nothing`);
    }
    const location = locationOf(to.provider_region) ?? record.location;
    await this.state.edit(record, request.admin?._id, (app) => {
      app.settings.deployment_model = to.deployment_model;
      app.settings.location = location;
      if ('provider_region' in app.settings) (app.settings as Record<string, unknown>)['provider_region'] = to.provider_region;
    });
    const message = 'Tessera serves the app from wherever it runs: its deployment settings changed at once, and nothing had to move';
    await this.registry.migrateDeployment(record._id, { ...to, location }, { status: 'successful', message, updated_at: new Date().toISOString(), from, to });
  }

  /**
   * Private endpoints belong to Atlas' network; this server has none and processes every request that reaches
   * it, which is what `true` asks. `false` cannot be honoured, and says so.
   */
  @Post('groups/:groupId/apps/:appId/security/allow_non_vpc_client_requests')
  @HttpCode(204)
  async allowNonVpcClientRequests(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    await this.state.app(groupId, appId);
    const allow = isObject(body) ? body['allow_non_vpc_client_requests'] : undefined;
    if (typeof allow !== 'boolean') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'allow_non_vpc_client_requests must be true or false');
    if (!allow) {
      throw new AdminApiError(AdminApiErrorCode.NotImplemented, 'this server has no private endpoints: it processes every request that reaches it (restrict who can reach it in your network instead)');
    }
  }

  /** The root settings' `environment`: what `%%environment` and `context.environment` resolve against. */
  @Put('groups/:groupId/apps/:appId/environment')
  @HttpCode(200)
  async setEnvironment(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<AppRecord> {
    requireGroup(request, groupId);
    const environment = parseEnvironment(body);
    const record = await this.state.app(groupId, appId);
    await this.state.edit(record, request.admin?._id, (app) => {
      app.settings.environment = environment;
    });
    // The registry keeps the environment the app was created with; the configuration is what runs.
    return { ...record, environment };
  }

  @Get('groups/:groupId/apps/:appId/environment_values')
  async listEnvironmentValues(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object[]> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    return listEnvironmentValues(record._id, await this.state.liveApp(record)).map(({ _id, name }) => ({ _id, name }));
  }

  @Post('groups/:groupId/apps/:appId/environment_values')
  @HttpCode(201)
  async createEnvironmentValue(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    const { name, values } = parseEnvironmentValueBody(body);
    const record = await this.state.app(groupId, appId);
    let created: EnvironmentValue | undefined;
    await this.state.edit(record, request.admin?._id, (app) => {
      if (listEnvironmentValues(record._id, app).some((value) => value.name === name)) {
        throw new AdminApiError(AdminApiErrorCode.EnvironmentValueAlreadyExists, `an environment value named "${name}" already exists`);
      }
      writeEnvironmentValue(app, name, values);
      created = findEnvironmentValue(record._id, app, name);
    });
    return { _id: created?._id, name };
  }

  @Get('groups/:groupId/apps/:appId/environment_values/:valueId')
  async getEnvironmentValue(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('valueId') valueId: string): Promise<EnvironmentValue> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    return findEnvironmentValue(record._id, await this.state.liveApp(record), valueId);
  }

  /** Replaces the value's `values` (a slot left out is removed); a new `name` renames it, and so gives it a new `_id`. */
  @Put('groups/:groupId/apps/:appId/environment_values/:valueId')
  @HttpCode(200)
  async updateEnvironmentValue(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('valueId') valueId: string, @Body() body: unknown): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    let updated: EnvironmentValue | undefined;
    await this.state.edit(record, request.admin?._id, (app) => {
      const existing = findEnvironmentValue(record._id, app, valueId);
      const { name, values } = parseEnvironmentValueBody(body, existing.name);
      if (name !== existing.name && listEnvironmentValues(record._id, app).some((value) => value.name === name)) {
        throw new AdminApiError(AdminApiErrorCode.EnvironmentValueAlreadyExists, `an environment value named "${name}" already exists`);
      }
      removeEnvironmentValue(app, existing.name);
      writeEnvironmentValue(app, name, values);
      updated = findEnvironmentValue(record._id, app, name);
    });
    return { _id: updated?._id, name: updated?.name };
  }

  @Delete('groups/:groupId/apps/:appId/environment_values/:valueId')
  @HttpCode(204)
  async removeEnvironmentValue(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('valueId') valueId: string): Promise<void> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    await this.state.edit(record, request.admin?._id, (app) => {
      removeEnvironmentValue(app, findEnvironmentValue(record._id, app, valueId).name);
    });
  }

  @Get('groups/:groupId/apps/:appId/security/allowed_request_origins')
  async allowedOrigins(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<string[]> {
    requireGroup(request, groupId);
    const app = await this.state.liveApp(await this.state.app(groupId, appId));
    return app.settings.security?.allowed_request_origins ?? [];
  }

  /** Replaces the list (App Services' POST sets it whole). */
  @Post('groups/:groupId/apps/:appId/security/allowed_request_origins')
  @HttpCode(204)
  async setAllowedOrigins(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    const origins = parseAllowedOrigins(body);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      app.settings.security = { ...app.settings.security, allowed_request_origins: origins };
    });
  }

  /**
   * The lifetime the client API gives the app's refresh tokens: the app's own (its configuration's
   * `security.refresh_token_expiration_seconds`), else the server's (TESSERA_REFRESH_TOKEN_TTL_SECONDS).
   */
  @Get('groups/:groupId/apps/:appId/security/refresh_token_expiration')
  async refreshTokenExpiration(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object> {
    requireGroup(request, groupId);
    const app = await this.state.liveApp(await this.state.app(groupId, appId));
    return { expiration_time_seconds: app.settings.security?.refresh_token_expiration_seconds ?? this.settings.refreshTokenTtlSeconds };
  }

  /** Sets the app's refresh token lifetime: tokens issued from now on get it; those issued before keep theirs. */
  @Put('groups/:groupId/apps/:appId/security/refresh_token_expiration')
  @HttpCode(204)
  async setRefreshTokenExpiration(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    const seconds = parseRefreshTokenExpiration(body);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      app.settings.security = { ...app.settings.security, refresh_token_expiration_seconds: seconds };
    });
  }

  /** Every change through this API deploys at once and nothing deploys from GitHub: that is the configuration. */
  @Get('groups/:groupId/apps/:appId/deploy/config')
  async deploymentConfig(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object> {
    requireGroup(request, groupId);
    await this.state.app(groupId, appId);
    return { ui_drafts_disabled: true, automatic_deployment: { enabled: false, provider: 'github', installation_ids: [] } };
  }

  /** Accepts what Tessera does already; refuses drafts for UI changes and automatic deployment. */
  @Patch('groups/:groupId/apps/:appId/deploy/config')
  @HttpCode(204)
  async configureDeployment(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    parseDeploymentConfig(body);
    await this.state.app(groupId, appId);
  }

  /** Deploys again, as a new deployment, the configuration an earlier one made live (hosted files and secrets stay as they are). */
  @Post('groups/:groupId/apps/:appId/deployments/:deploymentId/redeploy')
  @HttpCode(204)
  async redeploy(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('deploymentId') deploymentId: string): Promise<void> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const files = await this.deployments.files(record._id, deploymentId);
    if (!files) throw new AdminApiError(AdminApiErrorCode.DeploymentNotFound, 'deployment not found');
    await this.state.deploy(record, files, 'import', request.admin?._id);
  }

  @Get('provider_regions')
  providerRegions(): readonly CloudProviderRegion[] {
    return PROVIDER_REGIONS;
  }
}

