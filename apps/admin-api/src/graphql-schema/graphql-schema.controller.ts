import { Controller, Get, Header, Param, UseGuards } from '@nestjs/common';
import { TesseraError } from '@tessera/domain';
import { printGraphqlSdl } from '@tessera/graphql-schema';
import { AdminAuthGuard } from '../auth/admin-auth.guard';
import { AppStateService } from '../deploy/app-state.service';

/** The generated schema cannot be built (a custom resolver names an unknown type, ...). */
export class GraphqlSchemaError extends TesseraError {
  readonly errorCode = 'InvalidGraphQLSchema';
  readonly httpStatus = 400;
}

/**
 * `GET .../apps/<app>/graphql/schema`: the SDL the client GraphQL endpoint serves for the app's live
 * deployment, types and members sorted, so two deployments can be diffed.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/graphql')
@UseGuards(AdminAuthGuard)
export class GraphqlSchemaController {
  constructor(private readonly state: AppStateService) {}

  @Get('schema')
  @Header('content-type', 'text/plain; charset=utf-8')
  async schema(@Param('groupId') groupId: string, @Param('appId') appId: string): Promise<string> {
    const app = await this.state.liveApp(await this.state.app(groupId, appId));
    try {
      return printGraphqlSdl(app);
    } catch (error) {
      throw new GraphqlSchemaError(`cannot generate the GraphQL schema: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
