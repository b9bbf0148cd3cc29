import { Body, Controller, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { encodeEjson } from '@tessera/messaging';
import { requireGroup } from '../apps/apps.controller';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { AppStateService } from '../deploy/app-state.service';
import { RulesEvaluationService } from './rules-evaluation.service';

/** `POST .../apps/<app>/rules/evaluate`: explain a rule decision, for an admin of the app's group only. */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/rules')
@UseGuards(AdminAuthGuard)
export class RulesEvaluationController {
  constructor(
    private readonly evaluation: RulesEvaluationService,
    private readonly state: AppStateService,
  ) {}

  @Post('evaluate')
  @HttpCode(200)
  async evaluate(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<unknown> {
    // The rules may call the app's functions as system (`%function`): an admin of another group, or a
    // group that does not hold the app, gets the same answer as for an app that does not exist.
    requireGroup(request, groupId);
    await this.state.app(groupId, appId);
    return encodeEjson(await this.evaluation.evaluate(appId, body));
  }
}
