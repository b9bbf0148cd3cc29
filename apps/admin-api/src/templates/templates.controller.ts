import { Controller, Get, Param, Req, Res, UseGuards } from '@nestjs/common';
import { FileTemplateStore, type TemplateSummary } from '@tessera/platform';
import type { FastifyReply } from 'fastify';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { zipFiles } from '../common/zip';
import { AppStateService } from '../deploy/app-state.service';
import { presetClient } from './template-catalog';

/** Template apps (spec 2.12): the catalogue, an app's compatible templates and its preset client. */
@Controller('api/admin/v3.0')
@UseGuards(AdminAuthGuard)
export class TemplatesController {
  constructor(
    private readonly templates: FileTemplateStore,
    private readonly state: AppStateService,
  ) {}

  @Get('templates')
  list(): Promise<TemplateSummary[]> {
    return this.templates.list();
  }

  @Get('groups/:groupId/apps/:appId/templates')
  async compatible(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<TemplateSummary[]> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const template = record.template_id ? await this.templates.get(record.template_id) : undefined;
    return template ? [template] : [];
  }

  /** The template's client as a zip with the app id written in, or 204 when the template has no client. */
  @Get('groups/:groupId/apps/:appId/templates/:templateId/client')
  async client(@Req() request: AdminRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('templateId') templateId: string): Promise<Buffer | undefined> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const files = await this.templates.files(templateId);
    if (!files) throw new AdminApiError(AdminApiErrorCode.TemplateNotFound, `template '${templateId}' not found`);
    if (files.client.size === 0) {
      void reply.status(204);
      return undefined;
    }
    const client = presetClient(files.client, record.client_app_id, `${request.protocol}://${request.host}`);
    void reply.header('content-type', 'application/zip').header('content-disposition', `attachment; filename=${record.name}_client.zip`);
    return Buffer.from(zipFiles(client));
  }
}
