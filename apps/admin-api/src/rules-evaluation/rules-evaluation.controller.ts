import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { encodeEjson } from '@tessera/messaging';
import { AdminAuthGuard } from '../auth/admin-auth.guard';
import { RulesEvaluationService } from './rules-evaluation.service';

/** `POST .../apps/<app>/rules/evaluate`: explain a rule decision. */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/rules')
@UseGuards(AdminAuthGuard)
export class RulesEvaluationController {
  constructor(private readonly evaluation: RulesEvaluationService) {}

  @Post('evaluate')
  @HttpCode(200)
  async evaluate(@Param('appId') appId: string, @Body() body: unknown): Promise<unknown> {
    return encodeEjson(await this.evaluation.evaluate(appId, body));
  }
}
