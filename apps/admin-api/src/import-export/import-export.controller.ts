import { Body, Controller, Get, Headers, HttpCode, Param, Patch, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { ConfigViolation } from '@tessera/app-config';
import type { FastifyReply } from 'fastify';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { unzipFiles, zipFiles } from '../common/zip';
import { AppStateService } from '../deploy/app-state.service';
import { ImportExportService } from './import-export.service';

/** Export, pull, push and import of whole apps. */
/** The longest name a push may give its deployment (it is shown in lists, the console and the CLI). */
const DEPLOYMENT_NAME_MAX = 200;

/** A deployment name as given: one string, not blank, not too long, no control characters to spoil a terminal. */
function isDeploymentName(value: unknown): value is string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > DEPLOYMENT_NAME_MAX) return false;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return false;
  }
  return true;
}

@Controller('api/admin/v3.0/groups/:groupId/apps/:appId')
@UseGuards(AdminAuthGuard)
export class ImportExportController {
  constructor(
    private readonly service: ImportExportService,
    private readonly state: AppStateService,
  ) {}

  /** realm-cli's `pull`/`app create`: the 20210101 export layout as a zip. */
  @Get('export')
  async export(@Req() request: AdminRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('source_control') sourceControl: string | undefined, @Query('template') template: string | undefined): Promise<Buffer> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const files = await this.service.exportFiles(record, sourceControl === 'true' || template === 'true');
    void reply.header('content-type', 'application/zip').header('content-disposition', `attachment; filename=${this.service.exportName(record, files)}`);
    return Buffer.from(zipFiles(files));
  }

  /** The live configuration in the current layout, as a zip (the tessera CLI's `pull`). */
  @Get('pull')
  async pull(@Req() request: AdminRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('include_hosting') includeHosting: string | undefined): Promise<Buffer> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const files = await this.service.pullFiles(record, includeHosting === 'true');
    void reply.header('content-type', 'application/zip').header('content-disposition', `attachment; filename=${this.service.exportName(record, files)}`);
    return Buffer.from(zipFiles(files));
  }

  /**
   * Replaces the app's configuration with a zipped app directory in any layout. `dry_run=true` answers
   * 200 with the diff and the warnings and changes nothing; otherwise 204 once the new configuration is live.
   * `deployment_name` names the deployment (the App Services CLI's `push --deployment-name`).
   */
  @Patch('push')
  async push(@Req() request: AdminRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('dry_run') dryRun: string | undefined, @Query('deployment_name') deploymentName: string | undefined, @Body() body: unknown): Promise<{ diffs: string[]; warnings: ConfigViolation[] } | undefined> {
    requireGroup(request, groupId);
    if (deploymentName !== undefined && !isDeploymentName(deploymentName)) {
      throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `deployment_name must be one name of 1 to ${DEPLOYMENT_NAME_MAX} characters, without control characters`);
    }
    const record = await this.state.app(groupId, appId);
    if (!Buffer.isBuffer(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'push takes a zip of the app directory with Content-Type: application/zip');
    const files = unzipFiles(body);
    if (dryRun === 'true') {
      void reply.status(200);
      return this.service.preview(record, files);
    }
    await this.service.push(record, files, request.admin?._id, deploymentName?.trim());
    void reply.status(204);
    return undefined;
  }

  /** realm-cli's push: AppData JSON. `diff=true`: 200 with the diff strings; otherwise 204. */
  @Post('import')
  async import(@Req() request: AdminRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('diff') diff: string | undefined, @Headers('content-type') contentType: string | undefined, @Body() body: unknown): Promise<string[] | undefined> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const files = Buffer.isBuffer(body) || contentType?.startsWith('application/zip') ? unzipFiles(body as Buffer) : this.service.importAppData(body);
    if (diff === 'true') {
      void reply.status(200);
      return this.service.diff(record, files);
    }
    await this.service.import(record, files, request.admin?._id);
    void reply.status(204);
    return undefined;
  }

  @Get('deployments')
  async deployments(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object[]> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    return (await this.service.deploymentsOf(record)).map((deployment) => toDeployment(deployment, record.name));
  }

  @Get('deployments/:deploymentId')
  @HttpCode(200)
  async deployment(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('deploymentId') deploymentId: string): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const found = (await this.service.deploymentsOf(record)).find((deployment) => deployment._id === deploymentId);
    if (!found) throw new AdminApiError(AdminApiErrorCode.DeploymentNotFound, `deployment not found: '${deploymentId}'`);
    return toDeployment(found, record.name);
  }
}

export function toDeployment(deployment: { _id: string; app_id: string; version: number; deployed_at: number; origin: string; status: string; user_id?: string; name?: string }, appName: string): object {
  return {
    _id: deployment._id,
    name: deployment.name ?? `${appName}-${deployment.version}`,
    app_id: deployment.app_id,
    version: deployment.version,
    user_id: deployment.user_id ?? '',
    deployed_at: deployment.deployed_at,
    origin: deployment.origin,
    status: deployment.status,
    status_error_message: '',
  };
}
