import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Put, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AppStateService } from '../deploy/app-state.service';
import { multipartBoundary, parseMultipart } from '../hosting/multipart';
import { DependenciesService, type DependenciesSummary } from './dependencies.service';
import { DependenciesError, DependenciesErrorCode } from './dependencies.exception';

/**
 * `/groups/{groupId}/apps/{appId}/dependencies`: App Services' function dependencies as realm-cli calls
 * them: upload (PUT, multipart `file`: a zip, tar or tar.gz of node_modules, with package.json beside it
 * or not), the summary, the status realm-cli polls, the uploaded archive, and removal.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/dependencies')
@UseGuards(AdminAuthGuard)
export class DependenciesController {
  constructor(
    private readonly dependencies: DependenciesService,
    private readonly state: AppStateService,
  ) {}

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<DependenciesSummary> {
    return this.dependencies.summary(await this.app(request, groupId, appId));
  }

  @Put()
  @HttpCode(204)
  async upload(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Headers('content-type') contentType: string | undefined, @Body() body: unknown): Promise<void> {
    const record = await this.app(request, groupId, appId);
    const boundary = multipartBoundary(contentType);
    const file = boundary && Buffer.isBuffer(body) ? parseMultipart(body, boundary)?.find((part) => part.name === 'file') : undefined;
    if (!file) throw new DependenciesError(DependenciesErrorCode.InvalidArchive, 'upload the dependencies as multipart/form-data with a "file" part holding a zip, tar or tar.gz of node_modules');
    const name = /filename="([^"]*)"/.exec(file.headers['content-disposition'] ?? '')?.[1] ?? 'node_modules.zip';
    await this.dependencies.upload(record, file.body, name, request.admin?._id);
  }

  @Get('status')
  async status(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<{ status: string; status_message: string }> {
    return this.dependencies.status(await this.app(request, groupId, appId));
  }

  @Get('archive')
  async archive(@Req() request: AdminRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<Buffer> {
    const found = await this.dependencies.archive(await this.app(request, groupId, appId));
    const name = found.name.replace(/[^\w.-]/g, '_') || 'node_modules.zip';
    void reply.header('content-type', 'application/octet-stream').header('content-disposition', `attachment; filename=${name}`);
    return Buffer.from(found.bytes);
  }

  @Delete()
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<void> {
    await this.dependencies.remove(await this.app(request, groupId, appId), request.admin?._id);
  }

  private async app(request: AdminRequest, groupId: string, appId: string) {
    requireGroup(request, groupId);
    return this.state.app(groupId, appId);
  }
}
