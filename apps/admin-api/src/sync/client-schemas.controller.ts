import { Controller, Get, Param, Req, UseGuards } from '@nestjs/common';
import { DATA_MODEL_LANGUAGES, type DataModel, generateDataModels, isDataModelLanguage } from '@tessera/app-config';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

/**
 * `GET .../apps/<app>/sync/client_schemas/<language>`: Realm SDK object models generated from the collection
 * schemas of the app's live deployment, as realm-cli's `schema datamodels` asks for them.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/sync/client_schemas')
@UseGuards(AdminAuthGuard)
export class ClientSchemasController {
  constructor(private readonly state: AppStateService) {}

  @Get(':language')
  async models(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('language') language: string): Promise<DataModel[]> {
    requireGroup(request, groupId);
    if (!isDataModelLanguage(language)) {
      throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `unsupported language '${language}': expected one of ${DATA_MODEL_LANGUAGES.join(', ')}`);
    }
    return generateDataModels(await this.state.liveApp(await this.state.app(groupId, appId)), language);
  }
}
