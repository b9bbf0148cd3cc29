import { Controller, Delete, Get, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { DraftStore, type DraftRecord } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AppStateService } from '../deploy/app-state.service';
import { ImportExportService } from '../import-export/import-export.service';
import { toDeployment } from '../import-export/import-export.controller';

/** Drafts: imports are staged into the open draft and go live together when it is deployed. */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/drafts')
@UseGuards(AdminAuthGuard)
export class DraftsController {
  constructor(
    private readonly drafts: DraftStore,
    private readonly state: AppStateService,
    private readonly importExport: ImportExportService,
  ) {}

  @Post()
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<DraftRecord> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    return this.drafts.create(record._id, request.admin?._id ?? '');
  }

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<DraftRecord[]> {
    requireGroup(request, groupId);
    const draft = await this.drafts.get((await this.state.app(groupId, appId))._id);
    return draft ? [draft] : [];
  }

  @Get(':draftId/diff')
  async diff(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('draftId') draftId: string): Promise<object> {
    requireGroup(request, groupId);
    const diffs = await this.importExport.draftDiff(await this.state.app(groupId, appId), draftId);
    return {
      diffs,
      hosting_files_diff: { added: [], deleted: [], modified: [] },
      dependencies_diff: { added: [], deleted: [], modified: [] },
      graphql_config_diff: { field_diffs: [] },
      schema_options_diff: { graphql_validation_diff: null, rest_validation_diff: null },
    };
  }

  @Delete(':draftId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('draftId') draftId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.drafts.remove((await this.state.app(groupId, appId))._id, draftId);
  }

  @Post(':draftId/deployment')
  @HttpCode(201)
  async deploy(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('draftId') draftId: string): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const deployment = await this.importExport.deployDraft(record, draftId, request.admin?._id);
    return { ...toDeployment(deployment, record.name), draft_id: draftId };
  }
}
