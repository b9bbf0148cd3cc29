import { Body, Controller, Get, HttpCode, Param, Patch, Post, Req, UseGuards } from '@nestjs/common';
import { type AppConfig, DATA_API_CONFIG_FILE, DATA_API_VERSIONS, type DataApiConfig, dataApiConfigOf, dataApiConfigProblems, withDataApiDefaults } from '@tessera/app-config';
import { SecretStore } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

/** The fields App Services' `DataApiConfig` requires when the Data API is enabled (POST). */
const REQUIRED = ['disabled', 'versions', 'return_type', 'validation_method'] as const;

/**
 * `.../data_api/config` and `.../data_api/versions` (admin OpenAPI `adminGetDataApiConfig`,
 * `adminCreateDataApiConfig`, `adminModifyDataApiConfig`, `adminGetDataApiVersions`): the Data API's
 * configuration lives in http_endpoints/data_api_config.json, so each change is a validated deployment of
 * the whole app, as an edit of the exported file would be, and export and pull carry it.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/data_api')
@UseGuards(AdminAuthGuard)
export class DataApiConfigController {
  constructor(
    private readonly state: AppStateService,
    private readonly secrets: SecretStore,
  ) {}

  /** The configuration, or null when the Data API was never enabled. */
  @Get('config')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<DataApiConfig | null> {
    requireGroup(request, groupId);
    return current(await this.state.liveApp(await this.state.app(groupId, appId))) ?? null;
  }

  /** Enables the Data API with a whole configuration (replacing one that exists). */
  @Post('config')
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<DataApiConfig> {
    requireGroup(request, groupId);
    const given = objectBody(body);
    const missing = REQUIRED.filter((field) => given[field] === undefined);
    if (missing.length > 0) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `the Data API configuration needs ${missing.join(', ')}`);
    return this.save(groupId, appId, request, () => given);
  }

  /** Changes the fields the body names; the others keep their values. */
  @Patch('config')
  @HttpCode(204)
  async modify(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    requireGroup(request, groupId);
    const given = objectBody(body);
    await this.save(groupId, appId, request, (app) => {
      const existing = current(app);
      if (!existing) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'the Data API is not enabled for this app: create its configuration with POST first');
      return { ...existing, ...given };
    });
  }

  @Get('versions')
  versions(@Req() request: AdminRequest, @Param('groupId') groupId: string): string[] {
    requireGroup(request, groupId);
    return [...DATA_API_VERSIONS];
  }

  private async save(groupId: string, appId: string, request: AdminRequest, next: (app: AppConfig) => Record<string, unknown>): Promise<DataApiConfig> {
    const record = await this.state.app(groupId, appId);
    const secretNames = new Set((await this.secrets.list(record._id)).map((secret) => secret.name));
    let saved: DataApiConfig | undefined;
    await this.state.edit(record, request.admin?._id, (app) => {
      const value = next(app);
      const problems = dataApiConfigProblems(value);
      if (problems.length > 0) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, problems.map((problem) => problem.message).join('; '));
      const config = withDataApiDefaults(value);
      const fileSecrets = (app.secrets as { values?: Record<string, unknown> } | undefined)?.values ?? {};
      if (config.secret_name !== '' && !secretNames.has(config.secret_name) && !(config.secret_name in fileSecrets)) {
        throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `secret not found: '${config.secret_name}'`);
      }
      app.extraFiles.set(DATA_API_CONFIG_FILE, new TextEncoder().encode(`${JSON.stringify(config, null, 4)}\n`));
      saved = config;
    });
    return saved as DataApiConfig;
  }
}

/** The app's configuration as deployed; a deployed file that no longer reads is refused rather than guessed at. */
function current(app: AppConfig): DataApiConfig | undefined {
  const file = dataApiConfigOf(app);
  if (!file) return undefined;
  if ('invalid' in file) throw new AdminApiError(AdminApiErrorCode.InvalidConfiguration, file.invalid);
  return file.config;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the request body must be a Data API configuration object');
  return body as Record<string, unknown>;
}
