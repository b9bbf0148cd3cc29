import { Controller, Logger } from '@nestjs/common';
import { AppRegistry } from '@tessera/platform';
import { type CommandRequest, type CommandResponseInput, Subjects } from '@tessera/contracts';
import { CommandHandler, type MessageContext, propagationHeaders } from '@tessera/messaging';
import { AppStateService } from '../deploy/app-state.service';
import { applyDevelopmentSchemas, type GeneratedSchemas } from './development-schemas';

/**
 * Development mode over the bus: the sync service sends the object types a client declared that the app's
 * schema lacks, and they become collection schemas in a new deployment, the same edit as
 * `POST .../sync/development_schemas` (one admin-api replica answers).
 */
@Controller()
export class DevelopmentSchemaHandler {
  private readonly logger = new Logger('AdminApi');

  constructor(
    private readonly apps: AppRegistry,
    private readonly state: AppStateService,
  ) {}

  @CommandHandler(Subjects.AppsDevelopmentSchemaApply)
  async apply(request: CommandRequest<typeof Subjects.AppsDevelopmentSchemaApply>, context: MessageContext): Promise<CommandResponseInput<typeof Subjects.AppsDevelopmentSchemaApply>> {
    let result: GeneratedSchemas = { created: [], extended: [] };
    await this.state.edit(
      await this.apps.get(request.appId),
      undefined,
      (app) => {
        result = applyDevelopmentSchemas(app, request.types);
      },
      propagationHeaders(context),
    );
    this.logger.log({ appId: request.appId, ...result }, 'development mode: schemas of a sync client deployed');
    return result;
  }
}
